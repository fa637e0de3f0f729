// Data-parallel plans. For each replica count D and each way of laying the
// replicas out (planner_replica_layout.h), the best pipeline of one replica
// on its devices (the single-pipeline planner, with the replica's share of
// the batch and its ZeRO shards counted in memory), then the whole layout
// (every replica, their gradient reductions on the real links) simulated at
// each ZeRO stage. The simulation of all replicas judges.

#include <algorithm>
#include <chrono>
#include <tuple>

#include "pipewright/core/quantity_format.h"
#include "pipewright/sim/planner.h"
#include "planner_internal.h"
#include "planner_replica_layout.h"

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
                                        int highest, DataParallelOption& option, int& simulations) {
    std::optional<Judged> best;
    bool fits_unsharded = false;
    for (int zero = 0; zero <= highest; ++zero) {
        Project candidate = layout;
        candidate.data_parallel.zero_stage = zero;
        PlanOutcome outcome;
        planner::simulate_outcome(outcome, candidate, planner::analysis_options(options),
                                  options.costs);
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
            best = Judged{zero, std::move(candidate), std::move(*outcome.report)};
        }
    }
    if (best) {
        best->fits_unsharded = fits_unsharded;
    }
    return best;
}

std::string zero_words(int zero) {
    return zero == 0 ? "without ZeRO" : "with ZeRO-" + std::to_string(zero);
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
    CountSearch(const Project& project, const PlanOptions& options, PlanResult& result)
        : project_(project), options_(options), result_(result) {}

    std::optional<CountBest> search(int replicas, DataParallelOption& option) {
        std::optional<CountBest> best;
        for (const int adjacent : planner::adjacency_options(project_.topology, replicas)) {
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

  private:
    // The pipelines of one replica laid out as `adjacent` says, with or
    // without checkpointing, judged over every replica; `best` keeps the
    // fastest so far. Whether the fastest that fits left every device at
    // least half empty; nullopt when the replica cannot be planned at all.
    std::optional<bool> search_variant(int replicas, int adjacent, bool checkpointing,
                                       DataParallelOption& option, std::optional<CountBest>& best) {
        std::optional<double> fastest_s;
        bool roomy = false;
        const int devices = static_cast<int>(project_.topology.devices().size());
        Project replica = project_;
        replica.topology = device_subset(project_.topology,
                                         replica_device_indices(devices, replicas, adjacent, 0));
        replica.data_parallel = DataParallel{};
        replica.training.batch_size = project_.training.batch_size / replicas;
        replica.training.activation_checkpointing = checkpointing;
        std::vector<PlanOutcome> planned;
        // Planned first with ZeRO-3's memory, the most room a pipeline can
        // have: when that plan fits without ZeRO, no lower stage's room holds
        // a faster pipeline. Otherwise each stage's room is planned.
        const std::vector<int> zero_order =
            replicas == 1 ? std::vector<int>{0} : std::vector<int>{3, 0, 1, 2};
        for (const int zero : zero_order) {
            PlanOptions one = options_;
            one.data_parallel = 1;
            one.on_progress = nullptr;
            one.replica_of = DataParallel{};
            one.replica_of.size = replicas;
            one.replica_of.zero_stage = zero;
            PlanResult pipeline;
            try {
                pipeline = plan_pipeline(replica, one);
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
                    option.reason = "no pipeline of " + std::to_string(devices / replicas) +
                                    " devices fits a replica's share of the batch" +
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
            const Project layout =
                planner::spread_over_replicas(pipeline.project, project_, replicas, adjacent);
            auto judged = judge_zero_stages(layout, options_, replicas == 1 ? 0 : kMaxZeroStage,
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
    PlanResult& result_;
};

// Why the plan's count, layout and ZeRO stage won, in one paragraph.
std::string explain_choice(const PlanResult& result, bool given_checkpointing) {
    const int d = result.project.data_parallel.size;
    const DataParallelOption* chosen = nullptr;
    std::string others;
    for (const DataParallelOption& o : result.data_parallel) {
        if (o.replicas == d && o.iteration_s) {
            chosen = &o;
            continue;
        }
        others +=
            (others.empty() ? "" : "; ") + std::to_string(o.replicas) + " × " +
            (o.iteration_s ? std::to_string(o.stages) + (o.stages == 1 ? " stage " : " stages ") +
                                 format_duration(*o.iteration_s)
                           : std::string("nothing fits (") + o.reason + ")");
    }
    std::string why = std::to_string(d) + (d == 1 ? " replica" : " replicas") + " of a " +
                      std::to_string(result.plan.stages.size()) + "-stage pipeline " +
                      zero_words(result.project.data_parallel.zero_stage);
    if (chosen != nullptr && d > 1) {
        why += ", " + chosen->layout;
    }
    why += ": " + format_duration(result.plan.report->iteration_time_s) + " per iteration";
    if (!others.empty()) {
        why += " (the fastest that fits; " + others + ")";
    }
    if (chosen != nullptr && chosen->activation_checkpointing != given_checkpointing) {
        why += chosen->activation_checkpointing
                   ? "; with activation checkpointing, which the project does not use: "
                     "the memory it frees is worth the recomputed forward"
                   : "; without the project's activation checkpointing: it fits without "
                     "recomputing the forward";
    }
    if (chosen != nullptr && d > 1) {
        std::string zeros;
        for (int z = 0; z <= kMaxZeroStage; ++z) {
            if (z == chosen->zero_stage) {
                continue;
            }
            const auto& t = chosen->by_zero_stage[static_cast<std::size_t>(z)];
            zeros += (zeros.empty() ? "" : ", ") + std::string("ZeRO-") + std::to_string(z) +
                     (t ? " " + format_duration(*t) : std::string(" does not fit"));
        }
        why += "; at " + std::to_string(d) + " replicas " + zeros;
    }
    return why;
}

}  // namespace

PlanResult plan_data_parallel(const Project& project, const PlanOptions& options) {
    const auto started = std::chrono::steady_clock::now();
    const int devices = static_cast<int>(DeviceLookup(project.topology).devices().size());
    const int batch = project.training.batch_size;
    const int asked = options.data_parallel.value_or(project.data_parallel.size);
    const std::string size_path = options.data_parallel ? "--data-parallel" : "data_parallel.size";
    std::vector<int> counts;
    if (asked == 0) {
        for (int d = 1; d <= devices; ++d) {
            if (devices % d == 0 && batch % d == 0) {
                counts.push_back(d);
            }
        }
    } else if (asked < 0 || asked > devices) {
        throw InputError(size_path, std::to_string(asked) + " replicas need at least " +
                                        std::to_string(std::max(asked, 1)) +
                                        " devices; the topology has " + std::to_string(devices));
    } else if (batch % asked != 0) {
        throw InputError(size_path, "the batch of " + std::to_string(batch) +
                                        " samples does not split evenly across " +
                                        std::to_string(asked) + " replicas");
    } else {
        counts.push_back(asked);
    }

    PlanResult result;
    // The project as given, with its own replicas: what the plan must beat.
    AnalysisOptions input_analysis = planner::analysis_options(options);
    input_analysis.schedule = options.schedule;
    input_analysis.microbatches = options.microbatches;
    if (asked > 0) {
        input_analysis.data_parallel = asked;
    }
    planner::simulate_outcome(result.input, project, input_analysis, options.costs);
    ++result.statistics.simulations;

    std::optional<CountBest> best;
    CountSearch search(project, options, result);
    for (const int d : counts) {
        DataParallelOption option;
        option.replicas = d;
        auto found = search.search(d, option);
        result.data_parallel.push_back(std::move(option));
        if (found && (!best || found->judged.report.iteration_time_s <
                                   best->judged.report.iteration_time_s)) {
            best = std::move(found);
        }
    }

    if (best) {
        PlanResult& pipeline = best->pipeline;
        result.feasible = true;
        result.project = best->judged.project;
        result.bottleneck_s = pipeline.bottleneck_s;
        result.plan.stages = pipeline.plan.stages;
        result.plan.schedule = pipeline.plan.schedule;
        result.plan.microbatches = pipeline.plan.microbatches;
        result.plan.report = std::move(best->judged.report);
        // The uniform split of one replica, laid out over the replicas alike.
        if (pipeline.uniform.report) {
            result.uniform = pipeline.uniform;
            const int d = result.project.data_parallel.size;
            int adjacent = 1;
            for (const DataParallelOption& o : result.data_parallel) {
                adjacent = o.replicas == d ? o.adjacent : adjacent;
            }
            Project uniform = planner::spread_over_replicas(
                with_placement(pipeline.project, pipeline.uniform.stages, pipeline.uniform.schedule,
                               pipeline.uniform.microbatches),
                project, d, adjacent);
            uniform.data_parallel.zero_stage = result.project.data_parallel.zero_stage;
            planner::simulate_outcome(result.uniform, uniform, planner::analysis_options(options),
                                      options.costs);
            ++result.statistics.simulations;
        }
        result.data_parallel_choice =
            explain_choice(result, project.training.activation_checkpointing);
    } else {
        std::string why;
        for (const DataParallelOption& o : result.data_parallel) {
            why += std::to_string(o.replicas) + (o.replicas == 1 ? " replica: " : " replicas: ") +
                   o.reason + "\n";
        }
        result.why_nothing_fits = why;
    }
    result.statistics.elapsed_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return result;
}

}  // namespace pipewright
