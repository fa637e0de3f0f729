#include "pipewright/core/core_sharing.h"

#include <algorithm>
#include <cstdio>

#include "pipewright/core/analysis.h"
#include "pipewright/core/launch_layout.h"

namespace pipewright {

double core_sharing(int cores, int threads, int ranks, int measured_ranks) {
    if (cores <= 0) {
        return 1;
    }
    const double per_rank = std::max(1, threads);
    const auto turns = [&](int n) { return std::max(1.0, std::max(1, n) * per_rank / cores); };
    return std::max(1.0, turns(ranks) / turns(measured_ranks));
}

std::optional<std::string> core_sharing_warning(std::string_view measurement, int cores,
                                                int threads, int ranks, int measured_ranks) {
    threads = std::max(1, threads);
    if (cores <= 0 || ranks * threads <= cores) {
        return std::nullopt;
    }
    char factor[16];
    std::snprintf(factor, sizeof factor, "%.3g",
                  core_sharing(cores, threads, ranks, measured_ranks));
    return std::string(measurement) + " was measured on a machine of " + std::to_string(cores) +
           (cores == 1 ? " core" : " cores") + ", and this layout runs " + std::to_string(ranks) +
           " CPU ranks of " + std::to_string(threads) +
           (threads == 1 ? " Torch thread" : " Torch threads") +
           " each, which take turns on the cores: the simulation times their compute " + factor +
           " times as long as " + std::string(measurement) +
           " measured it, as if every rank computed at every moment, but not the waits their "
           "turns add where ranks exchange data, which make a run slower still; run it on a "
           "machine with " +
           std::to_string(ranks * threads) + " cores or more, or with fewer ranks";
}

namespace {

// A CPU device of the project that a calibration measured, or null (one
// calibration prices every device of its spec alike).
const DeviceSpec* calibrated_cpu(const AnalyzedProject& project) {
    for (const auto& specs : project.replica_specs) {
        for (const DeviceSpec& spec : specs) {
            if (spec.kind == "cpu" && spec.calibrated_cores > 0) {
                return &spec;
            }
        }
    }
    for (const DeviceSpec& spec : project.rank_specs) {
        if (spec.kind == "cpu" && spec.calibrated_cores > 0) {
            return &spec;
        }
    }
    return nullptr;
}

}  // namespace

void share_calibrated_cores(AnalyzedProject& project) {
    const DeviceSpec* cpu = calibrated_cpu(project);
    if (cpu == nullptr) {
        return;
    }
    // A pass over every process, only for projects a CPU calibration prices.
    const int ranks = launch_layout(project).ranks_per_node;
    const auto share = [&](DeviceSpec& spec) {
        if (spec.kind == "cpu" && spec.calibrated_cores > 0) {
            spec.core_sharing = core_sharing(spec.calibrated_cores, spec.calibrated_threads, ranks);
        }
    };
    std::for_each(project.rank_specs.begin(), project.rank_specs.end(), share);
    for (auto& specs : project.replica_specs) {
        std::for_each(specs.begin(), specs.end(), share);
    }
}

std::optional<std::string> calibrated_core_sharing_warning(const AnalyzedProject& project) {
    const DeviceSpec* cpu = calibrated_cpu(project);
    if (cpu == nullptr || cpu->core_sharing <= 1) {
        return std::nullopt;
    }
    return core_sharing_warning("the calibration", cpu->calibrated_cores, cpu->calibrated_threads,
                                launch_layout(project).ranks_per_node);
}

}  // namespace pipewright
