// Data-parallel plans: for each replica count D, the best pipeline of one
// replica on the first N / D devices (the single-pipeline planner, with the
// replica's share of the batch), then the whole layout (every replica in
// the default layout, their gradient reductions on the real links)
// simulated at each ZeRO stage. The simulation of all replicas judges.

#include <chrono>
#include <limits>

#include "pipewright/core/quantity_format.h"
#include "pipewright/sim/planner.h"
#include "planner_internal.h"

namespace pipewright {

Topology first_devices(const Topology& topology, int devices) {
    Topology out = topology;
    out.nodes.clear();
    int left = devices;
    for (const Node& node : topology.nodes) {
        Node kept{node.name, {}};
        for (const Container& container : node.containers) {
            Container c{container.name, {}};
            for (const Device& device : container.devices) {
                if (left > 0) {
                    c.devices.push_back(device);
                    --left;
                }
            }
            if (!c.devices.empty()) {
                kept.containers.push_back(std::move(c));
            }
        }
        if (!kept.containers.empty()) {
            out.nodes.push_back(std::move(kept));
        }
    }
    const DeviceLookup lookup(out);
    out.link_overrides.clear();
    for (const LinkOverride& o : topology.link_overrides) {
        if (lookup.find(o.device_a) && lookup.find(o.device_b)) {
            out.link_overrides.push_back(o);
        }
    }
    return out;
}

namespace {

struct Judged {
    int zero_stage = 0;
    Project project;
    SimulationReport report;
};

// The fastest ZeRO stage at which `layout` (one replica's plan, spread over
// the replicas) fits, ties going to the lower stage; nullopt when none fits.
std::optional<Judged> judge_zero_stages(const Project& layout, const PlanOptions& options,
                                        std::string& reason, int& simulations) {
    std::optional<Judged> best;
    for (int zero = 0; zero <= kMaxZeroStage; ++zero) {
        Project candidate = layout;
        candidate.data_parallel.zero_stage = zero;
        PlanOutcome outcome;
        planner::simulate_outcome(outcome, candidate, planner::analysis_options(options),
                                  options.costs);
        if (!outcome.report) {
            reason = outcome.reason;
            return std::nullopt;
        }
        ++simulations;
        if (!outcome.report->all_fit) {
            reason = "does not fit in memory at ZeRO-" + std::to_string(zero);
            continue;
        }
        if (!best ||
            outcome.report->iteration_time_s < best->report.iteration_time_s * (1 - 1e-9)) {
            best = Judged{zero, std::move(candidate), std::move(*outcome.report)};
        }
    }
    return best;
}

std::string zero_words(int zero) {
    return zero == 0 ? "without ZeRO" : "with ZeRO-" + std::to_string(zero);
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

    std::optional<Judged> best;
    PlanResult best_pipeline;
    for (const int d : counts) {
        DataParallelOption option;
        option.replicas = d;
        Project replica = project;
        replica.topology = first_devices(project.topology, devices / d);
        replica.data_parallel = DataParallel{};
        replica.training.batch_size = batch / d;
        PlanOptions one = options;
        one.data_parallel = 1;
        one.on_progress = nullptr;
        PlanResult pipeline;
        try {
            pipeline = plan_pipeline(replica, one);
        } catch (const InputError& e) {
            option.reason = e.diagnostics().items().empty()
                                ? e.what()
                                : e.diagnostics().items().front().message;
            result.data_parallel.push_back(std::move(option));
            continue;
        }
        result.statistics.split_searches += pipeline.statistics.split_searches;
        result.statistics.simulations += pipeline.statistics.simulations;
        if (options.on_progress) {
            options.on_progress(result.statistics);
        }
        if (!pipeline.feasible) {
            option.reason = "no pipeline of " + std::to_string(devices / d) +
                            " devices fits a replica's share of the batch";
            result.data_parallel.push_back(std::move(option));
            continue;
        }
        // Every replica runs the plan; each stage reduces with its replicas.
        Project layout = pipeline.project;
        layout.topology = project.topology;
        layout.training.batch_size = batch;
        layout.data_parallel = project.data_parallel;
        layout.data_parallel.size = d;
        layout.data_parallel.replicas.clear();
        option.stages = static_cast<int>(pipeline.plan.stages.size());
        option.schedule = pipeline.plan.schedule;
        option.microbatches = pipeline.plan.microbatches;
        auto judged =
            judge_zero_stages(layout, options, option.reason, result.statistics.simulations);
        if (!judged) {
            result.data_parallel.push_back(std::move(option));
            continue;
        }
        option.zero_stage = judged->zero_stage;
        option.iteration_s = judged->report.iteration_time_s;
        option.reason.clear();
        result.data_parallel.push_back(std::move(option));
        if (!best || judged->report.iteration_time_s < best->report.iteration_time_s) {
            best = std::move(judged);
            best_pipeline = std::move(pipeline);
        }
    }

    if (best) {
        result.feasible = true;
        result.project = best->project;
        result.bottleneck_s = best_pipeline.bottleneck_s;
        result.plan.stages = best_pipeline.plan.stages;
        result.plan.schedule = best_pipeline.plan.schedule;
        result.plan.microbatches = best_pipeline.plan.microbatches;
        result.plan.report = std::move(best->report);
        // The uniform split of one replica, spread over the replicas alike.
        if (best_pipeline.uniform.report) {
            result.uniform = best_pipeline.uniform;
            planner::simulate_outcome(
                result.uniform,
                with_placement(result.project, best_pipeline.uniform.stages,
                               best_pipeline.uniform.schedule, best_pipeline.uniform.microbatches),
                planner::analysis_options(options), options.costs);
            ++result.statistics.simulations;
        }
        const int d = result.project.data_parallel.size;
        std::string why = std::to_string(d) + (d == 1 ? " replica" : " replicas") + " of a " +
                          std::to_string(result.plan.stages.size()) + "-stage pipeline " +
                          zero_words(result.project.data_parallel.zero_stage) + ": " +
                          format_duration(result.plan.report->iteration_time_s) + " per iteration";
        std::string others;
        for (const DataParallelOption& o : result.data_parallel) {
            if (o.replicas == d) {
                continue;
            }
            others += (others.empty() ? "" : "; ") + std::to_string(o.replicas) + " × " +
                      (o.iteration_s
                           ? std::to_string(o.stages) + " stages " + format_duration(*o.iteration_s)
                           : std::string("nothing fits (") + o.reason + ")");
        }
        if (!others.empty()) {
            why += " (the fastest that fits; " + others + ")";
        }
        if (result.project.data_parallel.zero_stage > 0) {
            why +=
                "; a lower ZeRO stage " + std::string(result.project.data_parallel.zero_stage == 1
                                                          ? "does not fit"
                                                          : "does not fit or is slower");
        }
        result.data_parallel_choice = why;
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
