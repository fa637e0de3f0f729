// The Linear with fused weight-gradient accumulation computes exactly what
// torch::nn::Linear and autograd's own accumulation compute, through every
// way the executor and the profiler drive backward.
#include <gtest/gtest.h>

#include "layers/fused_linear.h"

namespace pipewright::backend {
namespace {

struct Pair {
    torch::nn::Linear plain{nullptr};
    FusedLinear fused{nullptr};
};

// Two layers with the same weights, in float64 so that equality is tight.
Pair make_pair(bool bias) {
    torch::manual_seed(7);
    Pair p;
    p.plain = torch::nn::Linear(torch::nn::LinearOptions(6, 4).bias(bias));
    torch::manual_seed(7);
    p.fused = FusedLinear(torch::nn::LinearOptions(6, 4).bias(bias));
    p.plain->to(torch::kFloat64);
    p.fused->to(torch::kFloat64);
    return p;
}

void expect_same_grads(const torch::nn::Module& a, const torch::nn::Module& b) {
    const auto pa = a.named_parameters();
    const auto pb = b.named_parameters();
    ASSERT_EQ(pa.size(), pb.size());
    for (const auto& item : pa) {
        const torch::Tensor& ga = item.value().grad();
        const torch::Tensor& gb = pb[item.key()].grad();
        ASSERT_EQ(ga.defined(), gb.defined()) << item.key();
        if (ga.defined()) {
            EXPECT_TRUE(torch::allclose(ga, gb, 1e-12, 1e-12)) << item.key();
        }
    }
}

TEST(FusedLinear, SameParametersAndInitialisationAsLinear) {
    const Pair p = make_pair(true);
    const auto pa = p.plain->named_parameters();
    const auto pb = p.fused->named_parameters();
    ASSERT_EQ(pa.keys(), pb.keys());
    for (const auto& item : pa) {
        EXPECT_TRUE(torch::equal(item.value(), pb[item.key()])) << item.key();
    }
}

TEST(FusedLinear, BackwardOverMicroBatchesAccumulatesLikeAutograd) {
    for (const bool bias : {true, false}) {
        Pair p = make_pair(bias);
        // Three micro-batches with a sequence dimension, as a transformer's.
        for (int mb = 0; mb < 3; ++mb) {
            const torch::Tensor x = torch::randn({2, 5, 6}, torch::kFloat64);
            const torch::Tensor g = torch::randn({2, 5, 4}, torch::kFloat64);
            const torch::Tensor xa = x.clone().requires_grad_(true);
            const torch::Tensor xb = x.clone().requires_grad_(true);
            torch::autograd::backward({p.plain(xa)}, {g});
            torch::autograd::backward({p.fused(xb)}, {g});
            EXPECT_TRUE(torch::allclose(xa.grad(), xb.grad(), 1e-12, 1e-12));
        }
        expect_same_grads(*p.plain, *p.fused);
    }
}

TEST(FusedLinear, SplitBackwardLeavesParametersAloneUntilTheWeightPass) {
    Pair p = make_pair(true);
    const torch::Tensor x = torch::randn({3, 6}, torch::kFloat64);
    const torch::Tensor g = torch::randn({3, 4}, torch::kFloat64);
    const torch::Tensor xa = x.clone().requires_grad_(true);
    const torch::Tensor xb = x.clone().requires_grad_(true);
    const torch::Tensor ya = p.plain(xa);
    const torch::Tensor yb = p.fused(xb);

    // Zero-bubble I: the input gradient only.
    const auto ia = torch::autograd::grad({ya}, {xa}, {g}, /*retain_graph=*/true);
    const auto ib = torch::autograd::grad({yb}, {xb}, {g}, /*retain_graph=*/true);
    EXPECT_TRUE(torch::allclose(ia[0], ib[0], 1e-12, 1e-12));
    for (const auto& param : p.fused->parameters()) {
        EXPECT_FALSE(param.grad().defined()) << "I must not touch the weights' gradients";
    }

    // Zero-bubble W: the plain layer's gradients come back and are added by
    // the caller; the fused layer has added them itself.
    const auto params = p.plain->parameters();
    const auto wa = torch::autograd::grad({ya}, params, {g}, false, false, true);
    for (std::size_t i = 0; i < params.size(); ++i) {
        params[i].mutable_grad() = wa[i];
    }
    const auto wb = torch::autograd::grad({yb}, p.fused->parameters(), {g}, false, false,
                                          /*allow_unused=*/true);
    for (const auto& t : wb) {
        EXPECT_FALSE(t.defined());
    }
    expect_same_grads(*p.plain, *p.fused);
}

TEST(FusedLinear, WithoutGradientsItIsThePlainLayer) {
    Pair p = make_pair(true);
    const torch::Tensor x = torch::randn({3, 6}, torch::kFloat64);
    const torch::NoGradGuard no_grad;
    const torch::Tensor y = p.fused(x);
    EXPECT_FALSE(y.requires_grad());
    EXPECT_TRUE(torch::allclose(y, p.plain(x), 1e-12, 1e-12));
}

}  // namespace
}  // namespace pipewright::backend
