#pragma once

#include <array>
#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <vector>

#include "pipewright/core/device_catalog.h"
#include "pipewright/core/project.h"
#include "pipewright/core/schedule_generators.h"
#include "pipewright/sim/cost_model.h"
#include "pipewright/sim/simulation.h"

namespace pipewright {

// The automatic planner (docs/planner.md): which devices carry the pipeline
// and in what order, which contiguous layers each stage holds, the schedule
// and the micro-batch count, chosen for the shortest simulated iteration with
// every device within its memory.

struct PlanStatistics {
    int split_searches = 0;  // DP runs (one per device sequence, stage count, micro-batch count)
    int simulations = 0;
    // Data-parallel layouts left out because a floor under their iteration
    // was above a layout already found.
    int bounded = 0;
    // Analyses of the whole topology (every device's path and figures) in a
    // search over layouts: one, after which each layout is resolved on
    // device indices; more only for a layout the planner did not build.
    int topology_analyses = 0;
    double search_s = 0;   // choosing the candidates (device orders, tables, DP)
    double elapsed_s = 0;  // the whole plan, simulations included
};

struct PlanOptions {
    std::optional<std::string> schedule;  // fixes the schedule (any but a CSV one)
    std::optional<int> microbatches;      // fixes the micro-batch count
    // Data-parallel replicas: fixed at this count, or 0 to search every
    // count that divides the devices and the batch; unset: the project's.
    std::optional<int> data_parallel;
    // Devices of each stage's tensor-parallel group: fixed at this size, or
    // 0 to search every size that divides a container's devices (and the
    // model's dimensions); unset: the project's. Sequence parallelism with
    // it: set, or the project's.
    std::optional<int> tensor_parallel;
    std::optional<bool> sequence_parallel;
    // Replicas each mixture-of-experts block's experts are split over, and
    // replicas each sequence is split over: fixed at this size, or 0 to
    // search every size that divides the model (its experts; twice it the
    // sequence) and fits the replicas; unset: the project's.
    std::optional<int> expert_parallel;
    std::optional<int> context_parallel;
    CostModelOptions costs;
    const DeviceCatalog* catalog = nullptr;  // builtin when null
    // Folder that relative paths of the input project start from (its CSV schedule).
    std::filesystem::path base_dir;
    // How many of the best splits (by the DP's estimate) the simulator judges;
    // each is simulated with every schedule that applies to it.
    int simulated_splits = 6;
    // A plan on a large cluster takes seconds; an interactive caller that
    // no longer wants it asks it to stop here. Polled between split searches
    // and between simulations, so it stops within one of either.
    std::stop_token stop;
    // A search over data × tensor layouts asked to stop returns the best
    // layout planned so far (PlanResult::interrupted) instead of throwing
    // PlanCancelled, once it has one (`plan` on Ctrl-C).
    bool best_so_far_on_stop = false;
    // Called on the planning thread after each candidate is simulated, with
    // the statistics so far (a caller can show that the plan is moving).
    std::function<void(const PlanStatistics&)> on_progress;
    // Leave out data-parallel layouts that cannot beat one already found
    // (PlanStatistics::bounded); a comparison of every layout turns it off.
    bool bound_layouts = true;
    // A plan that recomputes every unit of its stages then tries the fewest
    // blocks at the start of each stage that fit (training.recompute_blocks),
    // or none, and keeps the faster (off: `plan --recompute-every-block`).
    bool fewest_recomputed_blocks = true;
};

// One stage: a contiguous run of layers on one device.
struct PlannedStage {
    std::string device;  // device path
    int first_layer = 0;
    int last_layer = 0;  // inclusive

    bool operator==(const PlannedStage&) const = default;
};

// A placement with a schedule and a micro-batch count, and how it simulates.
struct PlanOutcome {
    std::vector<PlannedStage> stages;
    std::string schedule;
    int microbatches = 0;
    // Empty when it cannot run; figures without a timeline (Recording::summary).
    std::optional<SimulationReport> report;
    std::string reason;  // why it cannot run
};

// One schedule the search simulated: the fastest of its candidates that
// fits, which says why the plan's schedule won.
struct ScheduleConsidered {
    std::string schedule;
    int simulated = 0;                  // candidates simulated with it
    std::optional<double> iteration_s;  // empty when none of them fits
};

// One layout the planner tried (a replica count, at one tensor-parallel
// size): its best form, or why none.
struct DataParallelOption {
    int replicas = 1;
    int tensor_parallel = 1;  // devices of each stage's group
    bool sequence_parallel = false;
    int expert_parallel = 1;   // replicas each block's experts are split over
    int context_parallel = 1;  // replicas each sequence is split over
    int zero_stage = 0;
    int stages = 0;  // of each replica's pipeline
    std::string schedule;
    int microbatches = 0;  // per replica
    // How many replicas of each stage sit on neighbouring devices (1: each
    // replica on a run of devices of its own; `replicas`: every stage's
    // replicas side by side), and that in words.
    int adjacent = 1;
    std::string layout;
    // Whether the layout recomputes the forward (training.activation_checkpointing),
    // which the search tries both ways.
    bool activation_checkpointing = false;
    std::optional<double> iteration_s;  // empty when nothing fits
    double throughput_samples_per_s = 0;
    // The fullest device of the layout: its peak and its capacity.
    double peak_memory_bytes = 0;
    double memory_capacity_bytes = 0;
    // The fastest iteration found at each ZeRO stage (empty: nothing fits).
    std::array<std::optional<double>, kMaxZeroStage + 1> by_zero_stage;
    std::string reason;  // why nothing fits, or why it was not planned
    // Set when it was not planned: a floor under its iteration (its work
    // spread evenly over its devices) above a layout already found.
    std::optional<double> floor_s;
    // The input project laid out so (when something fits), and how it
    // simulates (figures only): what a comparison of layouts shows and applies.
    std::optional<Project> project;
    std::optional<SimulationReport> report;
};

struct PlanResult {
    bool feasible = false;
    PlanOutcome plan;              // the fastest candidate that fits (when feasible)
    double bottleneck_s = 0;       // the DP's slowest stage of the plan (0 if the input won)
    Project project;               // the input project with the plan applied
    PlanOutcome input;             // the project as given (with the fixed schedule/micro-batches)
    PlanOutcome uniform;           // equal layer counts over all devices
    std::string why_nothing_fits;  // when !feasible: the tightest need and what would fit
    PlanStatistics statistics;
    // Stopped before every layout was planned (best_so_far_on_stop): the
    // plan is the best of those planned; the others say "not planned".
    bool interrupted = false;
    // Every schedule the search simulated, fastest first (those with nothing
    // that fits last).
    std::vector<ScheduleConsidered> schedules;
    // With data or tensor parallelism (replicas or groups > 1, or a search):
    // each replica count tried at each tensor-parallel size, and in words why
    // the plan's layout and ZeRO stage won.
    std::vector<DataParallelOption> data_parallel;
    std::string data_parallel_choice;
    // Tensor-parallel sizes a search left out, and why (the model cannot
    // split so): "2: model.layers[0] ...".
    std::vector<std::string> tensor_parallel_skipped;
    // Expert- and context-parallel sizes the search left out, and why.
    std::vector<std::string> expert_parallel_skipped;
    std::vector<std::string> context_parallel_skipped;
    // With PlanOptions::fewest_recomputed_blocks, what the plan recomputes
    // and why, in words ("the first 3 blocks of each stage, the fewest that
    // fit: ..."); empty when the plan recomputes nothing to begin with.
    std::string recomputation_choice;
};

// Thrown by plan_pipeline when PlanOptions::stop was requested.
class PlanCancelled : public std::runtime_error {
  public:
    PlanCancelled() : std::runtime_error("the plan was cancelled") {}
};

// Throws InputError when the model cannot be analysed or an option cannot be
// honoured (unknown schedule, micro-batches that do not divide the batch), and
// PlanCancelled when asked to stop. With data parallelism (the project's or
// PlanOptions::data_parallel), plans one replica's pipeline on the first
// devices for each replica count and lets the simulation of all replicas,
// at each ZeRO stage, choose (planner/data_parallel.cpp). With tensor
// parallelism, stages sit on the first device of each group of that many
// devices in a container; a search over sizes plans every replica count at
// every size.
[[nodiscard]] PlanResult plan_pipeline(const Project& project, const PlanOptions& options);
// The same for replica counts other than one (or a search): what
// plan_pipeline hands data-parallel plans to.
[[nodiscard]] PlanResult plan_data_parallel(const Project& project, const PlanOptions& options);
// The project cut down to its first `devices` devices in topology order
// (containers and nodes left empty dropped), with the links among them.
[[nodiscard]] Topology first_devices(const Topology& topology, int devices);
// The same for the devices at `indices` (ascending) of topology order.
[[nodiscard]] Topology device_subset(const Topology& topology, const std::vector<int>& indices);
// The devices (indices in topology order) of replica `replica` of `replicas`
// when each stage's replicas sit in groups of `adjacent` on neighbouring
// devices: replica 0 takes the first of every `adjacent` devices over the
// first devices / replicas * adjacent; the next replicas of its group the
// devices after each, and the next group the next run of devices alike.
[[nodiscard]] std::vector<int> replica_device_indices(int devices, int replicas, int adjacent,
                                                      int replica);

// ---- Building blocks, exposed for tests and benchmarks ----

// The DP alone: the contiguous split with the smallest bottleneck (slowest
// stage: forward + backward of its layers on its device + sending its output
// to the next device), with every stage within its device's memory under the
// memory rule of `schedule`, over every device sequence the planner considers
// (all ordered subsets on clusters of up to kExhaustiveDeviceLimit devices)
// and every stage count, or exactly `stages` when given.
struct SplitResult {
    bool feasible = false;
    double bottleneck_s = 0;
    std::vector<int> devices;      // indices into Topology::devices(), pipeline order
    std::vector<int> first_layer;  // per stage
};
inline constexpr int kExhaustiveDeviceLimit = 4;
[[nodiscard]] SplitResult best_split(const Project& project, const PlanOptions& options,
                                     int microbatches, const std::string& schedule,
                                     std::optional<int> stages = std::nullopt);

// Micro-batches whose activations stage k of p holds at its peak under a
// schedule (naive 1, gpipe m, 1f1b and zb-h1 min(p - k, m)), and for zb-h1
// the micro-batches that only still hold their weight-gradient inputs.
struct InFlight {
    int full = 1;
    int weight_only = 0;
};
[[nodiscard]] InFlight activations_in_flight(ScheduleKind schedule, int stage, int stages,
                                             int microbatches);
// The same for a schedule named as a project file names it; throws
// InputError for a name no generator has.
[[nodiscard]] InFlight activations_in_flight(const std::string& schedule, int stage, int stages,
                                             int microbatches);

// Equal layer counts over the first min(devices, layers) devices in topology
// order (with tensor parallelism, the first devices of its groups).
[[nodiscard]] std::vector<PlannedStage> uniform_split(const Project& project);
// Equal parameter counts per stage over the same devices (DeepSpeed's
// partition_method="parameters"): the contiguous split whose largest stage
// has the fewest parameters.
[[nodiscard]] std::vector<PlannedStage> parameter_balanced_split(
    const Project& project, const DeviceCatalog* catalog = nullptr);

// The project with this placement, schedule and micro-batch count.
[[nodiscard]] Project with_placement(const Project& project,
                                     const std::vector<PlannedStage>& stages,
                                     const std::string& schedule, int microbatches);

}  // namespace pipewright
