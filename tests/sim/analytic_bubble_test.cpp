// Exact closed forms for equal stage costs and free communication. With p
// stages, m micro-batches, forward f and backward b per micro-batch:
//   naive (m = 1):   T = p (f + b)
//   GPipe, 1F1B:     T = (m + p - 1)(f + b),        bubble = (p-1)/(m+p-1)
//   interleaved (v chunks per device, each 1/v of the work):
//                    T = (m + (p-1)/v)(f + b),      bubble = (p-1)/(v m + p-1)
//   ZB-H1 (f = i = w): T = (3m + p - 1) f,          bubble = (p-1)/(3m+p-1)

#include <gtest/gtest.h>

#include "sim_test_support.h"

namespace pipewright {
namespace {

using testing::equal_cost;
using testing::make_pipeline;
using testing::simulated_metrics;

TEST(AnalyticBubble, NaiveTakesTheSumOfAllStageTimes) {
    for (int p = 1; p <= 8; ++p) {
        auto metrics = simulated_metrics("naive", p, p, 1, equal_cost(1.0, 1.5, 0.5));
        EXPECT_DOUBLE_EQ(metrics.iteration_time_s, p * 3.0) << "p=" << p;
        EXPECT_NEAR(metrics.bubble_fraction, (p - 1.0) / p, 1e-12);
    }
}

TEST(AnalyticBubble, GPipeMatchesClosedForm) {
    for (int p = 1; p <= 8; ++p) {
        for (int m : {1, 2, 3, 4, 7, 8, 16, 32}) {
            auto metrics = simulated_metrics("gpipe", p, p, m, equal_cost(1.0, 1.2, 0.8));
            const double expected_t = (m + p - 1) * 3.0;
            EXPECT_NEAR(metrics.iteration_time_s, expected_t, 1e-9) << "p=" << p << " m=" << m;
            EXPECT_NEAR(metrics.bubble_fraction, (p - 1.0) / (m + p - 1.0), 1e-12)
                << "p=" << p << " m=" << m;
            for (const auto& d : metrics.devices) {
                EXPECT_NEAR(d.busy_s, m * 3.0, 1e-9);
            }
        }
    }
}

TEST(AnalyticBubble, OneFOneBMatchesClosedForm) {
    for (int p = 1; p <= 8; ++p) {
        for (int m = p; m <= 4 * p + 3; m += 3) {
            auto metrics = simulated_metrics("1f1b", p, p, m, equal_cost(1.0, 1.0, 1.0));
            EXPECT_NEAR(metrics.iteration_time_s, (m + p - 1) * 3.0, 1e-9)
                << "p=" << p << " m=" << m;
            EXPECT_NEAR(metrics.bubble_fraction, (p - 1.0) / (m + p - 1.0), 1e-12);
        }
    }
}

TEST(AnalyticBubble, InterleavedShrinksTheBubbleByTheChunkCount) {
    for (int p : {2, 3, 4, 8}) {
        for (int v : {2, 3, 4}) {
            for (int m : {p, 2 * p, 4 * p}) {
                // Each chunk does 1/v of a device's work.
                auto metrics = simulated_metrics("interleaved-1f1b", p * v, p, m,
                                                 equal_cost(1.0 / v, 1.0 / v, 1.0 / v));
                const double expected_t = (m + (p - 1.0) / v) * 3.0;
                EXPECT_NEAR(metrics.iteration_time_s, expected_t, 1e-9)
                    << "p=" << p << " v=" << v << " m=" << m;
                EXPECT_NEAR(metrics.bubble_fraction, (p - 1.0) / (v * m + p - 1.0), 1e-9)
                    << "p=" << p << " v=" << v << " m=" << m;
            }
        }
    }
}

TEST(AnalyticBubble, ZeroBubbleH1CutsTheBubbleToAThird) {
    for (int p = 2; p <= 8; ++p) {
        for (int m : {p, 2 * p, 3 * p + 1}) {
            auto metrics = simulated_metrics("zb-h1", p, p, m, equal_cost(1.0, 1.0, 1.0));
            EXPECT_NEAR(metrics.iteration_time_s, 3.0 * m + (p - 1.0), 1e-9)
                << "p=" << p << " m=" << m;
            EXPECT_NEAR(metrics.bubble_fraction, (p - 1.0) / (3.0 * m + p - 1.0), 1e-9);
            // 1F1B on the same work leaves three times the idle time.
            auto one_f_one_b = simulated_metrics("1f1b", p, p, m, equal_cost(1.0, 1.0, 1.0));
            EXPECT_NEAR(one_f_one_b.iteration_time_s - 3.0 * m, 3.0 * (p - 1.0), 1e-9);
        }
    }
}

TEST(AnalyticBubble, CommunicationAddsLatencyOnTheCriticalPath) {
    // One transfer each way per stage boundary on the critical path of GPipe
    // with m = 1: forward chain plus backward chain cross 2 (p - 1) links.
    LinkSpec link{1.0, 100.0};  // 1 GB/s, 100 µs
    for (int p = 2; p <= 5; ++p) {
        StageCost cost = equal_cost(1e-3, 2e-3, 0);
        cost.output_bytes = 1e6;  // 1 ms at 1 GB/s
        cost.input_bytes = 1e6;
        auto pipeline = make_pipeline("naive", p, p, 1, cost, &link);
        auto metrics = timeline_metrics(simulate_schedule(pipeline.input).timeline);
        const double hop = 100e-6 + 1e-3;
        EXPECT_NEAR(metrics.iteration_time_s, p * 3e-3 + 2 * (p - 1) * hop, 1e-12) << "p=" << p;
    }
}

}  // namespace
}  // namespace pipewright
