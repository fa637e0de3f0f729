#include "pipewright/sim/kernel_breakdown.h"

#include <algorithm>
#include <cmath>

#include "pipewright/sim/kernel_cost.h"

namespace pipewright {
namespace {

// Adds `kernels` (priced on `device`) to `pass`, grouped by name.
void add_kernels(PassKernels& pass, const std::vector<Kernel>& kernels, const DeviceSpec& device,
                 DType dtype) {
    for (const Kernel& k : kernels) {
        const KernelTime t = kernel_time(k, device, dtype);
        auto it = std::find_if(pass.kernels.begin(), pass.kernels.end(),
                               [&k](const KernelShare& s) { return s.name == k.name; });
        if (it == pass.kernels.end()) {
            pass.kernels.push_back({std::string(k.name), k.kind, 0, 0, 0, 0, 0});
            it = std::prev(pass.kernels.end());
        }
        it->count += 1;
        it->seconds += t.seconds;
        it->flops += k.work_flops();
        it->bytes += k.bytes;
        it->memory_bound += t.memory_bound() ? 1 : 0;
        pass.seconds += t.seconds;
    }
}

void slowest_first(PassKernels& pass) {
    std::stable_sort(
        pass.kernels.begin(), pass.kernels.end(),
        [](const KernelShare& a, const KernelShare& b) { return a.seconds > b.seconds; });
}

}  // namespace

std::vector<StageKernels> stage_kernels(const AnalyzedProject& project,
                                        const CostModelOptions& options) {
    std::vector<StageKernels> out;
    out.reserve(project.stages.size());
    const DType dtype = project.project.training.dtype;
    for (const auto& stage : project.stages) {
        const DeviceSpec& device = project.rank_specs.at(static_cast<std::size_t>(stage.rank));
        StageKernels s;
        LayerKernels kernels;
        for (int l = stage.first_layer; l <= stage.last_layer; ++l) {
            const auto& spec = project.project.model.layers.at(static_cast<std::size_t>(l));
            const bool measured =
                options.profile != nullptr && options.profile->find(spec.name) != nullptr;
            if (options.flat_efficiency || measured || spec.cost) {
                s.not_kernels.push_back(spec.name);
                continue;
            }
            // A run of identical blocks is lowered once.
            if (l == stage.first_layer || !same_layer_cost(project, l - 1, l, options)) {
                kernels = project_layer_kernels(project, l);
            }
            add_kernels(s.forward, kernels.forward, device, dtype);
            add_kernels(s.backward_input, kernels.backward_input, device, dtype);
            add_kernels(s.backward_weight, kernels.backward_weight, device, dtype);
        }
        if (static_cast<std::size_t>(stage.last_layer) + 1 == project.layers.size()) {
            const LossKernels loss = project_loss_kernels(project, options);
            add_kernels(s.forward, loss.kernels.forward, device, dtype);
            add_kernels(s.backward_input, loss.kernels.backward_input, device, dtype);
        }
        slowest_first(s.forward);
        slowest_first(s.backward_input);
        slowest_first(s.backward_weight);
        out.push_back(std::move(s));
    }
    return out;
}

std::string describe_pass(const PassKernels& pass, std::size_t shown) {
    if (pass.kernels.empty() || pass.seconds <= 0) {
        return "";
    }
    auto percent = [&pass](double seconds) {
        return std::to_string(std::lround(100 * seconds / pass.seconds)) + " %";
    };
    std::string out;
    double rest = pass.seconds;
    for (std::size_t i = 0; i < pass.kernels.size() && i < shown; ++i) {
        const KernelShare& k = pass.kernels[i];
        out += (i == 0 ? "" : " · ") + k.name + " " + percent(k.seconds);
        rest -= k.seconds;
    }
    if (pass.kernels.size() > shown) {
        const std::size_t more = pass.kernels.size() - shown;
        out += " · " + std::to_string(more) + " more " + percent(std::max(0.0, rest));
    }
    return out;
}

}  // namespace pipewright
