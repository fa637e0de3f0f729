// The mixture of experts on its own: routing against a brute-force sum
// over every expert, ties, and expert parallelism with two members as
// threads of this process over Gloo, against one module holding them all.
#include <gtest/gtest.h>

#include <functional>
#include <thread>

#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include "layers/decoder_parts.h"
#include "layers/mixture_of_experts.h"

namespace pipewright {
namespace {

using backend::MixtureOfExperts;

TransformerDims dims(double experts, double top_k, double shared = 0, bool gated = false) {
    TransformerDims d;
    d.hidden = 8;
    d.heads = 2;
    d.experts = experts;
    d.top_k = top_k;
    d.expert_ffn = 6;
    d.shared_experts = shared;
    d.activation = gated ? MlpActivation::swiglu : MlpActivation::gelu;
    d.bias = !gated;
    return d;
}

MixtureOfExperts seeded(const TransformerDims& d, std::uint64_t seed = 3) {
    torch::manual_seed(seed);
    MixtureOfExperts m(d);
    m->to(torch::kFloat64);
    return m;
}

torch::Tensor bias_or_none(const torch::Tensor& b, std::int64_t i) {
    return b.defined() ? b[i] : torch::Tensor();
}

// Every token through every expert, the top_k kept by the router's
// probabilities (renormalised when top_k > 1), plus the shared experts.
torch::Tensor brute_force(MixtureOfExperts& m, const TransformerDims& d, const torch::Tensor& x) {
    const auto act = d.activation;
    const auto mlp = [&](const torch::Tensor& t, const torch::Tensor& w1, const torch::Tensor& b1,
                         const torch::Tensor& w2, const torch::Tensor& b2) {
        return torch::linear(backend::mlp_activation(torch::linear(t, w1, b1), act), w2, b2);
    };
    const auto tokens = x.reshape({-1, x.size(-1)});
    const auto p = torch::softmax(torch::linear(tokens, m->router->weight), -1);
    const auto k = static_cast<std::int64_t>(d.top_k);
    torch::Tensor out = torch::zeros_like(tokens);
    for (std::int64_t t = 0; t < tokens.size(0); ++t) {
        const auto [values, index] = p[t].topk(k);
        const auto weights = k > 1 ? values / values.sum() : values;
        for (std::int64_t j = 0; j < k; ++j) {
            const auto e = index[j].item<std::int64_t>();
            out[t] += weights[j] * mlp(tokens[t], m->fc1_weight[e], bias_or_none(m->fc1_bias, e),
                                       m->fc2_weight[e], bias_or_none(m->fc2_bias, e));
        }
        for (std::int64_t s = 0; s < static_cast<std::int64_t>(d.shared_experts); ++s) {
            out[t] += mlp(tokens[t], m->shared_fc1_weight[s], bias_or_none(m->shared_fc1_bias, s),
                          m->shared_fc2_weight[s], bias_or_none(m->shared_fc2_bias, s));
        }
    }
    return out.reshape(x.sizes());
}

TEST(MixtureOfExperts, EachTokenIsTheWeightedSumOfItsTopKExperts) {
    for (const auto& d : {dims(4, 2), dims(5, 1, 1), dims(6, 3, 2, true)}) {
        SCOPED_TRACE(std::to_string(d.experts) + " experts, top " + std::to_string(d.top_k));
        auto m = seeded(d);
        const auto x = torch::randn({3, 5, 8}, torch::kFloat64);
        const auto want = brute_force(m, d, x);
        EXPECT_TRUE(torch::allclose(m(x), want, 1e-12, 1e-12));
        // Not a tautology: another expert's weights give another output.
        const torch::NoGradGuard no_grad;
        m->fc2_weight[1].mul_(2);
        EXPECT_FALSE(torch::allclose(m(x), want, 1e-6, 1e-6));
    }
}

TEST(MixtureOfExperts, TheRouterAndTheChosenExpertsGetGradients) {
    const auto d = dims(4, 2);
    auto m = seeded(d);
    const auto x = torch::randn({2, 3, 8}, torch::kFloat64);
    m(x).pow(2).sum().backward();
    EXPECT_GT(m->router->weight.grad().abs().sum().item<double>(), 0);
    EXPECT_GT(m->fc1_weight.grad().abs().sum().item<double>(), 0);
}

TEST(MixtureOfExperts, EqualProbabilitiesGoToTheLowerExperts) {
    const auto d = dims(4, 2);
    auto m = seeded(d);
    {
        const torch::NoGradGuard no_grad;
        m->router->weight.zero_();  // every expert 1/4 for every token
    }
    const auto x = torch::randn({1, 4, 8}, torch::kFloat64);
    const auto mlp = [&](std::int64_t e) {
        return torch::linear(torch::gelu(torch::linear(x, m->fc1_weight[e], m->fc1_bias[e])),
                             m->fc2_weight[e], m->fc2_bias[e]);
    };
    EXPECT_TRUE(torch::allclose(m(x), 0.5 * mlp(0) + 0.5 * mlp(1), 1e-12, 1e-12));
}

TEST(MixtureOfExperts, RoutedExpertParametersAreNamedSo) {
    EXPECT_TRUE(backend::is_routed_expert_parameter("block0.moe.experts_fc1_weight"));
    EXPECT_TRUE(backend::is_routed_expert_parameter("experts_fc2_bias"));
    EXPECT_FALSE(backend::is_routed_expert_parameter("block0.moe.shared_fc1_weight"));
    EXPECT_FALSE(backend::is_routed_expert_parameter("block0.moe.router.weight"));
    EXPECT_FALSE(backend::is_routed_expert_parameter("block0.fc1.weight"));
}

// Two members as threads, each with its own tokens: their outputs and,
// after both backwards, their experts' gradients must be what one module
// holding every expert computes for both members' tokens.
void expect_two_members_equal_one(const TransformerDims& d, bool starve_second) {
    auto whole = seeded(d);
    if (starve_second) {
        // Every token (all features positive) prefers experts 0 and 1: the
        // second member's experts (2 and 3) receive no rows at all, yet it
        // must still take part in every all-to-all, forward and backward.
        const torch::NoGradGuard no_grad;
        whole->router->weight.zero_();
        whole->router->weight.narrow(0, 2, 2).fill_(-50);
    }
    const std::vector<torch::Tensor> inputs{torch::rand({2, 3, 8}, torch::kFloat64),
                                            torch::rand({1, 5, 8}, torch::kFloat64)};
    // Built here: the threads would draw from Torch's one generator at once.
    std::vector<MixtureOfExperts> members{seeded(d), seeded(d)};
    for (auto& m : members) {
        const torch::NoGradGuard no_grad;
        m->router->weight.copy_(whole->router->weight);
    }
    const std::vector<torch::Tensor> upstream{torch::randn({2, 3, 8}, torch::kFloat64),
                                              torch::randn({1, 5, 8}, torch::kFloat64)};
    std::vector<torch::Tensor> want_out;
    for (int r = 0; r < 2; ++r) {
        auto y = whole(inputs[r]);
        (y * upstream[r]).sum().backward();
        want_out.push_back(y.detach());
    }

    auto store = c10::make_intrusive<c10d::HashStore>();
    std::vector<std::string> errors(2);
    std::vector<torch::Tensor> outs(2), fc1_grads(2), router_grads(2);
    std::vector<std::thread> threads;
    for (int r = 0; r < 2; ++r) {
        threads.emplace_back([&, r] {
            try {
                backend::ExpertGroup g;
                g.group = backend::make_gloo_group(store, "experts/", "127.0.0.1", r, 2,
                                                   std::chrono::seconds(30));
                g.rank = r;
                g.size = 2;
                MixtureOfExperts& m = members[static_cast<std::size_t>(r)];
                m->keep_local_experts(g);
                auto x = inputs[r].clone().requires_grad_(true);
                auto y = m(x);
                (y * upstream[r]).sum().backward();
                outs[r] = y.detach();
                fc1_grads[r] = m->fc1_weight.grad().defined() ? m->fc1_weight.grad()
                                                              : torch::zeros_like(m->fc1_weight);
                router_grads[r] = m->router->weight.grad();
            } catch (const std::exception& e) {
                errors[r] = e.what();
            }
        });
    }
    for (auto& t : threads) {
        t.join();
    }
    ASSERT_EQ(errors, std::vector<std::string>(2)) << errors[0] << errors[1];
    for (int r = 0; r < 2; ++r) {
        EXPECT_TRUE(torch::allclose(outs[r], want_out[r], 1e-12, 1e-12)) << "member " << r;
        // The experts' gradients sum both members' tokens; the router's is
        // each member's own (the data-parallel average adds them later).
        EXPECT_TRUE(torch::allclose(fc1_grads[r], whole->fc1_weight.grad().narrow(0, 2 * r, 2),
                                    1e-12, 1e-12))
            << "member " << r;
    }
    EXPECT_TRUE(torch::allclose(router_grads[0] + router_grads[1], whole->router->weight.grad(),
                                1e-12, 1e-12));
    if (starve_second) {
        EXPECT_EQ(fc1_grads[1].abs().sum().item<double>(), 0);
    }
}

TEST(MixtureOfExperts, TwoMembersOfAnExpertGroupComputeWhatOneModuleComputes) {
    expect_two_members_equal_one(dims(4, 2), false);
    expect_two_members_equal_one(dims(4, 1, 1, true), false);
}

TEST(MixtureOfExperts, AMemberWhoseExpertsGetNoTokensStillExchanges) {
    expect_two_members_equal_one(dims(4, 2), true);
}

}  // namespace
}  // namespace pipewright
