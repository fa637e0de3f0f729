// The planner's driver: checks the options, runs the candidate search, lets
// the simulator judge the best candidates under every schedule that applies,
// and compares the winner with the input placement and a uniform split.

#include "pipewright/sim/planner.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>

#include "pipewright/core/schedule_generators.h"
#include "planner/internal.h"
#include "planner/tensor_groups.h"

namespace pipewright {

namespace {

using planner::analysis_options;
using planner::Candidate;
using planner::Context;
using planner::divisors;
using planner::MemoryRule;
using planner::simulate_outcome;
using planner::stages_of;
using planner::unless_ruled_out;

std::size_t at(int i) {
    return static_cast<std::size_t>(i);
}

}  // namespace

namespace planner {

std::vector<int> divisors(int n) {
    std::vector<int> out;
    for (int k = 1; k <= n; ++k) {
        if (n % k == 0) {
            out.push_back(k);
        }
    }
    return out;
}

void check_plan_options(const Project& project, const PlanOptions& options) {
    if (options.schedule) {
        const ScheduleInfo* info = find_schedule(*options.schedule);
        if (info == nullptr) {
            std::string known;
            for (const auto& s : schedule_catalog()) {
                known += (known.empty() ? "" : ", ") + s.name;
            }
            throw InputError("--schedule", "unknown schedule \"" + *options.schedule +
                                               "\" (known: " + known + ")");
        }
    }
    const int batch = project.training.batch_size;
    if (batch < 1) {
        throw InputError("training.batch_size", "must be at least 1");
    }
    if (options.microbatches) {
        const int m = *options.microbatches;
        if (m < 1 || m > batch || batch % m != 0) {
            throw InputError("--microbatches",
                             std::to_string(m) + " does not divide the batch of " +
                                 std::to_string(batch) + " samples into equal micro-batches");
        }
        if (options.schedule && schedule_kind(*options.schedule) == ScheduleKind::naive && m != 1) {
            throw InputError("--microbatches",
                             "naive model parallelism runs the whole batch as one micro-batch");
        }
    }
}

std::vector<PlannedStage> stages_of(const Context& context, const std::vector<int>& devices,
                                    const std::vector<int>& first) {
    std::vector<PlannedStage> out;
    for (std::size_t k = 0; k < devices.size(); ++k) {
        out.push_back({context.cluster().devices[at(devices[k])].path, first[k], first[k + 1] - 1});
    }
    return out;
}

// Simulates a whole project the way `pipewright simulate` does.
void simulate_outcome(PlanOutcome& outcome, const Project& project, const AnalysisOptions& analysis,
                      const CostModelOptions& costs) {
    Diagnostics diagnostics;
    auto analyzed = analyze_project(project, analysis, diagnostics);
    if (!analyzed) {
        outcome.reason = diagnostics.items().empty() ? "cannot be analysed"
                                                     : diagnostics.items().front().message;
        return;
    }
    simulate_analyzed(outcome, *analyzed, costs);
}

void simulate_analyzed(PlanOutcome& outcome, const AnalyzedProject& analyzed,
                       const CostModelOptions& costs) {
    outcome.schedule = analyzed.schedule.name;
    outcome.microbatches = analyzed.microbatches;
    outcome.stages.clear();
    for (const auto& stage : analyzed.stages) {
        outcome.stages.push_back(
            {analyzed.ranks[at(stage.rank)].path, stage.first_layer, stage.last_layer});
    }
    outcome.report = unless_ruled_out(
        [&] { return simulate_project(analyzed, costs, Recording::summary); }, outcome.reason);
}

double iteration_floor(const Project& project, const PlanOptions& options) {
    Project eager = project;
    eager.training.recompute = Recompute::none;
    Context context(eager, options);
    const int usable = std::min(context.devices(), context.layers());
    double floor = std::numeric_limits<double>::infinity();
    const std::vector<int> counts =
        options.microbatches ? std::vector<int>{*options.microbatches} : divisors(context.batch());
    for (const int m : counts) {
        floor = std::min(floor, context.table(m).min_total * m / usable);
    }
    return floor;
}

void check_tensor_parallel_size(int size, const std::string& path) {
    if (size < 0 || size > kMaxTensorParallel) {
        throw InputError(
            path, "must be from 1 to " + std::to_string(kMaxTensorParallel) + " (or 0 to search)");
    }
}

AnalysisOptions analysis_options(const PlanOptions& options) {
    AnalysisOptions analysis;
    analysis.catalog = options.catalog;
    analysis.base_dir = options.base_dir;
    analysis.replica_alone = true;
    return analysis;
}

}  // namespace planner

InFlight activations_in_flight(ScheduleKind schedule, int stage, int stages, int microbatches) {
    InFlight f;
    if (schedule == ScheduleKind::naive) {
        return f;
    }
    if (schedule == ScheduleKind::zb_h2) {
        // Twice 1F1B's warm-up: stage k runs F(x), I(x - 2(p-1-k)),
        // W(x - 2(p-1)), so it holds 2(p-1-k) + 1 whole micro-batches and
        // 2k that wait for their weight gradients.
        f.full = std::min(2 * (stages - 1 - stage) + 1, microbatches);
        f.weight_only = std::max(0, std::min(2 * stage, microbatches - f.full));
        return f;
    }
    if (schedule == ScheduleKind::one_f_one_b || schedule == ScheduleKind::zb_h1) {
        f.full = std::min(stages - stage, microbatches);
        if (schedule == ScheduleKind::zb_h1) {
            // Rank k holds back its first k weight gradients (docs/planner.md).
            f.weight_only = std::max(0, std::min(stage, microbatches - f.full));
        }
        return f;
    }
    f.full = microbatches;  // gpipe: every forward before any backward
    return f;
}

InFlight activations_in_flight(const std::string& schedule, int stage, int stages,
                               int microbatches) {
    const auto kind = schedule_kind(schedule);
    if (!kind) {
        throw InputError("schedule", "unknown schedule \"" + schedule + "\"");
    }
    return activations_in_flight(*kind, stage, stages, microbatches);
}

std::vector<PlannedStage> uniform_split(const Project& project) {
    const auto all = project.topology.devices();
    std::vector<DeviceLocation> devices;
    for (const int i : planner::tensor_leaders(project.topology, project.tensor_parallel.size)) {
        devices.push_back(all[at(i)]);
    }
    const auto layers = static_cast<int>(project.model.layers.size());
    const int count = std::min(static_cast<int>(devices.size()), layers);
    std::vector<PlannedStage> out;
    for (int k = 0; k < count; ++k) {
        const int first = static_cast<int>(static_cast<long long>(layers) * k / count);
        const int next = static_cast<int>(static_cast<long long>(layers) * (k + 1) / count);
        out.push_back({devices[at(k)].path, first, next - 1});
    }
    return out;
}

std::vector<PlannedStage> parameter_balanced_split(const Project& project,
                                                   const DeviceCatalog* catalog) {
    PlanOptions options;
    options.catalog = catalog;
    Context context(project, options);
    const auto& layers = context.base().layers;
    const int count = std::min(context.devices(), context.layers());
    std::vector<long long> prefix(layers.size() + 1, 0);
    for (std::size_t l = 0; l < layers.size(); ++l) {
        prefix[l + 1] = prefix[l] + layers[l].parameters;
    }
    const int total_layers = context.layers();
    // Greedy is exact for a bound on parameters (a monotone cost): each stage
    // takes as many layers as fit, leaving one for every stage after it.
    const auto split = [&](long long bound, std::vector<int>& first) {
        first.assign(1, 0);
        int a = 0;
        for (int k = 0; k < count; ++k) {
            const int last_allowed = total_layers - (count - 1 - k);
            int i = a + 1;
            if (prefix[at(i)] - prefix[at(a)] > bound) {
                return false;
            }
            while (i < last_allowed && prefix[at(i + 1)] - prefix[at(a)] <= bound) {
                ++i;
            }
            first.push_back(i);
            a = i;
        }
        return a == total_layers;
    };
    long long lo = 0;
    long long hi = prefix.back();
    std::vector<int> first;
    while (lo < hi) {
        const long long mid = lo + (hi - lo) / 2;
        if (split(mid, first)) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    (void)split(hi, first);
    std::vector<int> devices(at(count));
    for (int k = 0; k < count; ++k) {
        devices[at(k)] = k;
    }
    return stages_of(context, devices, first);
}

Project with_placement(const Project& project, const std::vector<PlannedStage>& stages,
                       const std::string& schedule, int microbatches) {
    Project out = project;
    out.placement.clear();
    for (const auto& stage : stages) {
        StageAssignment assignment{stage.device, {}};
        for (int l = stage.first_layer; l <= stage.last_layer; ++l) {
            assignment.layers.push_back(project.model.layers[at(l)].name);
        }
        out.placement.push_back(std::move(assignment));
    }
    out.training.schedule = ScheduleChoice{schedule, ""};
    out.training.microbatches = microbatches;
    out.training.microbatch_size.reset();
    // The planner prices full recomputation per unit, every unit of a stage:
    // a plan recomputes every block or none.
    out.training.recompute_blocks.reset();
    return out;
}

SplitResult best_split(const Project& project, const PlanOptions& options, int microbatches,
                       const std::string& schedule, std::optional<int> stages) {
    PlanOptions checked = options;
    checked.schedule = schedule;
    checked.microbatches = microbatches;
    planner::check_plan_options(project, checked);
    const ScheduleKind kind = *schedule_kind(schedule);  // check_plan_options knows it
    if (planner::is_looped(kind)) {
        throw InputError("schedule", "best_split places one stage per device; " + schedule +
                                         " needs a looped placement (plan_pipeline searches "
                                         "those)");
    }
    Context context(project, options);
    const auto& table = context.table(microbatches);
    const MemoryRule rule = planner::rule_of(kind);
    SplitResult best;
    const int most = std::min(context.devices(), context.layers());
    for (int p = stages.value_or(1); p <= stages.value_or(most); ++p) {
        if (!planner::rule_for(kind, microbatches, p)) {
            continue;
        }
        for (int o : context.distinct_orders(p)) {
            const auto problem = context.problem(table, at(o), p, rule);
            const auto split = planner::min_bottleneck_split(problem);
            if (split.feasible && (!best.feasible || split.value < best.bottleneck_s)) {
                best.feasible = true;
                best.bottleneck_s = split.value;
                const auto& order = context.orders()[at(o)];
                best.devices.assign(order.begin(), order.begin() + p);
                best.first_layer.assign(split.first.begin(), split.first.end() - 1);
            }
        }
    }
    return best;
}

namespace {

PlanResult plan_layout(const Project& project, const PlanOptions& options) {
    // Expert and context parallelism group replicas: the layout search
    // keeps the project's sizes and lays out replica counts they divide.
    const bool grouped = options.expert_parallel.value_or(project.expert_parallel.size) != 1 ||
                         options.context_parallel.value_or(project.context_parallel.size) != 1;
    const int tensor = options.tensor_parallel.value_or(project.tensor_parallel.size);
    if (grouped || tensor == 0 || options.data_parallel.value_or(project.data_parallel.size) != 1) {
        return plan_data_parallel(project, options);
    }
    // One pipeline: the layout options become the project's own settings.
    Project one = project;
    PlanOptions rest = options;
    if (options.tensor_parallel || options.sequence_parallel) {
        planner::check_tensor_parallel_size(tensor, "--tensor-parallel");
        one.tensor_parallel.size = tensor;
        one.tensor_parallel.sequence_parallel =
            options.sequence_parallel.value_or(project.tensor_parallel.sequence_parallel);
        rest.tensor_parallel.reset();
        rest.sequence_parallel.reset();
    }
    if (one.data_parallel.size != 1) {
        one.data_parallel = DataParallel{};  // --data-parallel 1
    }
    return planner::plan_one_pipeline(one, rest, DataParallel{});
}

}  // namespace

PlanResult plan_pipeline(const Project& project, const PlanOptions& options) {
    PlanResult result = plan_layout(project, options);
    if (options.fewest_recomputed_blocks) {
        planner::narrow_recomputation(result, project, options);
    }
    return result;
}

}  // namespace pipewright
