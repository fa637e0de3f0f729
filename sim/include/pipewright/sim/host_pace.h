#pragma once

// Where the simulated kernels come faster than a framework's host can issue
// them. The simulation assumes the host keeps ahead of the GPU, paying only
// each kernel's launch. Measured Megatron-DeepSpeed runs on A100s (vTrain's
// 1,440 single-node runs, docs/validation.md) never went below about 3 ms
// per transformer layer and micro-batch, some 52 of the simulation's
// kernels: the eager framework's host time (Python, dispatch, the
// checkpointing's bookkeeping) set the pace wherever the kernels were
// shorter. The model has no host term (its constant would have to come from
// the framework's own measurements); it says so instead.

#include <optional>
#include <string>
#include <vector>

#include "pipewright/core/analysis.h"
#include "pipewright/sim/kernel_breakdown.h"

namespace pipewright {

// The fastest the measured runs issued kernels, counted as the simulation
// counts them: 2.98 ms (the least any of the 1,440 runs took per layer and
// micro-batch) over a block's 52 kernels with recomputation, 57 µs, rounded
// down.
inline constexpr double kMeasuredHostSecondsPerKernel = 55e-6;

// The GPU stage whose kernels are shortest on average, over its forward,
// input- and weight-gradient passes of one micro-batch (stage_kernels).
struct KernelPace {
    int stage = 0;
    std::string device;  // the stage's device path
    int launches = 0;    // a micro-batch, recomputation not counted
    double seconds_per_kernel = 0;

    // Faster than the measured runs ever issued kernels.
    [[nodiscard]] bool likely_host_bound() const {
        return seconds_per_kernel < kMeasuredHostSecondsPerKernel;
    }
};

// Nullopt when no stage on a GPU is priced by kernels (a profile, given
// costs, the flat model, CPU workers).
[[nodiscard]] std::optional<KernelPace> shortest_kernels(const AnalyzedProject& project,
                                                         const std::vector<StageKernels>& kernels);

// "the kernels of stage 0 (node0/c0/gpu0) take 12 µs each on average, …":
// why a run at this pace is likely paced by its host. Starts in lower case,
// without a final stop.
[[nodiscard]] std::string host_pace_message(const KernelPace& pace);

// host_pace_message for the shortest kernels when they average under
// kMeasuredHostSecondsPerKernel; nullopt otherwise.
[[nodiscard]] std::optional<std::string> host_pace_warning(
    const AnalyzedProject& project, const std::vector<StageKernels>& kernels);

// The same for a layout not yet analysed (a plan's, one whose schedules are
// compared), analysed with `options` (its folder, the calibrated catalog)
// and priced with `costs`; nullopt as well when it does not analyse.
[[nodiscard]] std::optional<std::string> host_pace_warning(const Project& layout,
                                                           const AnalysisOptions& options,
                                                           const CostModelOptions& costs);

}  // namespace pipewright
