// Data-parallel plans. For each replica count D and each way of laying the
// replicas out (planner/replica_layout.h), the best pipeline of one replica
// on its devices (the single-pipeline planner, with the replica's share of
// the batch and its ZeRO shards counted in memory), then the whole layout
// (every replica, their gradient reductions on the real links) simulated at
// each ZeRO stage. The simulation of all replicas judges.

#include <algorithm>
#include <chrono>
#include <tuple>

#include "pipewright/core/quantity_format.h"
#include "pipewright/sim/planner.h"
#include "planner/internal.h"
#include "planner/layout_analysis.h"
#include "planner/layout_candidates.h"
#include "planner/layout_explain.h"
#include "planner/replica_layout.h"
#include "planner/tensor_groups.h"

namespace pipewright {

namespace {

struct Judged {
    int zero_stage = 0;
    Project project;
    SimulationReport report;
    bool fits_unsharded = false;  // fits at ZeRO-0 too (maybe slower)
};

// The fastest ZeRO stage (up to `highest`) at which `layout` fits, ties
// going to the lower stage; nullopt when none fits. `by_zero` keeps the
// fastest iteration seen at each stage.
std::optional<Judged> judge_zero_stages(const Project& layout, const PlanOptions& options,
                                        planner::LayoutAnalyzer& analyzer, int highest,
                                        DataParallelOption& option, int& simulations) {
    std::optional<Judged> best;
    bool fits_unsharded = false;
    Project candidate = layout;
    for (int zero = 0; zero <= highest; ++zero) {
        candidate.data_parallel.zero_stage = zero;
        PlanOutcome outcome;
        planner::simulate_outcome(outcome, candidate, analyzer, options.costs);
        if (!outcome.report) {
            option.reason = outcome.reason;
            return std::nullopt;
        }
        ++simulations;
        if (!outcome.report->all_fit) {
            continue;
        }
        fits_unsharded = fits_unsharded || zero == 0;
        const double t = outcome.report->iteration_time_s;
        auto& seen = option.by_zero_stage[static_cast<std::size_t>(zero)];
        if (!seen || t < *seen) {
            seen = t;
        }
        if (!best || t < best->report.iteration_time_s * (1 - 1e-9)) {
            best = Judged{zero, candidate, std::move(*outcome.report)};
        }
    }
    if (best) {
        best->fits_unsharded = fits_unsharded;
    }
    return best;
}

// The fullest device of a report, as (peak, capacity).
std::pair<double, double> fullest_device(const SimulationReport& report) {
    std::pair<double, double> out{0, 0};
    double ratio = -1;
    for (const DeviceMetrics& d : report.devices) {
        const double r = d.memory_capacity_bytes > 0
                             ? static_cast<double>(d.peak_memory_bytes) /
                                   static_cast<double>(d.memory_capacity_bytes)
                             : 0;
        if (r > ratio) {
            ratio = r;
            out = {static_cast<double>(d.peak_memory_bytes),
                   static_cast<double>(d.memory_capacity_bytes)};
        }
    }
    return out;
}

bool same_plan(const PlanOutcome& a, const PlanOutcome& b) {
    return a.schedule == b.schedule && a.microbatches == b.microbatches && a.stages == b.stages;
}

// The best layout of one replica count: the winner's pipeline plan and
// judged simulation, with `option` filled in (or its reason).
struct CountBest {
    PlanResult pipeline;
    Judged judged;
};

class CountSearch {
  public:
    CountSearch(const Project& project, const PlanOptions& options,
                planner::LayoutAnalyzer& analyzer, PlanResult& result)
        : project_(project), options_(options), analyzer_(analyzer), result_(result) {}

    std::optional<CountBest> search(int replicas, DataParallelOption& option) {
        std::optional<CountBest> best;
        const int tensor = option.tensor_parallel;
        for (const int adjacent : planner::adjacency_options(project_.topology, replicas, tensor)) {
            // Checkpointing trades the recomputed forward for memory: planned
            // without it first, then with it unless every device of that
            // layout was at most half full (memory did not hold it back).
            const auto roomy = search_variant(replicas, adjacent, false, option, best);
            if (!roomy) {
                return best;  // an input error: the same for every variant
            }
            if (!*roomy && !search_variant(replicas, adjacent, true, option, best)) {
                return best;
            }
        }
        if (best) {
            const SimulationReport& r = best->judged.report;
            option.zero_stage = best->judged.zero_stage;
            option.stages = static_cast<int>(best->pipeline.plan.stages.size());
            option.schedule = best->pipeline.plan.schedule;
            option.microbatches = best->pipeline.plan.microbatches;
            option.layout = planner::layout_words(replicas, option.adjacent);
            option.iteration_s = r.iteration_time_s;
            option.throughput_samples_per_s = r.throughput_samples_per_s;
            std::tie(option.peak_memory_bytes, option.memory_capacity_bytes) = fullest_device(r);
            option.project = best->judged.project;
            option.report = r;
            option.reason.clear();
        } else if (option.reason.empty()) {
            option.reason = "nothing fits in memory at any ZeRO stage";
        }
        return best;
    }

    // A floor under any layout of `replicas` replicas at the option's
    // tensor-parallel size (planner::iteration_floor); 0 when the replica
    // cannot be analysed (the search says why).
    double floor(int replicas, const DataParallelOption& option) const {
        try {
            return planner::iteration_floor(replica_project(replicas, 1, option, false),
                                            replica_options());
        } catch (const InputError&) {
            return 0;
        }
    }

  private:
    // Replica 0's share of the project: its devices, its share of the batch.
    Project replica_project(int replicas, int adjacent, const DataParallelOption& option,
                            bool checkpointing) const {
        Project replica = project_;
        replica.topology = device_subset(
            project_.topology, planner::replica_group_devices(analyzer_.topology(), replicas,
                                                              adjacent, option.tensor_parallel, 0));
        replica.tensor_parallel = TensorParallel{option.tensor_parallel, option.sequence_parallel};
        replica.expert_parallel.size = option.expert_parallel;
        replica.context_parallel.size = option.context_parallel;
        replica.data_parallel = DataParallel{};
        replica.training.batch_size =
            project_.training.batch_size / batch_shares(replicas, option.context_parallel);
        // Without full recomputation the project's own choice stays (none,
        // or the selective recomputation of the attention core).
        const Recompute own = project_.training.recompute;
        replica.training.recompute = checkpointing            ? Recompute::full
                                     : own == Recompute::full ? Recompute::none
                                                              : own;
        replica.training.recompute_blocks.reset();  // the plan recomputes whole stages
        return replica;
    }

    // Options that plan one replica's pipeline (the layout is in its project).
    PlanOptions replica_options() const {
        PlanOptions one = options_;
        one.data_parallel = 1;
        one.tensor_parallel.reset();
        one.sequence_parallel.reset();
        one.expert_parallel.reset();
        one.context_parallel.reset();
        one.on_progress = nullptr;
        return one;
    }

    // The pipelines of one replica laid out as `adjacent` says, with or
    // without checkpointing, judged over every replica; `best` keeps the
    // fastest so far. Whether the fastest that fits left every device at
    // least half empty; nullopt when the replica cannot be planned at all.
    std::optional<bool> search_variant(int replicas, int adjacent, bool checkpointing,
                                       DataParallelOption& option, std::optional<CountBest>& best) {
        std::optional<double> fastest_s;
        bool roomy = false;
        const int tensor = option.tensor_parallel;
        const Project replica = replica_project(replicas, adjacent, option, checkpointing);
        const auto devices = static_cast<int>(replica.topology.devices().size());
        std::vector<PlanOutcome> planned;
        // Planned first with ZeRO-3's memory, the most room a pipeline can
        // have: when that plan fits without ZeRO, no lower stage's room holds
        // a faster pipeline. Otherwise each stage's room is planned.
        const std::vector<int> zero_order =
            replicas == 1 ? std::vector<int>{0} : std::vector<int>{3, 0, 1, 2};
        const PlanOptions one = replica_options();
        for (const int zero : zero_order) {
            DataParallel replica_of;
            replica_of.size = replicas;
            replica_of.zero_stage = zero;
            PlanResult pipeline;
            try {
                pipeline = planner::plan_one_pipeline(replica, one, replica_of);
            } catch (const InputError& e) {
                option.reason = e.diagnostics().items().empty()
                                    ? e.what()
                                    : e.diagnostics().items().front().message;
                return std::nullopt;
            }
            result_.statistics.split_searches += pipeline.statistics.split_searches;
            result_.statistics.simulations += pipeline.statistics.simulations;
            if (options_.on_progress) {
                options_.on_progress(result_.statistics);
            }
            if (!pipeline.feasible) {
                if (option.reason.empty()) {
                    option.reason = "no pipeline of " +
                                    (tensor > 1 ? std::to_string(devices / tensor) + " groups of " +
                                                      std::to_string(tensor) + " devices"
                                                : std::to_string(devices) +
                                                      (devices == 1 ? " device" : " devices")) +
                                    " fits a replica's share of the batch" +
                                    (replicas > 1 ? ", even with ZeRO-3" : "");
                }
                if (zero == 3) {
                    break;  // the lower stages have less room still
                }
                continue;
            }
            const bool seen = std::any_of(planned.begin(), planned.end(), [&](const auto& p) {
                return same_plan(p, pipeline.plan);
            });
            if (seen) {
                continue;
            }
            planned.push_back(pipeline.plan);
            Project layout = planner::spread_over_replicas(
                pipeline.project, project_, analyzer_.topology(), replicas, adjacent, tensor);
            layout.tensor_parallel = replica.tensor_parallel;
            layout.expert_parallel = replica.expert_parallel;
            layout.context_parallel = replica.context_parallel;
            auto judged =
                judge_zero_stages(layout, options_, analyzer_, replicas == 1 ? 0 : kMaxZeroStage,
                                  option, result_.statistics.simulations);
            const bool fits_without_zero = judged && judged->fits_unsharded;
            if (judged && (!fastest_s || judged->report.iteration_time_s < *fastest_s)) {
                fastest_s = judged->report.iteration_time_s;
                const auto [peak, capacity] = fullest_device(judged->report);
                roomy = capacity > 0 && peak <= 0.5 * capacity;
            }
            if (judged && (!best || judged->report.iteration_time_s <
                                        best->judged.report.iteration_time_s * (1 - 1e-9))) {
                option.adjacent = adjacent;
                option.activation_checkpointing = checkpointing;
                best = CountBest{std::move(pipeline), std::move(*judged)};
            }
            if (zero == 3 && fits_without_zero) {
                break;
            }
        }
        return roomy;
    }

    const Project& project_;
    const PlanOptions& options_;
    planner::LayoutAnalyzer& analyzer_;
    PlanResult& result_;
};

// The 3D search in named steps: the project as given, the candidate
// layouts (planner/layout_candidates.h), a floor under each, every layout's
// pipeline search and judgement (lowest floor first, none whose floor is
// above a layout found), then the winner's comparison and explanation. The
// topology is analysed once (planner/layout_analysis.h).
class LayoutSearch {
  public:
    LayoutSearch(const Project& project, const PlanOptions& options)
        : started_(std::chrono::steady_clock::now()),
          project_(project),
          options_(options),
          request_(project, options),
          analyzer_(project, options),
          counts_(project, options, analyzer_, result_) {}

    PlanResult run() {
        simulate_input();
        collect_candidates();
        plan_layouts(lowest_floor_first());
        if (best_) {
            adopt_best();
        } else {
            explain_nothing_fits();
        }
        result_.statistics.topology_analyses = analyzer_.full_analyses();
        result_.statistics.elapsed_s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
        return std::move(result_);
    }

  private:
    // The project as given, with its own replicas: what the plan must beat.
    void simulate_input() {
        AnalysisOptions input = planner::analysis_options(options_);
        input.schedule = options_.schedule;
        input.microbatches = options_.microbatches;
        if (request_.data > 0) {
            input.data_parallel = request_.data;
        }
        if (request_.tensor > 0) {
            input.tensor_parallel = request_.tensor;
        }
        input.sequence_parallel = options_.sequence_parallel;
        if (request_.experts > 0) {
            input.expert_parallel = request_.experts;
        }
        if (request_.context > 0) {
            input.context_parallel = request_.context;
        }
        input.replica_alone = false;  // the project as given, every replica with it
        planner::simulate_outcome(result_.input, project_, input, options_.costs);
        ++result_.statistics.simulations;
    }

    void collect_candidates() {
        planner::LayoutCandidates candidates =
            planner::candidate_layouts(project_, options_, request_);
        result_.data_parallel = std::move(candidates.layouts);
        result_.tensor_parallel_skipped = std::move(candidates.tensor_skipped);
        result_.expert_parallel_skipped = std::move(candidates.experts_skipped);
        result_.context_parallel_skipped = std::move(candidates.context_skipped);
    }

    // The layouts that can be planned with the floor under each, lowest
    // first: every floor is one for many layouts, so most of a large
    // cluster's slow ones are never planned.
    std::vector<std::pair<double, std::size_t>> lowest_floor_first() {
        std::vector<std::pair<double, std::size_t>> order;
        for (std::size_t i = 0; i < result_.data_parallel.size(); ++i) {
            const DataParallelOption& o = result_.data_parallel[i];
            if (o.reason.empty()) {
                between_layouts();
                order.emplace_back(counts_.floor(o.replicas, o), i);
            }
        }
        std::stable_sort(order.begin(), order.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
        return order;
    }

    // A long search says that it is moving, and stops when asked to.
    void between_layouts() {
        if (options_.on_progress) {
            options_.on_progress(result_.statistics);
        }
        if (options_.stop.stop_requested()) {
            throw PlanCancelled();
        }
    }

    // Branch and bound over the layouts; asked to stop, the best so far
    // (best_so_far_on_stop) and the rest "not planned".
    void plan_layouts(const std::vector<std::pair<double, std::size_t>>& order) {
        for (const auto& [floor, i] : order) {
            DataParallelOption& option = result_.data_parallel[i];
            if (options_.bound_layouts && best_ && floor >= best_->judged.report.iteration_time_s) {
                option.floor_s = floor;
                option.reason =
                    "not planned: spread evenly over its devices, its work alone takes " +
                    format_duration(floor) + ", more than the " +
                    format_duration(best_->judged.report.iteration_time_s) + " of a layout found";
                ++result_.statistics.bounded;
                continue;
            }
            if (result_.interrupted) {
                option.reason = "not planned: the search was stopped";
                continue;
            }
            std::optional<CountBest> found;
            try {
                found = counts_.search(option.replicas, option);
            } catch (const PlanCancelled&) {
                if (!options_.best_so_far_on_stop || !best_) {
                    throw;
                }
                result_.interrupted = true;
                option.reason = "not planned: the search was stopped";
                continue;
            }
            if (found && (!best_ || found->judged.report.iteration_time_s <
                                        best_->judged.report.iteration_time_s)) {
                best_ = std::move(found);
            }
        }
    }

    // The plan: the best layout, beside the uniform split of one replica
    // laid out over the replicas alike, and why it won.
    void adopt_best() {
        PlanResult& pipeline = best_->pipeline;
        result_.feasible = true;
        result_.project = best_->judged.project;
        result_.bottleneck_s = pipeline.bottleneck_s;
        result_.plan.stages = pipeline.plan.stages;
        result_.plan.schedule = pipeline.plan.schedule;
        result_.plan.microbatches = pipeline.plan.microbatches;
        result_.plan.report = std::move(best_->judged.report);
        if (pipeline.uniform.report) {
            result_.uniform = pipeline.uniform;
            const int d = result_.project.data_parallel.size;
            const int t = std::max(1, result_.project.tensor_parallel.size);
            int adjacent = 1;
            for (const DataParallelOption& o : result_.data_parallel) {
                adjacent = o.replicas == d && o.tensor_parallel == t &&
                                   o.expert_parallel == result_.project.expert_parallel.size &&
                                   o.context_parallel == result_.project.context_parallel.size
                               ? o.adjacent
                               : adjacent;
            }
            Project uniform = planner::spread_over_replicas(
                with_placement(pipeline.project, pipeline.uniform.stages, pipeline.uniform.schedule,
                               pipeline.uniform.microbatches),
                project_, analyzer_.topology(), d, adjacent, t);
            uniform.data_parallel.zero_stage = result_.project.data_parallel.zero_stage;
            uniform.tensor_parallel = result_.project.tensor_parallel;
            uniform.expert_parallel = result_.project.expert_parallel;
            uniform.context_parallel = result_.project.context_parallel;
            planner::simulate_outcome(result_.uniform, uniform, analyzer_, options_.costs);
            ++result_.statistics.simulations;
        }
        if (!result_.uniform.report && result_.uniform.reason.empty()) {
            result_.uniform.reason = pipeline.uniform.reason.empty()
                                         ? "no uniform split of a replica's pipeline fits"
                                         : pipeline.uniform.reason;
        }
        result_.data_parallel_choice = planner::explain_layout_choice(result_, project_);
    }

    void explain_nothing_fits() {
        std::string why;
        for (const DataParallelOption& o : result_.data_parallel) {
            why +=
                (o.tensor_parallel > 1 ? "groups of " + std::to_string(o.tensor_parallel) + ", "
                                       : std::string()) +
                (o.context_parallel > 1 ? std::to_string(o.context_parallel) + " to a sequence, "
                                        : std::string()) +
                (o.expert_parallel > 1 ? "experts over " + std::to_string(o.expert_parallel) + ", "
                                       : std::string()) +
                std::to_string(o.replicas) + (o.replicas == 1 ? " replica: " : " replicas: ") +
                o.reason + "\n";
        }
        for (const std::string& skipped : result_.tensor_parallel_skipped) {
            why += "tensor parallelism of " + skipped + "\n";
        }
        result_.why_nothing_fits = why;
    }

    std::chrono::steady_clock::time_point started_;
    const Project& project_;
    const PlanOptions& options_;
    planner::LayoutRequest request_;
    planner::LayoutAnalyzer analyzer_;
    PlanResult result_;
    CountSearch counts_;
    std::optional<CountBest> best_;
};

}  // namespace

PlanResult plan_data_parallel(const Project& project, const PlanOptions& options) {
    return LayoutSearch(project, options).run();
}

}  // namespace pipewright
