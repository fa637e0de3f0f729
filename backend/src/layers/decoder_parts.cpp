#include "layers/decoder_parts.h"

namespace pipewright::backend {

RmsNormImpl::RmsNormImpl(std::int64_t features) {
    weight = register_parameter("weight", torch::ones({features}));
}

torch::Tensor RmsNormImpl::forward(const torch::Tensor& x) {
    return x * torch::rsqrt(x.pow(2).mean(-1, true) + 1e-6) * weight;
}

torch::nn::AnyModule make_norm(bool rms, std::int64_t features) {
    if (rms) {
        return torch::nn::AnyModule(RmsNorm(features));
    }
    return torch::nn::AnyModule(torch::nn::LayerNorm(torch::nn::LayerNormOptions({features})));
}

torch::Tensor mlp_activation(const torch::Tensor& fc1_out, MlpActivation kind) {
    switch (kind) {
        case MlpActivation::gelu:
            return torch::gelu(fc1_out);
        case MlpActivation::relu:
            return torch::relu(fc1_out);
        case MlpActivation::swiglu: {
            const auto parts = fc1_out.chunk(2, -1);
            return torch::silu(parts[0]) * parts[1];
        }
        case MlpActivation::geglu: {
            const auto parts = fc1_out.chunk(2, -1);
            return torch::gelu(parts[0]) * parts[1];
        }
    }
    return fc1_out;
}

}  // namespace pipewright::backend
