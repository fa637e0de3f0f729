#include "torchscript/torchscript_init.h"

#include <cmath>
#include <set>

#include <ATen/CPUGeneratorImpl.h>

#include "torchscript/torchscript_chain.h"

namespace pipewright::backend {
namespace {

bool one_of(const std::string& type, const std::set<std::string>& names) {
    return names.contains(type);
}

}  // namespace

std::vector<std::string> reinitialise(const torch::jit::Module& module, std::uint64_t seed) {
    static const std::set<std::string> fan_in_uniform = {
        "Linear",          "Conv1d",          "Conv2d",          "Conv3d",
        "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "Bilinear"};
    static const std::set<std::string> normalisations = {
        "BatchNorm1d", "BatchNorm2d",    "BatchNorm3d",    "LayerNorm",
        "GroupNorm",   "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"};
    auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
    const torch::NoGradGuard no_grad;
    std::vector<std::string> kept;
    for (const auto& sub : module.named_modules()) {
        const std::string type = module_type_name(sub.value);
        const std::string prefix = sub.name.empty() ? "" : sub.name + ".";
        // Module-level fan-in: the weight's second dimension times its kernel.
        double fan_in = 0;
        if (one_of(type, fan_in_uniform) && sub.value.hasattr("weight")) {
            const auto w = sub.value.attr("weight").toTensor();
            fan_in = w.dim() >= 2 ? static_cast<double>(w.numel() / w.size(0)) : 0;
            if (type.starts_with("ConvTranspose") && w.dim() >= 2) {
                fan_in = static_cast<double>(w.numel() / w.size(1));  // [in, out/groups, k...]
            }
        }
        for (const auto& p : sub.value.named_parameters(/*recurse=*/false)) {
            torch::Tensor t = p.value;
            if (one_of(type, fan_in_uniform) && fan_in > 0) {
                const double bound = 1 / std::sqrt(fan_in);
                t.uniform_(-bound, bound, gen);
            } else if (one_of(type, normalisations)) {
                t.fill_(p.name == "weight" ? 1.0 : 0.0);
            } else if (type == "Embedding") {
                t.normal_(0, 1, gen);
            } else {
                kept.push_back(prefix + p.name);
            }
        }
        if (one_of(type, normalisations)) {
            for (const auto& b : sub.value.named_buffers(/*recurse=*/false)) {
                if (b.name == "running_mean") {
                    b.value.zero_();
                } else if (b.name == "running_var") {
                    b.value.fill_(1.0);
                } else if (b.name == "num_batches_tracked") {
                    b.value.zero_();
                }
            }
        }
    }
    return kept;
}

}  // namespace pipewright::backend
