#pragma once

// The torch-free face of the backend: what the command line calls. Torch
// headers stay out of here so that the CLI compiles without them.

#include <optional>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "pipewright/core/analysis.h"
#include "pipewright/core/launch_environment.h"
#include "pipewright/core/run_records.h"

namespace pipewright::backend {

// What launcher and workers agree on (the launcher passes it on).
struct RunSettings {
    std::string project;
    std::optional<std::string> schedule;
    std::optional<std::string> schedule_csv;
    // zb-auto's costs (auto_costs_text), which the front end computes with
    // its cost model so that the run builds the lists `simulate` shows.
    std::optional<std::string> schedule_costs;
    std::optional<int> microbatches;
    std::optional<int> batch_size;       // the global batch, split across the replicas
    std::optional<int> data_parallel;    // replaces data_parallel.size
    std::optional<int> tensor_parallel;  // replaces tensor_parallel.size
    std::optional<int> expert_parallel;  // replaces expert_parallel.size
    std::optional<int> steps;            // replaces training.steps
    std::string dtype;                   // "" = the project's; "float64" for exact tests
    std::string data_dir;                // "" = the synthetic task; else inputs.pt, targets.pt
    double timeout_s = 60;               // bound on every c10d wait
    bool save_params = false;            // write each stage's parameters (tests)
    bool stop_on_nan = false;            // end after the first step with a non-finite loss
    // Checkpoints (checkpoint.h): saved every `checkpoint_every` steps (0:
    // never) into `checkpoint_dir` (the launcher makes it absolute; default
    // checkpoints/ in the run folder). `resume_from`: the user's --resume
    // (a folder of checkpoints or one of them); the launcher hands the
    // workers the checkpoint folder it chose and checked.
    int checkpoint_every = 0;
    std::string checkpoint_dir;
    std::string resume_from;

    bool operator==(const RunSettings&) const = default;
};

// The exit status of a run that --stop-on-nan ended after a step whose loss
// was not finite: every output is written, its summary printed.
inline constexpr int kExitStoppedOnNan = 3;

// Torch threads a rank gets unless told: this machine's cores shared among
// the ranks it runs, at least one.
[[nodiscard]] int default_threads_per_rank(int ranks_on_this_machine);

// Whether CPU ranks run on cores of their own (each rank's threads bound to
// its share of this machine's cores, when they fit): automatic binds them
// when no other work keeps the machine busy at the start; on binds them
// whenever they fit; off leaves them to the operating system.
enum class CoreBinding { automatic, on, off };

struct RunOptions {
    RunSettings settings;
    int warmup = 1;
    std::optional<std::string> out_dir;
    bool overwrite = false;  // replace the run in a non-empty out_dir
    std::optional<int> port;
    std::optional<std::string> master;  // HOST:PORT of the rendezvous store
    int threads_per_rank = 0;           // 0: cores / ranks of this node
    CoreBinding core_binding = CoreBinding::automatic;
    // Multi-node, as torchrun: this launcher starts only its node's ranks.
    int nnodes = 1;
    int node_rank = 0;
    std::optional<int> nproc_per_node;  // default: ranks / nnodes
    std::string device = "auto";
    bool json = false;
    bool progress_json = false;
    // Set when torchrun or Slurm assigned this process its rank: it runs that
    // one rank as node `rank` of `world_size` (nnodes and node_rank say so
    // too), and its ranks other than 0 write in a folder of their own.
    std::optional<EnvironmentLaunch> environment;
    // The job was restarted ("TORCHELASTIC_RESTART_COUNT=1"; "" when not):
    // the run resumes from --checkpoint-dir's newest checkpoint if it has
    // one, and replaces the earlier attempt's outputs in --out.
    std::string restarted;
};

struct WorkerOptions {
    RunSettings settings;
    int rank = 0;
    int world_size = 1;
    std::string master;      // HOST:PORT of a TCP rendezvous store, or
    std::string store_file;  // the file of a run's private store (one machine)
    std::string out_dir;
    int threads = 0;             // 0: this machine's cores shared by its ranks of the run
    std::string device = "cpu";  // "cpu" or "cuda", as the launcher resolved --device
    int local_rank = 0;          // position among this machine's ranks: its GPU
    std::string store_prefix;    // keys under this prefix of a store shared with torchrun
    bool bind_cores = false;     // a CPU rank on cores of its own when the machine has enough

    bool operator==(const WorkerOptions&) const = default;
};

// The job was restarted, as torchrun (TORCHELASTIC_RESTART_COUNT) or Slurm
// (SLURM_RESTART_COUNT) say: "TORCHELASTIC_RESTART_COUNT=1", or "" when not.
[[nodiscard]] std::string restart_from_environment();

// Loads and analyses the project with the settings' overrides. On failure
// returns nullopt after writing every problem to `err`. For training it also
// refuses what real runs do not implement (ZeRO stages 2 and 3); `profile`
// only needs the layers and the micro-batch size, which those do not change.
enum class LoadPurpose { train, profile };
[[nodiscard]] std::optional<AnalyzedProject> load_for_run(const RunSettings& settings,
                                                          std::ostream& err,
                                                          LoadPurpose purpose = LoadPurpose::train);

// The ranks one node of a multi-node run starts: `count` ranks from `first`,
// in rank order. Throws std::invalid_argument naming the problem (ranks that
// do not split evenly, a node rank out of range, a --nproc-per-node that does
// not add up to the project's devices).
struct NodeRanks {
    int first = 0;
    int count = 0;
};
[[nodiscard]] NodeRanks node_ranks(int world, int nnodes, int node_rank,
                                   std::optional<int> nproc_per_node);

struct RunOutcome {
    int exit_code = 1;   // 0 success, 1 failure, 130 interrupted, kExitStoppedOnNan
    RunSummary summary;  // on success: what `run --json` prints
    std::string out_dir;
};

// `pipewright run`: one worker process per rank of this node, progress on
// `err` (and in run.log), outputs in the run folder. Node 0 writes the
// complete outputs, gathered from every node through the rendezvous store;
// other nodes write their run.log, their ranks' records and summary.json.
[[nodiscard]] RunOutcome launch_run(const RunOptions& options, std::ostream& err);

// `pipewright worker` (internal): one rank of a run.
int run_worker(const WorkerOptions& options, std::ostream& err);

}  // namespace pipewright::backend
