// Context-parallel attention on its own: C members as threads of this
// process, each with a Gloo group over an in-memory store, attend with
// their two chunks of a sequence and must get their rows of the
// whole-sequence attention, and their chunks of its input gradient, for
// both exchanges, with grouped-query heads, rotary positions and
// selective recomputation. C = 3 and 4 take the ring round more than one
// step, where a block passed the wrong way would show.
#include <gtest/gtest.h>

#include <functional>
#include <thread>

#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include "layers/causal_attention.h"
#include "layers/context_chunks.h"
#include "layers/context_exchange.h"

namespace pipewright {
namespace {

constexpr auto kTimeout = std::chrono::seconds(30);

TEST(ContextChunks, EachMemberHoldsAChunkFromEachEnd) {
    EXPECT_TRUE(torch::equal(backend::context_positions(4, 0, 2),
                             torch::tensor({0, 1, 6, 7}, torch::kInt64)));
    EXPECT_TRUE(torch::equal(backend::context_positions(4, 1, 2),
                             torch::tensor({2, 3, 4, 5}, torch::kInt64)));
    EXPECT_TRUE(
        torch::equal(backend::context_positions(2, 1, 3), torch::tensor({1, 4}, torch::kInt64)));
    const torch::Tensor tokens = torch::arange(16, torch::kInt64).reshape({2, 8});
    EXPECT_TRUE(torch::equal(backend::context_chunks(tokens, 1, 0, 2),
                             torch::tensor({{0, 1, 6, 7}, {8, 9, 14, 15}}, torch::kInt64)));
    const backend::Batch share = backend::context_share({{tokens}, {tokens + 100}}, 1, 2);
    EXPECT_TRUE(torch::equal(share.inputs[0], torch::tensor({{2, 3, 4, 5}, {10, 11, 12, 13}})));
    EXPECT_TRUE(torch::equal(share.targets[0],
                             torch::tensor({{102, 103, 104, 105}, {110, 111, 112, 113}})));
}

struct AttentionCase {
    int members = 2;
    ContextExchange exchange = ContextExchange::ring;
    bool rotary = false;
    std::int64_t kv_heads = 4;
    bool recompute = false;
};

void PrintTo(const AttentionCase& c, std::ostream* out) {
    *out << c.members << " members, " << to_string(c.exchange) << (c.rotary ? ", rotary" : "")
         << ", " << c.kv_heads << " key/value heads" << (c.recompute ? ", recomputed" : "");
}

constexpr std::int64_t kHeads = 4, kHeadDim = 8;

class ContextAttention : public ::testing::TestWithParam<AttentionCase> {};

TEST_P(ContextAttention, EveryMemberGetsItsRowsOfTheWholeSequencesAttentionAndGradient) {
    const AttentionCase c = GetParam();
    const std::int64_t length = 4 * c.members;  // two tokens a chunk
    torch::manual_seed(5);
    const auto f64 = torch::TensorOptions(torch::kFloat64);
    const torch::Tensor qkv =
        torch::randn({2, length, (kHeads + 2 * c.kv_heads) * kHeadDim}, f64).requires_grad_(true);
    const torch::Tensor weight = torch::randn({2, length, kHeads * kHeadDim}, f64);
    const torch::Tensor whole =
        backend::causal_attention(qkv, kHeads, c.kv_heads, kHeadDim, c.rotary);
    (whole * weight).sum().backward();

    auto store = c10::make_intrusive<c10d::HashStore>();
    const auto n = static_cast<std::size_t>(c.members);
    std::vector<torch::Tensor> outputs(n), grads(n);
    std::vector<std::string> errors(n);
    std::vector<std::thread> threads;
    for (int r = 0; r < c.members; ++r) {
        threads.emplace_back([&, r] {
            try {
                backend::ContextGroup group;
                group.group = backend::make_gloo_group(store, "context/", "127.0.0.1", r, c.members,
                                                       kTimeout);
                group.rank = r;
                group.size = c.members;
                group.exchange = c.exchange;
                group.timeout = kTimeout;
                const torch::Tensor mine =
                    backend::context_chunks(qkv.detach(), 1, r, c.members).requires_grad_(true);
                const torch::Tensor out =
                    c.recompute ? backend::recomputed_causal_attention(mine, kHeads, c.kv_heads,
                                                                       kHeadDim, c.rotary, group)
                                : backend::causal_attention(mine, kHeads, c.kv_heads, kHeadDim,
                                                            c.rotary, group);
                (out * backend::context_chunks(weight, 1, r, c.members)).sum().backward();
                outputs[static_cast<std::size_t>(r)] = out.detach();
                grads[static_cast<std::size_t>(r)] = mine.grad();
            } catch (const std::exception& e) {
                errors[static_cast<std::size_t>(r)] = e.what();
            }
        });
    }
    for (auto& t : threads) {
        t.join();
    }
    ASSERT_EQ(errors, std::vector<std::string>(n, ""));
    for (int r = 0; r < c.members; ++r) {
        SCOPED_TRACE("member " + std::to_string(r));
        const auto i = static_cast<std::size_t>(r);
        const torch::Tensor want = backend::context_chunks(whole.detach(), 1, r, c.members);
        const torch::Tensor want_grad = backend::context_chunks(qkv.grad(), 1, r, c.members);
        EXPECT_LE((outputs[i] - want).abs().max().item<double>(), 1e-12);
        ASSERT_TRUE(grads[i].defined());
        EXPECT_LE((grads[i] - want_grad).abs().max().item<double>(), 1e-12);
    }
}

INSTANTIATE_TEST_SUITE_P(Exchanges, ContextAttention,
                         ::testing::Values(AttentionCase{2, ContextExchange::ring},
                                           AttentionCase{2, ContextExchange::all_gather},
                                           AttentionCase{3, ContextExchange::ring, true, 2},
                                           AttentionCase{4, ContextExchange::ring, true, 2},
                                           AttentionCase{3, ContextExchange::all_gather, true, 2},
                                           AttentionCase{2, ContextExchange::ring, true, 2, true},
                                           AttentionCase{3, ContextExchange::all_gather, false, 4,
                                                         true}),
                         [](const auto& param_info) {
                             const AttentionCase& c = param_info.param;
                             return std::to_string(c.members) + "Members" +
                                    (c.exchange == ContextExchange::ring ? "Ring" : "AllGather") +
                                    (c.rotary ? "Rotary" : "") +
                                    (c.kv_heads < kHeads ? "GroupedQuery" : "") +
                                    (c.recompute ? "Recomputed" : "");
                         });

// The check above can fail: a member's chunks attended alone, as if they
// were the whole sequence at positions 0..len−1, are far from its rows.
TEST(ContextAttention, ChunksAttendedAloneAreNotTheirRowsOfTheWhole) {
    torch::manual_seed(5);
    const torch::Tensor qkv = torch::randn({2, 8, 16 * kHeadDim}, torch::kFloat64);
    const torch::Tensor whole = backend::causal_attention(qkv, kHeads, kHeads, kHeadDim, true);
    const torch::Tensor alone = backend::causal_attention(backend::context_chunks(qkv, 1, 0, 2),
                                                          kHeads, kHeads, kHeadDim, true);
    EXPECT_GT((alone - backend::context_chunks(whole, 1, 0, 2)).abs().max().item<double>(), 1e-3);
}

}  // namespace
}  // namespace pipewright
