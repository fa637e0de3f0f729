#include "causal_attention.h"

#include <cmath>
#include <limits>

namespace pipewright::backend {

torch::Tensor causal_attention(const torch::Tensor& qkv, std::int64_t heads,
                               std::int64_t head_dim) {
    const auto b = qkv.size(0), len = qkv.size(1);
    // [batch, len, 3, heads, head_dim] -> [3, batch, heads, len, head_dim]
    auto parts = qkv.view({b, len, 3, heads, head_dim}).permute({2, 0, 3, 1, 4});
    auto scores = torch::matmul(parts[0], parts[1].transpose(-2, -1)) /
                  std::sqrt(static_cast<double>(head_dim));
    auto future = torch::ones({len, len}, torch::TensorOptions().dtype(torch::kBool)).triu(1);
    scores = scores.masked_fill(future, -std::numeric_limits<double>::infinity());
    auto attended = torch::matmul(torch::softmax(scores, -1), parts[2]);
    return attended.transpose(1, 2).reshape({b, len, heads * head_dim});
}

}  // namespace pipewright::backend
