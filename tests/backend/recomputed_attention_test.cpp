// Selective recomputation in real runs (issue 31): the attention core keeps
// only its input and runs again for its backward, with the same arithmetic.
#include <gtest/gtest.h>

#include <string>

#include <torch/torch.h>

#include "layers/causal_attention.h"

namespace pipewright {
namespace {

// Grouped-query attention with rotary positions: 4 query heads over 2
// key/value heads of 8, on 2 sequences of 6 tokens.
torch::Tensor make_qkv() {
    torch::manual_seed(3);
    return torch::randn({2, 6, (4 + 2 * 2) * 8}, torch::kFloat64).requires_grad_(true);
}

TEST(RecomputedAttention, KeepsOnlyItsInputAndGivesTheSameGradients) {
    const torch::Tensor a = make_qkv();
    const torch::Tensor b = a.detach().clone().requires_grad_(true);
    const torch::Tensor plain = backend::causal_attention(a, 4, 2, 8, true);
    const torch::Tensor recomputed = backend::recomputed_causal_attention(b, 4, 2, 8, true);
    EXPECT_TRUE(torch::equal(plain, recomputed));
    // The whole core is one node of the graph, whose only input is qkv.
    ASSERT_TRUE(recomputed.grad_fn());
    EXPECT_NE(recomputed.grad_fn()->name().find("RecomputedAttention"), std::string::npos)
        << recomputed.grad_fn()->name();
    EXPECT_EQ(plain.grad_fn()->name().find("RecomputedAttention"), std::string::npos);

    const torch::Tensor weight = torch::randn_like(plain);
    (plain * weight).sum().backward();
    (recomputed * weight).sum().backward();
    EXPECT_TRUE(torch::allclose(a.grad(), b.grad(), 1e-12, 1e-12));
    EXPECT_GT(a.grad().abs().sum().item<double>(), 0);
}

TEST(RecomputedAttention, WithoutGradientsItIsThePlainAttention) {
    const torch::NoGradGuard no_grad;
    const torch::Tensor qkv = make_qkv().detach();
    const torch::Tensor out = backend::recomputed_causal_attention(qkv, 4, 2, 8, false);
    EXPECT_FALSE(out.grad_fn());
    EXPECT_TRUE(torch::equal(out, backend::causal_attention(qkv, 4, 2, 8, false)));
}

}  // namespace
}  // namespace pipewright
