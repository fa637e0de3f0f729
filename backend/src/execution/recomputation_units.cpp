#include "execution/recomputation_units.h"

#include <algorithm>
#include <set>
#include <string>
#include <utility>

#include "execution/gradient_accumulation.h"
#include "execution/random_replay.h"
#include "pipewright/backend/backend_error.h"
#include "pipewright/backend/modules.h"
#include "pipewright/core/recomputation_units.h"

namespace pipewright::backend {

StageUnits::StageUnits(const AnalyzedProject& project, const torch::nn::Sequential& stage,
                       int first, int last)
    : stage_(stage) {
    const auto& layers = project.project.model.layers;
    const auto names = stage->named_children().keys();
    std::set<std::string> layer_modules;
    for (int l = first; l <= last; ++l) {
        layer_modules.insert(stage_module_name(layers[static_cast<std::size_t>(l)]));
    }
    const std::vector<bool> rebuilt =
        rebuilt_layers(layers, first, last, project.project.training.recompute_blocks);
    for (const int l : recomputation_units(layers, first, last)) {
        rebuilt_.push_back(rebuilt[static_cast<std::size_t>(l - first)]);
        const LayerSpec& layer = layers[static_cast<std::size_t>(l)];
        auto m = static_cast<std::size_t>(
            std::find(names.begin(), names.end(), stage_module_name(layer)) - names.begin());
        if (m == names.size()) {
            throw BackendError("layer \"" + layer.name + "\" has no module in its stage");
        }
        // The modules before it that are no layer (redistributions) go with it.
        while (m > 0 && !layer_modules.contains(names[m - 1])) {
            --m;
        }
        starts_.push_back(m);
    }
    starts_.push_back(names.size());
}

torch::Tensor StageUnits::run(std::size_t u, torch::Tensor x) {
    for (std::size_t m = starts_.at(u); m < starts_.at(u + 1); ++m) {
        x = (stage_->begin() + static_cast<std::ptrdiff_t>(m))->forward(std::move(x));
    }
    return x;
}

torch::Tensor StageUnits::forward_keeping(torch::Tensor input, KeptUnits& kept, bool random,
                                          const torch::Device& device) {
    for (std::size_t u = 0; u < size(); ++u) {
        if (u > 0) {
            // A unit that keeps its graph starts it from a leaf of its own,
            // whose gradient its backward hands to the unit before.
            kept.inputs.push_back(rebuilt_[u] ? input : input.detach().requires_grad_(true));
            input = kept.inputs.back();
        }
        if (random) {
            kept.random_states.push_back(random_state(device));
        }
        if (rebuilt_[u]) {
            const torch::NoGradGuard no_graph;
            input = run(u, std::move(input));
            kept.outputs.emplace_back();
        } else {
            input = run(u, std::move(input));
            kept.outputs.push_back(input);
        }
    }
    return input;
}

std::pair<torch::Tensor, torch::Tensor> StageUnits::unit_for_backward(std::size_t u,
                                                                      const torch::Tensor& input,
                                                                      KeptUnits& kept,
                                                                      const torch::Device& device) {
    if (!rebuilt_[u]) {
        return {u == 0 ? input : kept.inputs[u - 1],
                std::exchange(kept.outputs[u], torch::Tensor())};
    }
    const torch::Tensor x = u == 0 ? input : kept.inputs[u - 1].detach().requires_grad_(true);
    const ReplayRandomState replay(device, kept.random_state(u));
    return {x, run(u, x)};
}

void StageUnits::backward(const torch::Tensor& input, KeptUnits& kept, torch::Tensor output_grad,
                          const std::function<torch::Tensor(const torch::Tensor&)>& loss,
                          const torch::Device& device) {
    for (std::size_t u = size(); u-- > 0;) {
        const auto [x, y] = unit_for_backward(u, input, kept, device);
        const bool last = u + 1 == size() && loss;
        const torch::Tensor root = last ? loss(y) : y;
        if (!root.requires_grad()) {
            // A first unit without parameters (a ReLU alone): nothing in it
            // asks for a gradient.
            break;
        }
        if (last) {
            torch::autograd::backward({root});
        } else {
            torch::autograd::backward({root}, {output_grad});
        }
        if (u > 0) {
            output_grad = x.grad();
            kept.inputs[u - 1] = torch::Tensor();
        }
    }
}

torch::Tensor StageUnits::input_gradient(
    const torch::Tensor& input, KeptUnits& kept, torch::Tensor output_grad,
    const std::function<torch::Tensor(const torch::Tensor&)>& loss, const torch::Device& device) {
    kept.roots.assign(size(), torch::Tensor());
    kept.root_grads.assign(size(), torch::Tensor());
    for (std::size_t u = size(); u-- > 0;) {
        const auto [x, y] = unit_for_backward(u, input, kept, device);
        const bool last = u + 1 == size() && loss;
        kept.roots[u] = last ? loss(y) : y;
        kept.root_grads[u] = last ? torch::Tensor() : output_grad;
        if (!x.requires_grad() || !kept.roots[u].requires_grad()) {
            // The first stage's token ids, or a first unit without
            // parameters: no gradient flows further back.
            return {};
        }
        std::vector<torch::Tensor> seed;
        if (!last) {
            seed.push_back(output_grad);
        }
        output_grad = torch::autograd::grad({kept.roots[u]}, {x}, seed, /*retain_graph=*/true)[0];
        if (u > 0) {
            kept.inputs[u - 1] = torch::Tensor();
        }
    }
    return output_grad;
}

void StageUnits::weight_gradient(KeptUnits& kept, const std::vector<torch::Tensor>& params) {
    for (std::size_t u = 0; u < kept.roots.size(); ++u) {
        if (kept.roots[u].defined() && kept.roots[u].requires_grad()) {
            accumulate_weight_gradients(kept.roots[u], kept.root_grads[u], params);
        }
    }
    kept.roots.clear();
    kept.root_grads.clear();
}

}  // namespace pipewright::backend
