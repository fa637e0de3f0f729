#include "layers/tied_head.h"

#include "layers/fused_linear.h"
#include "pipewright/backend/backend_error.h"
#include "pipewright/backend/modules.h"
#include "pipewright/core/layer_catalog.h"

namespace pipewright::backend {

namespace {

struct SharedWeightHeadImpl : torch::nn::Module {
    explicit SharedWeightHeadImpl(torch::Tensor w) : weight(std::move(w)) {}
    torch::Tensor forward(const torch::Tensor& x) {
        return fused_linear(x, weight, torch::Tensor());
    }
    torch::Tensor weight;  // the embedding's parameter, not registered here
};
TORCH_MODULE(SharedWeightHead);

torch::Tensor gradient_of(const torch::Tensor& weight) {
    if (!weight.grad().defined()) {
        weight.mutable_grad() = torch::zeros_like(weight);
    }
    return weight.grad();
}

}  // namespace

void scale_tied_embedding(torch::nn::Module& embedding) {
    constexpr double kGpt2InitStd = 0.02;
    const torch::NoGradGuard no_grad;
    embedding.named_parameters(false)["weight"].mul_(kGpt2InitStd);
}

torch::nn::AnyModule shared_weight_head(const std::shared_ptr<torch::nn::Module>& embedding) {
    const torch::Tensor* weight = embedding->named_parameters(false).find("weight");
    if (weight == nullptr) {
        throw BackendError("the tied embedding has no weight to share with the head");
    }
    return torch::nn::AnyModule(SharedWeightHead(*weight));
}

torch::nn::AnyModule copied_weight_head(const AnalyzedProject& project, std::uint64_t seed) {
    const auto& layers = project.project.model.layers;
    const int e = project.tied->embedding;
    const LayerSpec& head = layers.at(static_cast<std::size_t>(project.tied->head));
    const torch::nn::AnyModule embedding =
        build_layer(layers.at(static_cast<std::size_t>(e)), project.project.model.input.shape,
                    layer_seed(seed, e));
    scale_tied_embedding(*embedding.ptr());
    FusedLinear linear(
        torch::nn::LinearOptions(static_cast<std::int64_t>(layer_param(head, "in_features")),
                                 static_cast<std::int64_t>(layer_param(head, "out_features")))
            .bias(false));
    const torch::NoGradGuard no_grad;
    linear->weight.copy_(*embedding.ptr()->named_parameters(false).find("weight"));
    return torch::nn::AnyModule(linear);
}

void sum_tied_gradients(const torch::Tensor& embedding, const torch::Tensor& head, int peer,
                        int to_head, int to_embedding, Transport& transport) {
    const torch::NoGradGuard no_grad;
    if (embedding.defined() && head.defined()) {
        torch::Tensor e = gradient_of(embedding), h = gradient_of(head);
        const torch::Tensor sum = e + h;
        e.copy_(sum);
        h.copy_(sum);
        return;
    }
    const bool holds_embedding = embedding.defined();
    torch::Tensor mine = gradient_of(holds_embedding ? embedding : head);
    auto sent = transport.send(mine.clone(), peer, holds_embedding ? to_head : to_embedding);
    const torch::Tensor theirs =
        transport.recv(mine, peer, holds_embedding ? to_embedding : to_head);
    sent->wait();
    mine.add_(theirs);
}

}  // namespace pipewright::backend
