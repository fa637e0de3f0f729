#include "layers/fused_linear.h"

namespace pipewright::backend {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Adds `update` into the parameter's gradient, allocating it the first time.
void add_into_grad(const torch::Tensor& param, const torch::Tensor& grad_out_2d,
                   const torch::Tensor& input_2d) {
    torch::Tensor& acc = param.mutable_grad();
    if (acc.defined()) {
        acc.addmm_(grad_out_2d.t(), input_2d);
    } else {
        acc = torch::mm(grad_out_2d.t(), input_2d);
    }
}

struct LinearAccumulatingGrad : torch::autograd::Function<LinearAccumulatingGrad> {
    // The bias is optional: autograd takes no undefined tensor as an input.
    static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& input,
                                 const torch::Tensor& weight,
                                 const c10::optional<torch::Tensor>& bias) {
        ctx->save_for_backward({input});
        // The parameters themselves, not saved copies: backward writes into
        // their `.grad`.
        ctx->saved_data["weight"] = weight;
        const torch::Tensor b = bias.value_or(torch::Tensor());
        ctx->saved_data["bias"] = b;
        return torch::nn::functional::linear(input, weight, b);
    }

    static variable_list backward(AutogradContext* ctx, variable_list grads) {
        const torch::Tensor input = ctx->get_saved_variables()[0];
        const torch::Tensor weight = ctx->saved_data["weight"].toTensor();
        const torch::Tensor bias = ctx->saved_data["bias"].toTensor();
        const torch::Tensor& grad_out = grads[0];
        torch::Tensor grad_input;
        if (ctx->needs_input_grad(0)) {
            grad_input = torch::matmul(grad_out, weight);
        }
        const bool weight_needed = ctx->needs_input_grad(1);
        const bool bias_needed = bias.defined() && ctx->needs_input_grad(2);
        if (weight_needed || bias_needed) {
            // Batch and sequence dimensions fold into the rows of one GEMM.
            const torch::Tensor g2 = grad_out.reshape({-1, grad_out.size(-1)});
            const torch::NoGradGuard no_grad;
            if (weight_needed) {
                add_into_grad(weight, g2, input.reshape({-1, input.size(-1)}));
            }
            if (bias_needed) {
                torch::Tensor& acc = bias.mutable_grad();
                if (acc.defined()) {
                    acc.add_(g2.sum(0));
                } else {
                    acc = g2.sum(0);
                }
            }
        }
        return {grad_input, torch::Tensor(), torch::Tensor()};
    }
};

}  // namespace

torch::Tensor fused_linear(const torch::Tensor& input, const torch::Tensor& weight,
                           const torch::Tensor& bias) {
    // Without gradients to accumulate (inference, frozen weights) the plain
    // kernel is the same arithmetic.
    if (!torch::GradMode::is_enabled() || !weight.requires_grad()) {
        return torch::nn::functional::linear(input, weight, bias);
    }
    return LinearAccumulatingGrad::apply(
        input, weight, bias.defined() ? c10::optional<torch::Tensor>(bias) : c10::nullopt);
}

torch::Tensor FusedLinearImpl::forward(const torch::Tensor& input) {
    return fused_linear(input, weight, bias);
}

}  // namespace pipewright::backend
