#pragma once

// `pipewright profile`: what each layer and each transfer really costs on this
// machine, written as the Profile that `simulate --profile` and `plan
// --profile` read. Torch headers stay out of here so that the CLI compiles
// without them.

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "pipewright/core/analysis.h"
#include "pipewright/core/profile.h"

namespace pipewright::backend {

struct ProfileOptions {
    std::string project;
    std::optional<int> microbatches;  // replace the project's training settings
    std::optional<int> batch_size;
    std::string device = "auto";  // auto, cpu, cuda
    int threads = 0;              // Torch threads; 0: cores / ranks, what a rank of a run gets
    int repeats = 10;             // timed repetitions per layer (the median is kept)
    int warmup = 2;               // untimed repetitions first
    // Micro-batch sizes to time the layers at besides the project's own
    // (which is always measured); empty: default_profile_sizes() (core).
    std::vector<int> sizes;
    // Ranks computing at once while the layers are timed (the timed one
    // included); 0: the run's ranks on this machine on CPUs, 1 on GPUs (each
    // rank has its own).
    int concurrent_ranks = 0;
    bool measure_transfer = true;
    double timeout_s = 60;  // bound on every c10d wait of the transfer measurement
    // The program that plays the transfer measurement's second rank
    // (`pipewright-backend`); empty: this process's own program.
    std::string backend_program;
    // Progress as JSON lines on stderr instead of text (`--progress json`):
    // {"event":"profile","phase":"layers","size":2,"sizes":3,"round":4,"rounds":12},
    // then phases "transfer" and "collectives".
    bool json_progress = false;
};

// How layers are timed, for callers that already hold an analysed project.
struct LayerTimingOptions {
    int repeats = 10;
    int warmup = 2;
    std::string dtype;           // "" = the project's; "float32" or "float64"
    std::string device = "cpu";  // "cpu" or "cuda" (the first GPU)
    int microbatch_size = 0;     // samples per micro-batch; 0: the project's
    // Ranks computing at once, the timed one included: the others run the
    // same layers in threads of their own while it is timed, as a run's
    // ranks share the machine. 1: timed alone.
    int concurrent_ranks = 1;
    // Called before each round over all layers (index, rounds, warm-up
    // rounds first), e.g. for progress.
    std::function<void(int, int)> on_round;
};

// Times forward, input-gradient and weight-gradient of every layer at the
// micro-batch size of `options` with the calling process's Torch threads
// (medians over `repeats` rounds, each visiting every layer). The backward is split as the
// zero-bubble executor splits it: the input gradient with the graph retained, then the parameter
// gradients from the same graph. The first layer's input gradient is 0: the
// data needs none, so no run ever computes it. Activation bytes are core's
// per-micro-batch stash for the layer. Throws BackendError for a layer the
// backend cannot build.
[[nodiscard]] std::vector<LayerProfile> measure_layers(const AnalyzedProject& project,
                                                       const LayerTimingOptions& options);

struct TransferFit {
    LinkSpec link;  // latency = intercept, bandwidth = 1 / slope
    std::vector<TransferSample> samples;
    // The median receive whose message had already come in (Profile's
    // ready_receive_us); measure_transfer only.
    std::optional<double> ready_receive_us;
};

// Least-squares fit of seconds = latency + bytes / bandwidth. The intercept
// is clamped at zero and the slope at a tiny positive value, so the result is
// always a usable link. Throws std::invalid_argument for fewer than two sizes.
[[nodiscard]] TransferFit fit_transfer(std::vector<TransferSample> samples);

// From 4 KiB (where latency dominates) to 4 MiB (where bandwidth does).
[[nodiscard]] std::vector<std::int64_t> default_transfer_sizes();

struct TransferOptions {
    std::vector<std::int64_t> message_bytes;  // sizes to time; empty: default_transfer_sizes()
    int repeats = 20;
    double timeout_s = 60;
    std::string host = "127.0.0.1";
    // The program that plays the second rank (`pipewright-backend`, run as
    // `transfer-peer`); empty: this process's own program.
    std::string peer_program;
};

// Latency and bandwidth between two ranks over the real transport, as a
// run's two CPU ranks on one machine: this process plays rank 0 and a second
// one rank 1 (each on a core of its own where the machine has them and is
// quiet, Gloo's threads as batch work beside them, see run/core_binding.h);
// they meet in a private c10d FileStore. Rank 1 posts its receive and waits;
// rank 0 sends a fresh float32 tensor of every size `repeats` times, and the
// time from posting to arrival is measured (medians kept), on the clock the
// machine's processes share. Throws BackendError when the second process
// fails.
[[nodiscard]] TransferFit measure_transfer(const TransferOptions& options);

// The command word that makes `pipewright-backend` that second process
// (`pipewright-backend transfer-peer ARGS`, written by measure_transfer
// only), and its main: returns the process's exit code.
inline constexpr const char* transfer_peer_command = "transfer-peer";
[[nodiscard]] int run_transfer_peer(const std::vector<std::string>& args, std::ostream& err);

// From 64 KiB to 16 MiB: a DDP bucket (25 MiB) and less.
[[nodiscard]] std::vector<std::int64_t> default_collective_sizes();

struct CollectiveFits {
    CollectiveProfile all_reduce;
    CollectiveProfile all_gather;
};

// The links that make the ring formulas with two members (collective_cost.h)
// give these times: all-reduce 2α + bytes / B, all-gather α + bytes / 2B, with
// bytes the whole buffer each rank ends with. Throws std::invalid_argument
// for fewer than two sizes of either.
[[nodiscard]] CollectiveFits fit_collectives(std::vector<TransferSample> all_reduce,
                                             std::vector<TransferSample> all_gather);

// All-reduce and all-gather between two ranks over the real transport: two
// threads, each in a Gloo group of two on `host` (as a run's replicas average
// their gradients), timed at each size (message_bytes: the whole buffer;
// empty: default_collective_sizes()).
[[nodiscard]] CollectiveFits measure_collectives(const TransferOptions& options);

struct ProfileOutcome {
    int exit_code = 1;  // 0 success, 1 invalid input or failure
    std::optional<Profile> profile;
};

// The whole measurement: loads the project (problems go to `err`), checks the
// device, sets the threads, times layers and the transfer. Progress goes to
// `err` as readable lines.
[[nodiscard]] ProfileOutcome profile_project(const ProfileOptions& options, std::ostream& err);

}  // namespace pipewright::backend
