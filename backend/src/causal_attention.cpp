#include "causal_attention.h"

#include <cmath>
#include <limits>

namespace pipewright::backend {
namespace {

// [batch, len, n · head_dim] -> [batch, n, len, head_dim]
torch::Tensor heads_first(const torch::Tensor& t, std::int64_t n, std::int64_t head_dim) {
    return t.reshape({t.size(0), t.size(1), n, head_dim}).transpose(1, 2);
}

// x · cos + rotate_half(x) · sin over [batch, heads, len, head_dim].
torch::Tensor rotate(const torch::Tensor& x) {
    const auto len = x.size(2), dim = x.size(3);
    // Angles in float32 as frameworks compute them (float64 in float64 runs).
    const auto options = torch::TensorOptions().dtype(
        x.scalar_type() == torch::kFloat64 ? torch::kFloat64 : torch::kFloat32);
    const auto inverse =
        torch::pow(10000.0, -torch::arange(0, dim, 2, options) / static_cast<double>(dim));
    const auto angles = torch::outer(torch::arange(len, options), inverse);  // [len, dim / 2]
    const auto both = torch::cat({angles, angles}, -1).to(x.dtype());
    const auto halves = x.chunk(2, -1);
    const auto rotated = torch::cat({-halves[1], halves[0]}, -1);
    return x * both.cos() + rotated * both.sin();
}

}  // namespace

torch::Tensor causal_attention(const torch::Tensor& qkv, std::int64_t heads, std::int64_t kv_heads,
                               std::int64_t head_dim, bool rotary) {
    const auto b = qkv.size(0), len = qkv.size(1);
    const auto q_width = heads * head_dim, kv_width = kv_heads * head_dim;
    auto q = heads_first(qkv.narrow(-1, 0, q_width), heads, head_dim);
    auto k = heads_first(qkv.narrow(-1, q_width, kv_width), kv_heads, head_dim);
    auto v = heads_first(qkv.narrow(-1, q_width + kv_width, kv_width), kv_heads, head_dim);
    if (rotary) {
        q = rotate(q);
        k = rotate(k);
    }
    if (kv_heads != heads) {
        k = k.repeat_interleave(heads / kv_heads, 1);
        v = v.repeat_interleave(heads / kv_heads, 1);
    }
    auto scores = torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(static_cast<double>(head_dim));
    auto future = torch::ones({len, len}, torch::TensorOptions().dtype(torch::kBool)).triu(1);
    scores = scores.masked_fill(future, -std::numeric_limits<double>::infinity());
    auto attended = torch::matmul(torch::softmax(scores, -1), v);
    return attended.transpose(1, 2).reshape({b, len, q_width});
}

}  // namespace pipewright::backend
