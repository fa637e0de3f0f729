#include "layers/vocabulary_parallel_loss.h"

#include "layers/tensor_parallel_collectives.h"

namespace pipewright::backend {

namespace {

// Forward: each token's loss (a [tokens] tensor) from this member's
// [tokens, vocabulary / size] logits; backward: softmax − one-hot on this
// member's slice, times each token's gradient.
struct VocabularyParallelCrossEntropy : torch::autograd::Function<VocabularyParallelCrossEntropy> {
    static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& logits,
                                 const torch::Tensor& target, CollectiveGroup* group,
                                 std::int64_t rank) {
        const auto dtype =
            logits.scalar_type() == torch::kFloat64 ? torch::kFloat64 : torch::kFloat32;
        const torch::Tensor x = logits.to(dtype);
        const std::int64_t rows = x.size(-1);
        // The maximum over the whole vocabulary, so that exp never overflows.
        torch::Tensor max = std::get<0>(x.max(-1)).contiguous();
        all_reduce_in_place(max, *group, c10d::ReduceOp::MAX);
        const torch::Tensor shifted = x - max.unsqueeze(-1);
        // The target's (shifted) logit from the member whose slice holds it.
        const torch::Tensor local = target - rank * rows;
        const torch::Tensor held = (local >= 0).logical_and(local < rows);
        const torch::Tensor index = local.masked_fill(held.logical_not(), 0);
        torch::Tensor predicted = shifted.gather(-1, index.unsqueeze(-1))
                                      .squeeze(-1)
                                      .masked_fill(held.logical_not(), 0)
                                      .contiguous();
        all_reduce_in_place(predicted, *group, c10d::ReduceOp::SUM);
        torch::Tensor exp = shifted.exp();
        torch::Tensor sum = exp.sum(-1).contiguous();
        all_reduce_in_place(sum, *group, c10d::ReduceOp::SUM);
        exp.div_(sum.unsqueeze(-1));  // this member's slice of the softmax
        ctx->save_for_backward({exp, index, held});
        ctx->saved_data["dtype"] = static_cast<std::int64_t>(logits.scalar_type());
        return sum.log() - predicted;
    }
    static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                   torch::autograd::variable_list grads) {
        const auto saved = ctx->get_saved_variables();
        const torch::Tensor& softmax = saved[0];
        const torch::Tensor& index = saved[1];
        const torch::Tensor& held = saved[2];
        torch::Tensor grad = softmax.clone();
        grad.scatter_add_(-1, index.unsqueeze(-1), -held.to(grad.scalar_type()).unsqueeze(-1));
        grad.mul_(grads[0].to(grad.scalar_type()).unsqueeze(-1));
        const auto dtype = static_cast<torch::ScalarType>(ctx->saved_data["dtype"].toInt());
        return {grad.to(dtype), torch::Tensor(), torch::Tensor(), torch::Tensor()};
    }
};

}  // namespace

torch::Tensor vocabulary_parallel_cross_entropy(const torch::Tensor& logits,
                                                const torch::Tensor& target,
                                                const TensorGroup& group) {
    const torch::Tensor flat = logits.reshape({-1, logits.size(-1)});
    const torch::Tensor ids = target.reshape({-1}).to(torch::kInt64);
    if (group.size <= 1) {
        return torch::nn::functional::cross_entropy(flat, ids);
    }
    return VocabularyParallelCrossEntropy::apply(flat, ids, group.group.get(),
                                                 static_cast<std::int64_t>(group.rank))
        .mean();
}

}  // namespace pipewright::backend
