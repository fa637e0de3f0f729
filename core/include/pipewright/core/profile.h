#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipewright/core/topology.h"

namespace pipewright {

// A layer's times at one micro-batch size other than the profile's own.
struct LayerTimesAtSize {
    int microbatch_size = 1;
    double forward_ms = 0;
    double backward_input_ms = 0;
    double backward_weight_ms = 0;
    std::optional<double> backward_ms = std::nullopt;

    bool operator==(const LayerTimesAtSize&) const = default;
};

// Costs measured on a real machine (by `pipewright profile`), which replace
// the analytic estimates layer by layer.
struct LayerProfile {
    std::string name;
    double forward_ms = 0;
    double backward_input_ms = 0;
    double backward_weight_ms = 0;
    std::optional<std::int64_t> activation_bytes;  // per micro-batch
    // The whole backward in one autograd pass, as schedules without split
    // backward run it (B); when absent, B costs input + weight gradient.
    // (Last, with initialisers, so that {name, f, i, w, bytes} still works.)
    std::optional<double> backward_ms = std::nullopt;
    // Zeroing the gradients and one optimizer step over the layer's
    // parameters: once per iteration, not per micro-batch.
    std::optional<double> optimizer_ms = std::nullopt;
    // What was measured: the layer's parameters and its output per sample,
    // so that a profile of a layer of the same name and other sizes is
    // recognised (absent from older profiles).
    std::optional<std::int64_t> parameters = std::nullopt;
    std::optional<std::vector<std::int64_t>> output_shape = std::nullopt;
    // The same times at the other micro-batch sizes measured (ascending; the
    // top-level figures are those at Profile::microbatch_size). A layer's
    // time is not proportional to the samples: a small micro-batch runs
    // less efficiently, so it is measured rather than scaled down.
    std::vector<LayerTimesAtSize> other_sizes = {};

    // The times at the profile's own size, in the form of the others.
    [[nodiscard]] LayerTimesAtSize at_profile_size(int profile_microbatch_size) const;
    bool operator==(const LayerProfile&) const = default;
};

// One point of a transfer measurement: the median one-way time of a message
// of `bytes` between two ranks.
struct TransferSample {
    double bytes = 0;
    double seconds = 0;

    bool operator==(const TransferSample&) const = default;
};

// A collective measured between two ranks over the run's transport: the
// median time per size (bytes: the whole buffer each rank ends with) and the
// link that the ring formula with two members (docs/simulator.md) turns into
// those times, which the simulator then prices every group's collective with.
struct CollectiveProfile {
    LinkSpec link;
    std::vector<TransferSample> samples;

    bool operator==(const CollectiveProfile&) const = default;
};

// Where and how a profile was measured. Everything is optional in the file
// (older profiles lack it); it explains the figures, the simulator does not
// need it.
struct ProfileMachine {
    std::string host;       // hostname
    int cores = 0;          // hardware threads of the machine
    int threads = 0;        // Torch threads the layers ran with (a rank's share)
    int repeats = 0;        // timed repetitions per layer (medians kept)
    std::string transport;  // what carried the transfer measurement, e.g. "gloo"
    std::string torch_version;
    // Ranks that computed at once while the layers were timed (the timed one
    // included), as a run's ranks share the machine; 0: not recorded.
    int concurrent_ranks = 0;

    bool operator==(const ProfileMachine&) const = default;
};

struct Profile {
    static constexpr const char* kFormat = "pipewright-profile";
    static constexpr int kVersion = 1;

    std::string device_kind;  // "cpu", "cuda"
    std::string device_name;  // what the machine reported
    int microbatch_size = 1;  // the layer times were measured at this size
    std::vector<LayerProfile> layers;
    std::optional<LinkSpec> transfer;              // measured between two ranks
    std::vector<TransferSample> transfer_samples;  // what the transfer was fitted to
    // Microseconds a rank spends on a receive whose message has already
    // come in: as a run takes it, posting the next receive of the channel
    // and taking the tensor (measured with the transfer; absent from older
    // profiles). A link's fit does not include it: there the rank waits.
    std::optional<double> ready_receive_us;
    // Gradient averaging and the gathering of updated weight shards, as data
    // parallelism runs them (absent from older profiles and GPU profiles).
    std::optional<CollectiveProfile> all_reduce;
    std::optional<CollectiveProfile> all_gather;
    ProfileMachine machine;

    [[nodiscard]] const LayerProfile* find(const std::string& layer) const;
    // Every micro-batch size some layer was measured at, ascending.
    [[nodiscard]] std::vector<int> measured_sizes() const;
    bool operator==(const Profile&) const = default;
};

// A measured layer's times at `microbatch_size` samples: linear between the
// two nearest sizes measured; outside them, along the line through the two
// nearest, kept between proportional scaling and the nearest measurement
// (a single size scales proportionally).
[[nodiscard]] LayerTimesAtSize layer_times_at(const Profile& profile, const LayerProfile& layer,
                                              double microbatch_size);

// The micro-batch sizes `profile` measures by default for a project whose
// micro-batches hold `microbatch_size` samples and whose pipelines hold
// `largest` (the batch a pipeline runs, the largest micro-batch a plan can
// choose): 1, the powers of 4 below the size, the size, then 4, 16, ...
// times it below `largest`, and `largest` (16 of 64: 1, 4, 16, 64), so that
// a plan reads measured times at the sizes it may choose.
[[nodiscard]] std::vector<int> default_profile_sizes(int microbatch_size, int largest);

[[nodiscard]] nlohmann::json profile_to_json(const Profile& profile);
// Throws InputError naming the JSON path of each problem.
[[nodiscard]] Profile profile_from_json(const nlohmann::json& j);
// Throws InputError with every problem located in the file (parse_json_file).
[[nodiscard]] Profile load_profile_file(const std::filesystem::path& path);

}  // namespace pipewright
