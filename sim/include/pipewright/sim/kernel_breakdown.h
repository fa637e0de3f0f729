#pragma once

// Where a stage's time goes: the kernels its layers launch for one
// micro-batch (layer_kernels.h), priced on its device (kernel_cost.h) and
// grouped by kernel across the stage's layers, so that `simulate --json`,
// `simulate --kernels` and the studio's block tooltips can say "qkv 31 % ·
// flash attention 22 % …".

#include <string>
#include <vector>

#include "pipewright/core/analysis.h"
#include "pipewright/sim/cost_model.h"
#include "pipewright/sim/layer_kernels.h"

namespace pipewright {

// One kernel of a stage's pass, summed over the layers that launch it.
struct KernelShare {
    std::string name;  // "qkv", "layernorm backward"
    KernelKind kind = KernelKind::memory;
    int count = 0;       // launches per micro-batch (one a layer)
    double seconds = 0;  // launches included
    double flops = 0;    // executed
    double bytes = 0;
    int memory_bound = 0;  // of the launches, those limited by their bytes
};

// One pass (F, I or W) of a stage: its kernels, slowest first.
struct PassKernels {
    std::vector<KernelShare> kernels;
    double seconds = 0;  // the kernels' sum (the stage's pass without collectives)
};

struct StageKernels {
    PassKernels forward;
    PassKernels backward_input;
    PassKernels backward_weight;
    // Layers whose time comes from elsewhere (a profile, the project's
    // cost), with no kernels to show: their names. With the flat model
    // (--efficiency) every layer is so.
    std::vector<std::string> not_kernels;
};

// Every stage's kernels, in stage order. Identical neighbouring layers are
// lowered once.
[[nodiscard]] std::vector<StageKernels> stage_kernels(const AnalyzedProject& project,
                                                      const CostModelOptions& options);

// "qkv 31 % · flash attention 22 % · mlp up 18 % · 3 more 29 %": the
// slowest `shown` kernels' shares of the pass; empty without kernels.
[[nodiscard]] std::string describe_pass(const PassKernels& pass, std::size_t shown = 4);

}  // namespace pipewright
