#include "pipewright/sim/host_pace.h"

#include <cstdio>

#include "pipewright/core/quantity_format.h"

namespace pipewright {
namespace {

void count(const PassKernels& pass, int& launches) {
    for (const KernelShare& k : pass.kernels) {
        launches += k.count;
    }
}

}  // namespace

std::optional<KernelPace> shortest_kernels(const AnalyzedProject& project,
                                           const std::vector<StageKernels>& kernels) {
    std::optional<KernelPace> shortest;
    for (std::size_t i = 0; i < kernels.size() && i < project.stages.size(); ++i) {
        const int rank = project.stages[i].rank;
        const DeviceSpec& spec = project.rank_specs.at(static_cast<std::size_t>(rank));
        if (spec.kind != "gpu") {
            continue;
        }
        const StageKernels& stage = kernels[i];
        int launches = 0;
        count(stage.forward, launches);
        count(stage.backward_input, launches);
        count(stage.backward_weight, launches);
        const double seconds =
            stage.forward.seconds + stage.backward_input.seconds + stage.backward_weight.seconds;
        // Kernels that cost nothing (free layers on a device without a launch
        // cost) have no pace to judge.
        if (launches == 0 || seconds <= 0) {
            continue;
        }
        const double per_kernel = seconds / launches;
        if (!shortest || per_kernel < shortest->seconds_per_kernel) {
            shortest = KernelPace{static_cast<int>(i),
                                  project.ranks.at(static_cast<std::size_t>(rank)).path, launches,
                                  per_kernel};
        }
    }
    return shortest;
}

std::string host_pace_message(const KernelPace& pace) {
    char times[32];
    std::snprintf(times, sizeof times, "%.1f",
                  kMeasuredHostSecondsPerKernel / pace.seconds_per_kernel);
    return "the kernels of stage " + std::to_string(pace.stage) + " (" + pace.device + ") take " +
           format_duration(pace.seconds_per_kernel) + " each on average (" +
           std::to_string(pace.launches) +
           " a micro-batch); measured runs of an eager framework never issued kernels faster "
           "than about one every " +
           format_duration(kMeasuredHostSecondsPerKernel) +
           " (Megatron-DeepSpeed on A100s, docs/validation.md), so a real run of this layout is "
           "likely paced by its host, which the simulation does not model: its passes may take "
           "up to " +
           times +
           " times as long as simulated; a profile measured with the framework that will train "
           "includes the host's time";
}

std::optional<std::string> host_pace_warning(const AnalyzedProject& project,
                                             const std::vector<StageKernels>& kernels) {
    const auto pace = shortest_kernels(project, kernels);
    if (!pace || !pace->likely_host_bound()) {
        return std::nullopt;
    }
    return host_pace_message(*pace);
}

std::optional<std::string> host_pace_warning(const Project& layout, const AnalysisOptions& options,
                                             const CostModelOptions& costs) {
    Diagnostics problems;
    const auto analyzed = analyze_project(layout, options, problems);
    if (!analyzed) {
        return std::nullopt;
    }
    return host_pace_warning(*analyzed, stage_kernels(*analyzed, costs));
}

}  // namespace pipewright
