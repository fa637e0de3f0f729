#include "pipewright/sim/attention_note.h"

#include <set>

#include "pipewright/core/quantity_format.h"
#include "pipewright/core/transformer_dims.h"

namespace pipewright {

namespace {

std::string percent(double fraction) {
    return format_fixed(fraction * 100, 0) + " %";
}

}  // namespace

std::string attention_kernel_note(const AnalyzedProject& project, const CostModelOptions& costs) {
    const Project& p = project.project;
    if (costs.flat_efficiency || !any_flash_attention(p.model.layers)) {
        return {};
    }
    const AttentionKernel kernel = p.training.attention_kernel;
    std::set<std::string> seen;
    std::string note;
    for (const auto& replica : project.replica_specs) {
        for (const DeviceSpec& spec : replica) {
            if (spec.kind != "gpu" || !seen.insert(spec.name).second) {
                continue;
            }
            const auto rate = spec.attention_rate(kernel);
            if (!rate) {
                continue;  // refused by the analysis
            }
            const std::string shares = percent(rate->forward) + " / " + percent(rate->backward);
            note += note.empty() ? "flash attention: " : "; ";
            note += std::string(display_name(kernel));
            note += spec.measured_attention(kernel)
                        ? " at " + shares + " of " + spec.name + "'s peak (forward / backward)"
                        : " not measured on " + spec.name + ": priced at " + shares +
                              " of its peak, the A100's share of the matmul rate";
        }
    }
    return note;
}

std::string unused_attention_kernel_warning(const Project& project) {
    const AttentionKernel kernel = project.training.attention_kernel;
    if (kernel == AttentionKernel::flash2 || any_flash_attention(project.model.layers)) {
        return {};
    }
    return "training.attention_kernel \"" + std::string(to_string(kernel)) +
           "\" prices the blocks with flash_attention, and this model has none: its attention "
           "runs unfused, as the simulation prices it (set flash_attention on the blocks to run " +
           std::string(display_name(kernel)) + ")";
}

}  // namespace pipewright
