#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pipewright/sim/memory_model.h"
#include "pipewright/sim/stage_memory.h"
#include "sim_test_support.h"

namespace pipewright {
namespace {

using testing::equal_cost;
using testing::make_pipeline;

constexpr double kStash = 1000;

std::vector<RankMemory> memory_of(const std::string& name, int p, int m, double weight_stash,
                                  std::int64_t static_bytes = 500) {
    StageCost cost = equal_cost(1, 1, 1);
    cost.stash_bytes = kStash;
    cost.weight_stash_bytes = weight_stash;
    auto pipeline = make_pipeline(name, p, p, m, cost);
    auto out = simulate_schedule(pipeline.input);
    return memory_over_time(out.timeline, pipeline.input.stages,
                            std::vector<std::int64_t>(static_cast<std::size_t>(p), static_bytes));
}

TEST(MemoryModel, GPipeKeepsEveryMicroBatchUntilTheBackwards) {
    for (int p : {1, 2, 4}) {
        for (int m : {1, 4, 9}) {
            auto memory = memory_of("gpipe", p, m, 0);
            for (const auto& rank : memory) {
                EXPECT_EQ(rank.peak_bytes, 500 + static_cast<std::int64_t>(m * kStash))
                    << "p=" << p << " m=" << m;
            }
        }
    }
}

TEST(MemoryModel, OneFOneBKeepsAtMostStagesMinusRankMicroBatches) {
    for (int p : {2, 4, 6}) {
        for (int m : {p, 2 * p, 5 * p}) {
            auto memory = memory_of("1f1b", p, m, 0);
            for (int r = 0; r < p; ++r) {
                EXPECT_EQ(memory[static_cast<std::size_t>(r)].peak_bytes,
                          500 + static_cast<std::int64_t>((p - r) * kStash))
                    << "p=" << p << " m=" << m << " rank=" << r;
            }
        }
    }
}

TEST(MemoryModel, ActivationsAreFreedByTheEndOfTheIteration) {
    for (const char* name : {"gpipe", "1f1b", "zb-h1"}) {
        auto memory = memory_of(name, 4, 8, 400);
        for (const auto& rank : memory) {
            ASSERT_FALSE(rank.curve.empty());
            EXPECT_EQ(rank.curve.front().time_s, 0.0) << name;
            EXPECT_EQ(rank.curve.back().bytes, 500) << name;
            for (const auto& sample : rank.curve) {
                EXPECT_GE(sample.bytes, 500) << name;
            }
        }
    }
}

TEST(MemoryModel, ZeroBubbleHoldsWeightGradientInputsUntilW) {
    const int p = 4;
    const int m = 8;
    auto without = memory_of("zb-h1", p, m, 0);
    auto with = memory_of("zb-h1", p, m, 400);
    auto one_f_one_b = memory_of("1f1b", p, m, 0);
    for (int r = 0; r < p; ++r) {
        const auto i = static_cast<std::size_t>(r);
        // Without anything kept for W, zb-h1 has 1F1B's activation profile.
        EXPECT_EQ(without[i].peak_bytes, one_f_one_b[i].peak_bytes) << r;
        if (r > 0) {
            // Later ranks defer W's, holding their inputs longer.
            EXPECT_GT(with[i].peak_bytes, without[i].peak_bytes) << r;
        }
    }
}

TEST(MemoryModel, ChangesAtOneTimeCountAsOneStepWithFreesFirst) {
    for (const bool free_first : {true, false}) {
        std::vector<MemorySample> curve;
        MemoryLevel level(100, &curve);
        level.add({1.0, 50});
        // A backward ending as the next forward starts: whichever comes
        // first, the level never counts both micro-batches.
        if (free_first) {
            level.add({2.0, -50});
            level.add({2.0, 50});
        } else {
            level.add({2.0, 50});
            level.add({2.0, -50});
        }
        level.add({3.0, -50});
        level.finish();
        EXPECT_EQ(level.peak_bytes(), 150);
        EXPECT_EQ(level.peak_time_s(), 1.0);
        const std::vector<MemorySample> expected = {{0.0, 100}, {1.0, 150}, {2.0, 150}, {3.0, 100}};
        EXPECT_EQ(curve, expected);
    }
}

TEST(MemoryModel, SimulatorPeaksMatchTheTimelinesWithoutRecordingIt) {
    StageCost cost = equal_cost(1, 0.7, 0.4);
    cost.stash_bytes = 1000;
    cost.weight_stash_bytes = 300;
    const LinkSpec link{0.5, 2};
    for (const char* name : {"naive", "gpipe", "1f1b", "zb-h1"}) {
        for (const int m : {1, 4, 9}) {
            const int p = 4;
            if (std::string(name) == "naive" ? m != 1 : std::string(name) != "gpipe" && m < p) {
                continue;
            }
            SCOPED_TRACE(std::string(name) + " m=" + std::to_string(m));
            auto pipeline = make_pipeline(name, p, p, m, cost, &link);
            pipeline.input.static_bytes = {500, 400, 300, 200};
            const auto recorded = simulate_schedule(pipeline.input);
            pipeline.input.record_timeline = false;
            const auto summary = simulate_schedule(pipeline.input);
            EXPECT_TRUE(summary.timeline.events.empty());
            const auto memory = memory_over_time(recorded.timeline, pipeline.input.stages,
                                                 pipeline.input.static_bytes);
            ASSERT_EQ(summary.peak_memory_bytes.size(), memory.size());
            for (std::size_t r = 0; r < memory.size(); ++r) {
                EXPECT_EQ(summary.peak_memory_bytes[r], memory[r].peak_bytes) << r;
                EXPECT_EQ(recorded.peak_memory_bytes[r], memory[r].peak_bytes) << r;
            }
            const auto from_timeline = timeline_metrics(recorded.timeline);
            const auto accumulated = summary.totals.metrics(summary.timeline.devices);
            EXPECT_EQ(accumulated.iteration_time_s, from_timeline.iteration_time_s);
            EXPECT_EQ(accumulated.bubble_fraction, from_timeline.bubble_fraction);
            for (std::size_t r = 0; r < memory.size(); ++r) {
                EXPECT_EQ(accumulated.devices[r].busy_s, from_timeline.devices[r].busy_s);
                EXPECT_EQ(accumulated.devices[r].start_s, from_timeline.devices[r].start_s);
                EXPECT_EQ(accumulated.devices[r].end_s, from_timeline.devices[r].end_s);
            }
        }
    }
}

TEST(MemoryModel, StaticBytesFollowOptimizerAndPrecision) {
    Training t;
    t.optimizer.type = OptimizerKind::sgd;
    EXPECT_EQ(static_memory_bytes(1000, t), 8000);  // fp32 weights + grads
    t.optimizer.momentum = 0.9;
    EXPECT_EQ(static_memory_bytes(1000, t), 12000);
    t.optimizer.type = OptimizerKind::adam;
    EXPECT_EQ(static_memory_bytes(1000, t), 16000);
    t.dtype = DType::bfloat16;  // 2 + 2 + fp32 master 4 + Adam 8
    EXPECT_EQ(static_memory_bytes(1000, t), 16000);
    t.optimizer.type = OptimizerKind::sgd;
    t.optimizer.momentum = 0;
    EXPECT_EQ(static_memory_bytes(1000, t), 8000);  // 2 + 2 + 4
}

}  // namespace
}  // namespace pipewright
