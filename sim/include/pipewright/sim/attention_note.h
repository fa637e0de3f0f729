#pragma once

// What the summary's Costs line says about flash attention: the kernel that
// prices the layout's flash-attention blocks and the share of each GPU
// type's peak it reaches, and where that share is not measured.

#include <string>

#include "pipewright/core/analysis.h"
#include "pipewright/sim/cost_model.h"

namespace pipewright {

// "flash attention: FlashAttention-3 at 62 % / 57 % of H100-SXM's peak
// (forward / backward)"; empty for a model without flash attention, on CPU
// devices only, or when `costs` price no kernel (the flat --efficiency).
[[nodiscard]] std::string attention_kernel_note(const AnalyzedProject& project,
                                                const CostModelOptions& costs = {});
// Why training.attention_kernel changes nothing: it names a kernel other
// than the default for a model without flash-attention blocks, whose
// attention is unfused. Empty where it does what it says.
[[nodiscard]] std::string unused_attention_kernel_warning(const Project& project);

}  // namespace pipewright
