// Megatron-LM's vocabulary-parallel cross-entropy
// (vocabulary_parallel_loss.h), two and four members as threads of this
// process with a Gloo group over an in-memory store: each holds its slice
// of the logits' vocabulary, and the loss and the gradient of its slice are
// torch's cross_entropy of the whole logits, in float64 and float32.
#include <gtest/gtest.h>

#include <functional>
#include <thread>

#include <ATen/CPUGeneratorImpl.h>

#include "layers/vocabulary_parallel_loss.h"
#include "tensor_group_threads.h"

namespace pipewright {
namespace {

constexpr std::int64_t kBatch = 3;
constexpr std::int64_t kSequence = 5;
constexpr std::int64_t kVocabulary = 24;

struct Member {
    torch::Tensor loss;
    torch::Tensor grad;  // of its slice of the logits
};

// Every member's loss and gradient against the whole logits', for logits of
// `dtype` offset by `offset` (large offsets overflow exp without the shared
// maximum) and a loss gradient of `scale`.
void expect_torchs_cross_entropy(int size, torch::Dtype dtype, double offset, double scale,
                                 double tolerance) {
    auto gen = at::make_generator<at::CPUGeneratorImpl>(11);
    const auto logits = (torch::randn({kBatch, kSequence, kVocabulary}, gen,
                                      torch::TensorOptions(torch::kFloat64)) *
                             3 +
                         offset)
                            .to(dtype);
    // Targets in every member's slice.
    const auto target = torch::randint(kVocabulary, {kBatch, kSequence}, gen);
    const auto whole = logits.clone().requires_grad_(true);
    const auto reference = torch::nn::functional::cross_entropy(whole.reshape({-1, kVocabulary}),
                                                                target.reshape({-1}));
    (reference * scale).backward();
    ASSERT_TRUE(std::isfinite(reference.item<double>()));

    std::vector<Member> members(static_cast<std::size_t>(size));
    const auto errors = test::on_tensor_group(size, [&](const backend::TensorGroup& group) {
        const auto mine = logits.chunk(group.size, -1)[static_cast<std::size_t>(group.rank)]
                              .clone()
                              .requires_grad_(true);
        const auto loss = backend::vocabulary_parallel_cross_entropy(mine, target, group);
        (loss * scale).backward();
        members[static_cast<std::size_t>(group.rank)] = {loss.detach(), mine.grad()};
    });
    for (const auto& e : errors) {
        ASSERT_EQ(e, "");
    }
    const auto want_grads = whole.grad().chunk(size, -1);
    for (int r = 0; r < size; ++r) {
        SCOPED_TRACE("member " + std::to_string(r) + " of " + std::to_string(size));
        const Member& m = members[static_cast<std::size_t>(r)];
        ASSERT_EQ(m.loss.dim(), 0);
        EXPECT_NEAR(m.loss.item<double>(), reference.item<double>(),
                    tolerance * std::abs(reference.item<double>()));
        ASSERT_TRUE(m.grad.defined());
        EXPECT_EQ(m.grad.scalar_type(), dtype);
        const auto& want = want_grads[static_cast<std::size_t>(r)];
        ASSERT_EQ(m.grad.sizes(), want.sizes());
        EXPECT_TRUE(torch::allclose(m.grad, want, tolerance, tolerance))
            << (m.grad - want).abs().max().item<double>();
    }
}

TEST(VocabularyParallelLoss, TwoMembersGiveTorchsCrossEntropyInFloat64) {
    expect_torchs_cross_entropy(2, torch::kFloat64, 0, 1, 1e-12);
}

TEST(VocabularyParallelLoss, FourMembersAndAScaledGradientToo) {
    expect_torchs_cross_entropy(4, torch::kFloat64, 0, 0.25, 1e-12);
}

TEST(VocabularyParallelLoss, Float32AsWell) {
    expect_torchs_cross_entropy(2, torch::kFloat32, 0, 1, 1e-5);
}

// exp(200) overflows float32: the logits must be shifted by their maximum
// before the exponential.
TEST(VocabularyParallelLoss, LargeLogitsSubtractTheGroupsMaximum) {
    expect_torchs_cross_entropy(2, torch::kFloat32, 200, 1, 1e-5);
}

TEST(VocabularyParallelLoss, AGroupOfOneIsPlainCrossEntropy) {
    auto gen = at::make_generator<at::CPUGeneratorImpl>(5);
    const auto logits = torch::randn({4, kVocabulary}, gen, torch::TensorOptions(torch::kFloat64));
    const auto target = torch::randint(kVocabulary, {4}, gen);
    const backend::TensorGroup alone;
    EXPECT_TRUE(torch::equal(backend::vocabulary_parallel_cross_entropy(logits, target, alone),
                             torch::nn::functional::cross_entropy(logits, target)));
}

}  // namespace
}  // namespace pipewright
