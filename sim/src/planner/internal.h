#pragma once

// Shared by the planner's parts: the split DP (planner/split.cpp), the
// candidate search (planner/search.cpp) and the driver (planner/plan.cpp).

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "pipewright/core/analysis.h"
#include "pipewright/core/schedule_generators.h"
#include "pipewright/sim/collective_cost.h"
#include "pipewright/sim/cost_model.h"
#include "pipewright/sim/planner.h"

namespace pipewright::planner {

// Which activations a stage holds at its peak; naive is gpipe with one micro-batch.
enum class MemoryRule { gpipe, one_f_one_b, zb_h1, zb_h2 };

// Layer figures for one micro-batch count, as prefix sums over layers so that
// any contiguous stage costs O(1).
struct LayerTable {
    int microbatches = 1;
    int microbatch_size = 1;
    int layers = 0;
    // [class][i]: forward + backward of layers < i for one micro-batch (with
    // the recomputed forward under activation checkpointing).
    std::vector<std::vector<double>> time;
    std::vector<double> stash;         // prefix of bytes held from forward to backward
    std::vector<double> weight_stash;  // prefix of bytes held after I until W
    std::vector<double> params;        // prefix of parameter counts
    // Tied embeddings: the matrix the head shares with the embedding, per
    // member. A stage of every layer holds it once, not twice as `params`
    // counts it (any other stage holds one end and its own copy).
    double tied_params = 0;
    // What the loss keeps per micro-batch on the stage that ends with the
    // last layer (cost_model.h: project_loss_kernels); its time is in the
    // last layer's.
    double loss_stash = 0;
    std::vector<double> output_bytes;  // per layer, one micro-batch (StageCost's)
    std::vector<double> input_bytes;   // per layer: what enters it (layer 0: the model input)
    // Per layer: one tensor-parallel member's share of output_bytes
    // (StageCost::output_share).
    std::vector<double> member_output_bytes;
    std::vector<double> min_time;    // per layer: fastest class
    std::vector<double> min_prefix;  // prefix of min_time
    double min_total = 0;            // sum of min_time
    double min_largest = 0;          // largest min_time
    // Full recomputation (core/recomputation_units.h). Per layer: the input
    // it keeps when it begins a unit, as it takes it
    // (core/stage_boundary.h), and the unit it belongs to when a stage holds it
    // and the layer before; prefix of the inputs kept by the layers that
    // begin a unit wherever they are; each unit's first layer; the largest
    // stash of the units in a run of them ([j][u]: in [u, u + 2^j)).
    std::vector<double> takes;
    std::vector<int> unit_of;
    std::vector<double> unit_kept;
    std::vector<int> unit_starts;  // plus the layer count at the end
    std::vector<std::vector<double>> unit_runs;

    // Fills the unit fields from `takes`, `stash` and the model's layers.
    void index_units(std::span<const LayerSpec> model_layers);
    // What a stage of layers [a, i) keeps per micro-batch: its units' inputs.
    [[nodiscard]] double kept_inputs(int a, int i) const;
    // The largest stash of one of its units: what a whole backward rebuilds
    // at once.
    [[nodiscard]] double largest_unit(int a, int i) const;
};

// The link from a stage's device to the next stage's, as the simulator
// times a send over it (SimLink): carrying the tensor-parallel group's
// bytes or one member's (core/stage_boundary.h: group_shares_link).
struct StageLink {
    LinkSpec spec;
    bool group = true;

    // Sending layer `layer`'s output (a stage ending there).
    [[nodiscard]] double send_seconds(const LayerTable& t, int layer) const {
        const auto i = static_cast<std::size_t>(layer);
        return spec.transfer_seconds(group ? t.output_bytes[i] : t.member_output_bytes[i]);
    }
};

// One stage position of a fixed device sequence.
struct Slot {
    int device = 0;  // index into Cluster::devices
    int cls = 0;
    double capacity = 0;
    StageLink next;  // towards the next stage's device (unused for the last stage)
    double full = 1;
    double weight_only = 0;
};

struct SplitProblem {
    const LayerTable* table = nullptr;
    std::vector<Slot> slots;
    bool checkpointing = false;
    // The schedule splits the backward into I and W: under checkpointing, I
    // recomputes the whole stage (a whole backward, one layer at a time).
    bool split_backward = false;
    double bytes_per_param = 0;  // static bytes (weights, gradients, optimizer state)
};

struct Split {
    bool feasible = false;
    double value = 0;        // bottleneck seconds, or memory ratio
    std::vector<int> first;  // per stage, plus the layer count at the end
};

// Seconds stage k spends per micro-batch on layers [a, i) including sending
// its output to the next stage.
[[nodiscard]] double stage_time(const SplitProblem& problem, std::size_t k, int a, int i);
// Peak bytes of stage k holding layers [a, i).
[[nodiscard]] double stage_memory(const SplitProblem& problem, std::size_t k, int a, int i);
[[nodiscard]] double static_bytes(const SplitProblem& problem, int a, int i);

// Exact minimum bottleneck over contiguous splits within memory; `checks`
// counts the feasibility passes.
[[nodiscard]] Split min_bottleneck_split(const SplitProblem& problem, int* checks = nullptr);
// A lower bound of the bottleneck of any split into `stages` stages: the
// optimum when every layer runs on its fastest device, stage k's send costs
// sends[k] (at least) and memory is ignored (greedy is exact there), found
// to within `tolerance`.
[[nodiscard]] double relaxed_bottleneck(const LayerTable& table, int stages,
                                        std::span<const double> sends, double tolerance = 1e-3);
// The smallest r such that a split fits in r times every capacity.
[[nodiscard]] Split min_memory_ratio_split(const SplitProblem& problem);

struct Cluster {
    std::vector<DeviceLocation> devices;  // topology order
    std::vector<DeviceSpec> specs;        // effective, per device
    std::vector<int> device_class;        // per device
    std::vector<DeviceSpec> classes;      // distinct effective specs
};

// Everything the search needs, computed once per plan.
class Context {
  public:
    // `replica_of`: the pipeline planned is one of replica_of.size replicas
    // at ZeRO stage replica_of.zero_stage, so its weights, gradients and
    // optimizer state count as their shards (and a ZeRO-3 stage's gathered
    // weights as whole) when judging what fits.
    Context(const Project& project, const PlanOptions& options,
            const DataParallel& replica_of = {});

    [[nodiscard]] const LayerTable& table(int microbatches);
    [[nodiscard]] int layers() const { return static_cast<int>(base_.layers.size()); }
    [[nodiscard]] int batch() const { return base_.project.training.batch_size; }
    [[nodiscard]] int devices() const { return static_cast<int>(cluster_.devices.size()); }
    [[nodiscard]] const Cluster& cluster() const { return cluster_; }
    [[nodiscard]] const AnalyzedProject& base() const { return base_; }
    [[nodiscard]] const CostModelOptions& costs() const { return costs_; }
    [[nodiscard]] bool checkpointing() const { return checkpointing_; }
    // Throws PlanCancelled once the caller asked the plan to stop.
    void throw_if_stopped() const {
        if (stop_.stop_requested()) {
            throw PlanCancelled();
        }
    }

    // Device sequences the planner considers; sequences(p) lists the orders
    // whose first p devices differ in something the DP sees.
    [[nodiscard]] const std::vector<std::vector<int>>& orders() const { return orders_; }
    [[nodiscard]] const std::vector<int>& distinct_orders(int stages) const;
    [[nodiscard]] StageLink link(int from, int to) const;
    // For lower bounds: per order, what each stage's send costs at least
    // (its link moving the smallest output of any layer).
    [[nodiscard]] std::vector<std::vector<double>> send_floors(const LayerTable& table) const;

    // The first `stages` devices of orders()[order] under a memory rule.
    [[nodiscard]] SplitProblem problem(const LayerTable& table, std::size_t order, int stages,
                                       MemoryRule rule) const;

    // A looped sequence for `schedule` (interleaved-1f1b, interleaved-zb or
    // looped-bfs): `chunks` rounds over the first `devices` devices of
    // orders()[order] (stage s on device s mod devices).
    [[nodiscard]] SplitProblem looped_problem(const LayerTable& table, std::size_t order,
                                              int devices, int chunks, ScheduleKind schedule) const;

    // Simulates a split without re-analysing the project (the layers are
    // analysed once); `devices` holds each stage's device, and a device that
    // comes again (a looped placement) is the same rank. Throws ScheduleError
    // or SimulationError.
    [[nodiscard]] SimulationReport simulate(const std::vector<int>& devices,
                                            const std::vector<int>& first, int microbatches,
                                            ScheduleKind schedule);

  private:
    void build_orders();
    // Per device class, the tensor-parallel group its stages run on (empty
    // without tensor parallelism).
    [[nodiscard]] std::vector<CollectiveGroup> tensor_groups_by_class() const;

    AnalyzedProject base_;
    AnalyzedProject work_;
    Cluster cluster_;
    CostModelOptions costs_;
    std::stop_token stop_;
    bool checkpointing_ = false;
    double bytes_per_param_ = 0;
    // Expert parallelism: a routed expert parameter's static bytes against
    // bytes_per_param_ (its state shards over the replicas that hold the
    // same experts, fewer than all) over the expert-parallel size: what
    // `params` counts each routed parameter as, so that bytes_per_param_ ×
    // params is the stage's static memory.
    double expert_param_weight_ = 1;
    std::map<int, LayerTable> tables_;
    // Per device of cluster_: its tensor-parallel group (empty when size 1),
    // and per device class the group its stages' all-reduces are priced on.
    std::vector<std::vector<DeviceLocation>> groups_;
    std::vector<CollectiveGroup> class_groups_;
    std::vector<std::vector<int>> orders_;
    std::vector<std::vector<StageLink>> order_links_;  // [order][k]: from device k to k + 1
    std::vector<std::vector<int>> distinct_;           // per stage count
};

[[nodiscard]] MemoryRule rule_of(ScheduleKind schedule);
// The memory rule the search uses for a stage count and micro-batch count, or
// nullopt when no allowed schedule runs that pipeline.
[[nodiscard]] std::optional<MemoryRule> rule_for(std::optional<ScheduleKind> fixed,
                                                 int microbatches, int stages);
[[nodiscard]] std::vector<ScheduleKind> schedules_for(MemoryRule rule,
                                                      std::optional<ScheduleKind> fixed,
                                                      int microbatches);

struct Candidate {
    std::size_t order = 0;  // index into Context::orders()
    std::vector<int> devices;
    std::vector<int> first;
    int microbatches = 1;
    MemoryRule rule = MemoryRule::gpipe;
    double bottleneck_s = 0;
    double estimate_s = 0;  // proxy of the iteration time
};

// A looped placement (stage s on device s mod p).
inline constexpr int kMaxLoopedChunks = 4;
struct LoopedCandidate {
    std::size_t order = 0;
    std::vector<int> devices;  // per stage: the seed's devices, `chunks` times over
    std::vector<int> first;
    int microbatches = 1;
    int chunks = 2;
    double bottleneck_s = 0;
    double estimate_s = 0;
};

struct SearchSpec {
    std::optional<ScheduleKind> schedule;
    std::vector<int> microbatches;  // allowed counts
    std::size_t keep = 6;           // best candidates kept
};

// The best splits by estimated iteration time, best first.
[[nodiscard]] std::vector<Candidate> search_candidates(Context& context, const SearchSpec& spec,
                                                       PlanStatistics& statistics);

// The schedules that loop stages around the devices, which the planner
// searches as looped variants of the flat candidates.
[[nodiscard]] bool is_looped(ScheduleKind schedule);

// Throws InputError saying why when no looped placement can exist for
// `schedule` (one device, fewer than 4 layers, no micro-batch count it
// accepts).
void check_looped_possible(const Context& context, const std::vector<int>& microbatches,
                           ScheduleKind schedule);

// Looped variants (2 to kMaxLoopedChunks stages per device) of the seeds'
// device sequences, with micro-batch counts `schedule` accepts, best
// estimate first.
[[nodiscard]] std::vector<LoopedCandidate> search_looped(
    Context& context, const std::vector<Candidate>& seeds,
    const std::vector<int>& allowed_microbatches, std::size_t keep, ScheduleKind schedule,
    PlanStatistics& statistics);

// Multi-line explanation of why nothing fits and what would.
[[nodiscard]] std::string explain_infeasible(Context& context, const SearchSpec& spec);

// Throws InputError at `path` unless `size` is a tensor-parallel size or 0
// (search).
void check_tensor_parallel_size(int size, const std::string& path);

// Every k that divides n, ascending.
[[nodiscard]] std::vector<int> divisors(int n);

// Throws InputError when an option cannot be honoured for `project`: an
// unknown schedule, micro-batches that do not divide the batch.
void check_plan_options(const Project& project, const PlanOptions& options);

// The stages of a split: devices[k] (indices into the cluster) holds layers
// [first[k], first[k + 1]).
[[nodiscard]] std::vector<PlannedStage> stages_of(const Context& context,
                                                  const std::vector<int>& devices,
                                                  const std::vector<int>& first);

// Runs `simulate`; nullopt, saying why in `reason`, when the placement cannot
// be simulated: its schedule cannot run it (ScheduleError), it deadlocks
// (SimulationError), or its figures are past what the cost model counts
// (InputError). Anything else is a defect or out of memory and propagates.
template <typename Simulate>
std::optional<SimulationReport> unless_ruled_out(Simulate&& simulate, std::string& reason) {
    try {
        return simulate();
    } catch (const ScheduleError& e) {
        reason = e.what();
    } catch (const SimulationError& e) {
        reason = e.what();
    } catch (const InputError& e) {
        reason = e.what();
    }
    return std::nullopt;
}

// One pipeline of `project` (one replica, its tensor-parallel size set in
// the project): the search of plan_pipeline once the request is
// normalised, and what the data-parallel planner runs for each layout, with
// `replica_of` saying which replicas and ZeRO stage it is one of.
[[nodiscard]] PlanResult plan_one_pipeline(const Project& project, const PlanOptions& options,
                                           const DataParallel& replica_of);

// The analysis options every simulation of the plan uses (catalog, base folder).
[[nodiscard]] AnalysisOptions analysis_options(const PlanOptions& options);
// Analyses and simulates a whole project the way `pipewright simulate`
// does, filling `outcome` (its reason when it cannot run).
void simulate_outcome(PlanOutcome& outcome, const Project& project, const AnalysisOptions& analysis,
                      const CostModelOptions& costs);
// The same for a project already analysed.
void simulate_analyzed(PlanOutcome& outcome, const AnalyzedProject& analyzed,
                       const CostModelOptions& costs);

// A plan that recomputes every unit of its stages, recomputing instead the
// fewest blocks at the start of each stage that fit (or none), in its layout
// or in `given`'s own where the options keep it, when that is faster
// (narrow_recomputation.cpp); says which in PlanResult::recomputation_choice.
void narrow_recomputation(PlanResult& result, const Project& given, const PlanOptions& options);

// A floor under the iteration of any pipeline plan_pipeline could find for
// `project` (one replica): its forward and backward work on the fastest
// devices, without recomputation, spread perfectly over as many devices
// (groups) as can hold a layer, at the best micro-batch count. Data-parallel
// layouts whose floor is above a layout already found are not planned.
[[nodiscard]] double iteration_floor(const Project& project, const PlanOptions& options);

}  // namespace pipewright::planner
