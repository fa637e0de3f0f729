#include "layers/causal_attention.h"

#include <cmath>
#include <limits>

#include "execution/random_replay.h"
#include "layers/context_chunks.h"
#include "layers/context_exchange.h"

namespace pipewright::backend {
namespace {

// [batch, len, n · head_dim] -> [batch, n, len, head_dim]
torch::Tensor heads_first(const torch::Tensor& t, std::int64_t n, std::int64_t head_dim) {
    return t.reshape({t.size(0), t.size(1), n, head_dim}).transpose(1, 2);
}

// x · cos + rotate_half(x) · sin over [batch, heads, len, head_dim], each
// token turned by its position in the whole sequence (`positions`, [len]):
// under context parallelism a member's tokens are not 0..len−1.
torch::Tensor rotate(const torch::Tensor& x, const torch::Tensor& positions) {
    const auto dim = x.size(3);
    // Angles in float32 as frameworks compute them (float64 in float64 runs).
    const auto options =
        torch::TensorOptions()
            .dtype(x.scalar_type() == torch::kFloat64 ? torch::kFloat64 : torch::kFloat32)
            .device(x.device());
    const auto inverse =
        torch::pow(10000.0, -torch::arange(0, dim, 2, options) / static_cast<double>(dim));
    const auto angles = torch::outer(positions.to(options), inverse);  // [len, dim / 2]
    const auto both = torch::cat({angles, angles}, -1).to(x.dtype());
    const auto halves = x.chunk(2, -1);
    const auto rotated = torch::cat({-halves[1], halves[0]}, -1);
    return x * both.cos() + rotated * both.sin();
}

}  // namespace

torch::Tensor causal_attention(const torch::Tensor& qkv, std::int64_t heads, std::int64_t kv_heads,
                               std::int64_t head_dim, bool rotary, const ContextGroup& context,
                               double dropout) {
    const auto b = qkv.size(0), len = qkv.size(1);
    const auto q_width = heads * head_dim, kv_width = kv_heads * head_dim;
    auto q = heads_first(qkv.narrow(-1, 0, q_width), heads, head_dim);
    auto k = heads_first(qkv.narrow(-1, q_width, kv_width), kv_heads, head_dim);
    auto v = heads_first(qkv.narrow(-1, q_width + kv_width, kv_width), kv_heads, head_dim);
    const bool split = context.size > 1;
    const torch::Tensor positions =
        (split ? context_positions(len, context.rank, context.size)
               : torch::arange(len, torch::TensorOptions(torch::kInt64)))
            .to(qkv.device());
    if (rotary) {
        q = rotate(q, positions);
        k = rotate(k, positions);
    }
    // Context parallelism: the queries are this member's tokens, the keys
    // and values the whole sequence's, gathered from the group (rotated by
    // their owners, and before grouped heads repeat them: less to send).
    torch::Tensor key_positions = positions;
    if (split) {
        GroupKeys all = exchange_keys_values(k, v, context);
        k = std::move(all.keys);
        v = std::move(all.values);
        key_positions = std::move(all.positions);
    }
    if (kv_heads != heads) {
        k = k.repeat_interleave(heads / kv_heads, 1);
        v = v.repeat_interleave(heads / kv_heads, 1);
    }
    auto scores = torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(static_cast<double>(head_dim));
    // The causal mask from the tokens' true positions: a key later in the
    // sequence than the query is hidden from it.
    const auto future = key_positions.unsqueeze(0) > positions.unsqueeze(1);  // [len, keys]
    scores = scores.masked_fill(future, -std::numeric_limits<double>::infinity());
    auto probabilities = torch::softmax(scores, -1);
    if (dropout > 0) {
        probabilities = torch::dropout(probabilities, dropout, /*train=*/true);
    }
    auto attended = torch::matmul(probabilities, v);
    return attended.transpose(1, 2).reshape({b, len, q_width});
}

namespace {

// Keeps qkv; its backward runs the attention again with grad enabled and
// differentiates that. With dropout it keeps the random state the forward
// started from too, and replays it, so that the recomputation draws the
// forward's mask. Under context parallelism the recomputation exchanges
// the keys and values again: every member of the group recomputes the same
// blocks in the same order, so the exchanges meet.
struct RecomputedAttention : torch::autograd::Function<RecomputedAttention> {
    static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& qkv,
                                 std::int64_t heads, std::int64_t kv_heads, std::int64_t head_dim,
                                 bool rotary, std::int64_t context, double dropout) {
        ctx->save_for_backward({qkv});
        ctx->saved_data["dropout"] = dropout;
        if (dropout > 0) {
            ctx->saved_data["random_state"] = random_state(qkv.device());
        }
        ctx->saved_data["heads"] = heads;
        ctx->saved_data["kv_heads"] = kv_heads;
        ctx->saved_data["head_dim"] = head_dim;
        ctx->saved_data["rotary"] = rotary;
        // The group's address (0: none); the block that holds it outlives
        // every graph built while its stage runs.
        ctx->saved_data["context"] = context;
        return causal_attention(qkv, heads, kv_heads, head_dim, rotary, group_of(context), dropout);
    }

    static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                   torch::autograd::variable_list grad_output) {
        const torch::Tensor qkv = ctx->get_saved_variables().at(0).detach().requires_grad_(true);
        const double dropout = ctx->saved_data["dropout"].toDouble();
        torch::Tensor out;
        {
            const torch::AutoGradMode enable(true);
            const ReplayRandomState replay(
                qkv.device(),
                dropout > 0 ? ctx->saved_data["random_state"].toTensor() : torch::Tensor());
            out = causal_attention(
                qkv, ctx->saved_data["heads"].toInt(), ctx->saved_data["kv_heads"].toInt(),
                ctx->saved_data["head_dim"].toInt(), ctx->saved_data["rotary"].toBool(),
                group_of(ctx->saved_data["context"].toInt()), dropout);
        }
        const auto grads = torch::autograd::grad({out}, {qkv}, {grad_output.at(0)});
        return {grads.at(0),     torch::Tensor(), torch::Tensor(), torch::Tensor(),
                torch::Tensor(), torch::Tensor(), torch::Tensor()};
    }

    static const ContextGroup& group_of(std::int64_t address) {
        static const ContextGroup kNone;
        return address == 0 ? kNone : *reinterpret_cast<const ContextGroup*>(address);
    }
};

}  // namespace

torch::Tensor recomputed_causal_attention(const torch::Tensor& qkv, std::int64_t heads,
                                          std::int64_t kv_heads, std::int64_t head_dim, bool rotary,
                                          const ContextGroup& context, double dropout) {
    if (!torch::GradMode::is_enabled() || !qkv.requires_grad()) {
        return causal_attention(qkv, heads, kv_heads, head_dim, rotary, context, dropout);
    }
    const std::int64_t address =
        context.size > 1 ? reinterpret_cast<std::int64_t>(&context) : std::int64_t{0};
    return RecomputedAttention::apply(qkv, heads, kv_heads, head_dim, rotary, address, dropout);
}

}  // namespace pipewright::backend
