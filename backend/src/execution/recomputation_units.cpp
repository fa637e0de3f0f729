#include "execution/recomputation_units.h"

#include <algorithm>
#include <string>

#include "execution/random_replay.h"
#include "pipewright/core/recomputation_units.h"

namespace pipewright::backend {

StageUnits::StageUnits(const AnalyzedProject& project, const torch::nn::Sequential& stage,
                       int first, int last)
    : stage_(stage) {
    const auto& layers = project.project.model.layers;
    const auto names = stage->named_children().keys();
    // Modules that are not a layer of the stage, waiting for the layer they
    // go with.
    std::size_t pending = 0;
    bool waiting = false;
    int layer = first;
    for (std::size_t m = 0; m < names.size(); ++m) {
        std::string expected;
        if (layer <= last) {
            expected = layers[static_cast<std::size_t>(layer)].name;
            std::replace(expected.begin(), expected.end(), '.', '_');
        }
        if (names[m] != expected) {
            if (!waiting) {
                pending = m;
                waiting = true;
            }
            continue;
        }
        if (layer == first || begins_recomputation_unit(layers, layer)) {
            starts_.push_back(waiting ? pending : m);
        }
        waiting = false;
        ++layer;
    }
    if (starts_.empty() || starts_.front() != 0) {
        starts_.insert(starts_.begin(), 0);
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
    if (random) {
        kept.first_random_state = random_state(device);
    }
    const torch::NoGradGuard no_graph;
    for (std::size_t u = 0; u < size(); ++u) {
        if (u > 0) {
            kept.inputs.push_back(input);
            if (random) {
                kept.random_states.push_back(random_state(device));
            }
        }
        input = run(u, std::move(input));
    }
    return input;
}

void StageUnits::backward(const torch::Tensor& input, KeptUnits& kept, torch::Tensor output_grad,
                          const std::function<torch::Tensor(const torch::Tensor&)>& loss,
                          const torch::Device& device) {
    for (std::size_t u = size(); u-- > 0;) {
        const torch::Tensor x = u == 0 ? input : kept.inputs[u - 1].detach().requires_grad_(true);
        torch::Tensor y;
        {
            const ReplayRandomState replay(device, u == 0 || kept.random_states.empty()
                                                       ? kept.first_random_state
                                                       : kept.random_states[u - 1]);
            y = run(u, x);
        }
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

}  // namespace pipewright::backend
