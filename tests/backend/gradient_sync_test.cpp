// The data-parallel pieces on their own, two replicas as threads of this
// process with Gloo groups over an in-memory store: the bucketed gradient
// average (REDUCE_GRAD) and ZeRO-1's sharded optimizer.
#include <gtest/gtest.h>

#include <functional>
#include <thread>

#include <ATen/CPUGeneratorImpl.h>
#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include "execution/gradient_sync.h"
#include "execution/sharded_optimizer.h"
#include "pipewright/backend/executor.h"

namespace pipewright {
namespace {

constexpr auto kTimeout = std::chrono::seconds(30);

// Runs `body(replica, group)` in one thread per replica, each with its own
// Gloo group over one store; returns the failures, "" where none.
std::vector<std::string> on_replicas(
    int replicas,
    const std::function<void(int, const c10::intrusive_ptr<backend::CollectiveGroup>&)>& body) {
    auto store = c10::make_intrusive<c10d::HashStore>();
    std::vector<std::string> errors(static_cast<std::size_t>(replicas));
    std::vector<std::thread> threads;
    for (int r = 0; r < replicas; ++r) {
        threads.emplace_back([&, r] {
            try {
                const auto group =
                    backend::make_gloo_group(store, "test/", "127.0.0.1", r, replicas, kTimeout);
                body(r, group);
            } catch (const std::exception& e) {
                errors[static_cast<std::size_t>(r)] = e.what();
            }
        });
    }
    for (auto& t : threads) {
        t.join();
    }
    return errors;
}

// Parameters of odd sizes (so that shards need padding) with the gradients
// replica r computed.
std::vector<torch::Tensor> parameters(int replica) {
    // A generator of its own: the replicas' threads draw at the same time.
    auto gen = at::make_generator<at::CPUGeneratorImpl>(11);
    const auto f64 = torch::TensorOptions(torch::kFloat64);
    std::vector<torch::Tensor> params{torch::randn({5, 3}, gen, f64), torch::randn({7}, gen, f64)};
    for (std::size_t i = 0; i < params.size(); ++i) {
        params[i].mutable_grad() =
            torch::full_like(params[i], 1.0 + replica) * static_cast<double>(i + 1);
    }
    return params;
}

TEST(GradientSync, AveragesEveryBucketAcrossTheReplicas) {
    std::vector<std::vector<torch::Tensor>> grads(2);
    std::vector<double> bytes(2);
    const auto errors = on_replicas(2, [&](int r, const auto& group) {
        auto params = parameters(r);
        params.push_back(torch::ones({4}, torch::kFloat64));  // no gradient: counts as zeros
        // 64 bytes a bucket: each tensor its own bucket.
        backend::GradientSync sync(group, 2, 64, kTimeout);
        auto started = sync.start(params);
        started.work->wait();
        sync.finish();
        bytes[static_cast<std::size_t>(r)] = started.bytes;
        for (const auto& p : params) {
            grads[static_cast<std::size_t>(r)].push_back(p.grad().clone());
        }
    });
    ASSERT_EQ(errors, std::vector<std::string>(2, ""));
    for (int r = 0; r < 2; ++r) {
        const auto& g = grads[static_cast<std::size_t>(r)];
        ASSERT_EQ(g.size(), 3U);
        // (1 + 2) / 2 and (2 + 4) / 2: the mean of replica 0's and 1's.
        EXPECT_TRUE(torch::allclose(g[0], torch::full({5, 3}, 1.5, torch::kFloat64)));
        EXPECT_TRUE(torch::allclose(g[1], torch::full({7}, 3.0, torch::kFloat64)));
        EXPECT_TRUE(torch::allclose(g[2], torch::zeros({4}, torch::kFloat64)));
        EXPECT_EQ(bytes[static_cast<std::size_t>(r)], (15 + 7 + 4) * 8.0);
    }
}

TEST(ShardedOptimizer, StepsLikeTheWholeOptimizerAndLeavesEveryReplicaTheSameWeights) {
    OptimizerConfig adam;
    adam.type = OptimizerKind::adam;
    adam.lr = 0.1;
    adam.weight_decay = 0.01;
    // The whole optimizer, stepped with the average of both replicas' gradients.
    auto whole = parameters(0);
    auto reference = backend::make_optimizer(adam, whole);
    for (int step = 0; step < 3; ++step) {
        for (std::size_t i = 0; i < whole.size(); ++i) {
            whole[i].mutable_grad() =
                torch::full_like(whole[i], 1.5 * static_cast<double>(i + 1)) * (step + 1);
        }
        reference->step();
    }
    std::vector<std::vector<torch::Tensor>> after(2);
    std::vector<std::int64_t> shard(2);
    const auto errors = on_replicas(2, [&](int r, const auto& group) {
        auto params = parameters(r);
        backend::ShardedOptimizer sharded(adam, {{params[0]}, {params[1]}}, group, r, 2, kTimeout);
        for (int step = 0; step < 3; ++step) {
            for (std::size_t i = 0; i < params.size(); ++i) {
                params[i].mutable_grad() =
                    torch::full_like(params[i], 1.5 * static_cast<double>(i + 1)) * (step + 1);
            }
            sharded.step();
        }
        shard[static_cast<std::size_t>(r)] = sharded.shard_elements();
        for (const auto& p : params) {
            after[static_cast<std::size_t>(r)].push_back(p.detach().clone());
        }
    });
    ASSERT_EQ(errors, std::vector<std::string>(2, ""));
    // 15 and 7 elements: slices of 8 and 4, the last padded.
    EXPECT_EQ(shard, (std::vector<std::int64_t>{12, 12}));
    for (int r = 0; r < 2; ++r) {
        for (std::size_t i = 0; i < whole.size(); ++i) {
            EXPECT_TRUE(
                torch::allclose(after[static_cast<std::size_t>(r)][i], whole[i], 1e-12, 1e-12))
                << "replica " << r << ", tensor " << i;
        }
    }
    EXPECT_FALSE(torch::allclose(whole[0], parameters(0)[0])) << "the step did nothing";
}

}  // namespace
}  // namespace pipewright
