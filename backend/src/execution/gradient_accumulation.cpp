#include "execution/gradient_accumulation.h"

namespace pipewright::backend {

void add_gradients(const std::vector<torch::Tensor>& params,
                   const std::vector<torch::Tensor>& grads) {
    const torch::NoGradGuard no_grad;
    for (std::size_t i = 0; i < grads.size(); ++i) {
        if (!grads[i].defined()) {
            continue;
        }
        auto& acc = params[i].mutable_grad();
        if (acc.defined()) {
            acc.add_(grads[i]);
        } else {
            acc = grads[i].clone();
        }
    }
}

void accumulate_weight_gradients(const torch::Tensor& root, const torch::Tensor& grad,
                                 const std::vector<torch::Tensor>& params) {
    std::vector<torch::Tensor> seed;
    if (grad.defined()) {
        seed.push_back(grad);
    }
    add_gradients(params, torch::autograd::grad({root}, params, seed, /*retain_graph=*/false,
                                                /*create_graph=*/false, /*allow_unused=*/true));
}

}  // namespace pipewright::backend
