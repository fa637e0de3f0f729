// The simulated time and memory of looped BFS, ZB-H2 and interleaved zero
// bubble against their closed forms, for equal stage costs and free
// communication (docs/concepts.md states the formulas):
//   looped BFS (v chunks per device, each 1/v of the work, m >= p):
//                    T = (m + (p-1)/v)(f + b), as interleaved 1F1B
//   ZB-H2 (f = i = w, m >= 2p - 1): every device works without a gap from
//                    its first forward at i f to i f + 3 m f, the paper's
//                    parallelogram; with the optimizer step at the end of
//                    the iteration, T = (3m + p - 1) f. With fewer
//                    micro-batches the first stage runs out of forwards
//                    before the first input gradient comes back.
//   activations: ZB-H2 holds up to 2(p-1-i)+1 micro-batches on stage i,
//                    and 2i more that wait only for their weight gradients.

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "pipewright/core/schedule_check.h"
#include "pipewright/core/zero_bubble_auto.h"
#include "sim_test_support.h"

namespace pipewright {
namespace {

using testing::equal_cost;
using testing::make_pipeline;
using testing::simulated_metrics;

TEST(ScheduleLibrarySimulated, LoopedBfsMatchesInterleavedClosedFormWhenMicroBatchesCoverTheLoop) {
    for (int p : {1, 2, 3, 4}) {
        for (int v : {1, 2, 3}) {
            for (int m : {p, p + 1, 2 * p, 3 * p + 2}) {
                const auto metrics = simulated_metrics("looped-bfs", p * v, p, m,
                                                       equal_cost(1.0 / v, 1.0 / v, 1.0 / v));
                EXPECT_NEAR(metrics.iteration_time_s, (m + (p - 1.0) / v) * 3.0, 1e-9)
                    << "p=" << p << " v=" << v << " m=" << m;
            }
        }
    }
}

TEST(ScheduleLibrarySimulated, LoopedBfsOnOneStagePerDeviceIsGPipe) {
    for (int p : {2, 4}) {
        for (int m : {1, 3, 8}) {
            const auto bfs = simulated_metrics("looped-bfs", p, p, m, equal_cost(1.0, 1.3, 0.4));
            const auto gpipe = simulated_metrics("gpipe", p, p, m, equal_cost(1.0, 1.3, 0.4));
            EXPECT_NEAR(bfs.iteration_time_s, gpipe.iteration_time_s, 1e-9);
        }
    }
}

TEST(ScheduleLibrarySimulated, ZeroBubbleH2IsAParallelogram) {
    for (int p = 2; p <= 6; ++p) {
        for (int m : {2 * p - 1, 2 * p, 3 * p + 1}) {
            SCOPED_TRACE("p=" + std::to_string(p) + " m=" + std::to_string(m));
            const auto metrics = simulated_metrics("zb-h2", p, p, m, equal_cost(1.0, 1.0, 1.0));
            EXPECT_NEAR(metrics.iteration_time_s, 3.0 * m + p - 1.0, 1e-9);
            for (const auto& d : metrics.devices) {
                EXPECT_NEAR(d.start_s, d.rank, 1e-9) << "device " << d.rank;
                EXPECT_NEAR(d.end_s, d.rank + 3.0 * m, 1e-9) << "device " << d.rank;
                EXPECT_NEAR(d.busy_s, 3.0 * m, 1e-9) << "device " << d.rank;
            }
        }
    }
}

// ZB-V with f = i = w per stage and free transfers: every device works
// without a gap from its first forward at r f to r f + 6 m f (two stages, each
// F, I and W per micro-batch), the parallelogram of the paper's figure, at
// the activation memory of 1F1B (the first device holds p micro-batches'
// worth: 2p - r of its stage on the way down and r + 1 on the way back, each
// half a 1F1B stage).
TEST(ScheduleLibrarySimulated, ZeroBubbleVIsAParallelogram) {
    for (int p = 1; p <= 6; ++p) {
        for (int m : {2 * p - 1, 2 * p, 3 * p + 1}) {
            SCOPED_TRACE("p=" + std::to_string(p) + " m=" + std::to_string(m));
            const auto metrics = simulated_metrics("zbv", 2 * p, p, m, equal_cost(1.0, 1.0, 1.0));
            EXPECT_NEAR(metrics.iteration_time_s, 6.0 * m + p - 1.0, 1e-9);
            for (const auto& d : metrics.devices) {
                EXPECT_NEAR(d.start_s, d.rank, 1e-9) << "device " << d.rank;
                EXPECT_NEAR(d.end_s, d.rank + 6.0 * m, 1e-9) << "device " << d.rank;
            }
        }
    }
}

// Where the weight gradient is cheaper than the input gradient, ZB-H1 cannot
// hide its ramp, (p-1)(f + i - w), and ZB-H2's stays (p-1) f.
TEST(ScheduleLibrarySimulated, ZeroBubbleH2BeatsH1WhenWeightGradientsAreCheap) {
    for (int p = 2; p <= 6; ++p) {
        const int m = 2 * p + 1;
        const StageCost cost = equal_cost(1.0, 1.0, 0.5);
        const auto h2 = simulated_metrics("zb-h2", p, p, m, cost);
        const auto h1 = simulated_metrics("zb-h1", p, p, m, cost);
        EXPECT_NEAR(h2.iteration_time_s, 2.5 * m + (p - 1.0), 1e-9) << "p=" << p;
        EXPECT_NEAR(h1.iteration_time_s, 2.5 * m + 1.5 * (p - 1.0), 1e-9) << "p=" << p;
    }
}

TEST(ScheduleLibrarySimulated, ZeroBubbleH2HoldsAboutTwiceTheActivationsOfH1) {
    constexpr double kStash = 1000;
    constexpr double kWeightStash = 100;
    const auto peaks = [&](const std::string& name, int p, int m) {
        StageCost cost = equal_cost(1, 1, 1);
        cost.stash_bytes = kStash;
        cost.weight_stash_bytes = kWeightStash;
        auto pipeline = make_pipeline(name, p, p, m, cost);
        const auto out = simulate_schedule(pipeline.input);
        std::vector<std::int64_t> peak;
        for (const auto& rank :
             memory_over_time(out.timeline, pipeline.input.stages,
                              std::vector<std::int64_t>(static_cast<std::size_t>(p), 0))) {
            peak.push_back(rank.peak_bytes);
        }
        return peak;
    };
    for (int p : {2, 4, 6}) {
        const int m = 3 * p;
        const auto h2 = peaks("zb-h2", p, m);
        const auto h1 = peaks("zb-h1", p, m);
        // Stage 0 runs 2p - 1 forwards before its first input gradient.
        EXPECT_EQ(h2.front(), static_cast<std::int64_t>((2 * p - 1) * kStash)) << "p=" << p;
        EXPECT_EQ(h1.front(), static_cast<std::int64_t>(p * kStash)) << "p=" << p;
        for (std::size_t i = 0; i < h2.size(); ++i) {
            EXPECT_GE(h2[i], h1[i]) << "p=" << p << " stage " << i;
        }
    }
}

TEST(ScheduleLibrarySimulated, InterleavedZeroBubbleIsNeverSlowerThanInterleaved1F1B) {
    for (int p : {2, 3, 4}) {
        for (int v : {2, 3}) {
            for (int m : {p, 2 * p, 4 * p}) {
                const StageCost cost = equal_cost(1.0 / v, 1.0 / v, 1.0 / v);
                const auto zb = simulated_metrics("interleaved-zb", p * v, p, m, cost);
                const auto one_f_one_b = simulated_metrics("interleaved-1f1b", p * v, p, m, cost);
                EXPECT_LE(zb.iteration_time_s, one_f_one_b.iteration_time_s + 1e-9)
                    << "p=" << p << " v=" << v << " m=" << m;
                EXPECT_GE(zb.iteration_time_s, 3.0 * m - 1e-9);
            }
        }
    }
}

// Whatever the costs and links, every configuration a new generator accepts
// runs to the end (the simulator names a deadlock otherwise).
// DualPipe's README gives DualPipeV's bubble as (PP/2 - 1)(F&B + B - 3W)
// for PP stages on PP/2 devices, F&B the time of an overlapped pair. On one
// compute stream the pair takes F + B, and the simulated iteration is the
// work of a device, 2m(F + B), plus that bubble, from m = 2p on, exactly
// where I = W.
TEST(ScheduleLibrarySimulated, DualPipeVBubbleIsDualPipesFormula) {
    for (const auto& [f, i, w] :
         {std::array<double, 3>{1.0, 1.0, 1.0}, {1.0, 1.5, 0.5}, {0.8, 1.0, 1.2}}) {
        for (int p = 2; p <= 6; ++p) {
            for (int m : {2 * p, 2 * p + 3, 4 * p}) {
                SCOPED_TRACE("p=" + std::to_string(p) + " m=" + std::to_string(m) +
                             " f=" + std::to_string(f) + " i=" + std::to_string(i) +
                             " w=" + std::to_string(w));
                const auto metrics =
                    simulated_metrics("dualpipev", 2 * p, p, m, equal_cost(f, i, w));
                const double b = i + w;
                const double bubble = (p - 1) * ((f + b) + b - 3 * w);
                // Exact where I = W, the README's setting; otherwise the
                // cool-down's weight gradients fall elsewhere than the
                // formula assumes, by at most (p - 1)|I - W|.
                EXPECT_NEAR(metrics.iteration_time_s, 2 * m * (f + b) + bubble,
                            (p - 1) * std::abs(i - w) + 1e-9);
            }
        }
    }
}

// DualPipe's README: PP + 1 micro-batches of activations per device, one
// more than ZB-V's 2p (here each held from its forward to its W or B).
TEST(ScheduleLibrarySimulated, DualPipeVHoldsOneMoreMicroBatchThanZbV) {
    for (int p = 2; p <= 6; ++p) {
        SCOPED_TRACE("p=" + std::to_string(p));
        StageCost cost = equal_cost(1.0, 1.0, 1.0);
        cost.stash_bytes = 1;
        cost.weight_stash_bytes = 1;
        for (const char* name : {"dualpipev", "zbv"}) {
            auto pipeline = make_pipeline(name, 2 * p, p, 3 * p, cost);
            const auto out = simulate_schedule(pipeline.input);
            for (const std::int64_t peak : out.peak_memory_bytes) {
                EXPECT_EQ(peak, std::string(name) == "dualpipev" ? 2 * p + 1 : 2 * p) << name;
            }
        }
    }
}

// zb-auto built for uneven stages and links is never slower than zb-h1 in
// the simulator itself (links of their own, as generate_zb_auto times them).
TEST(ScheduleLibrarySimulated, ZeroBubbleAutoIsNeverSlowerThanZbH1) {
    std::mt19937 random(4122026);
    std::uniform_real_distribution<double> compute(0.5, 2.0);
    std::uniform_real_distribution<double> bytes(0.0, 2e6);
    const LinkSpec link{2.0, 50.0};  // 2 GB/s: up to a millisecond a transfer
    int faster = 0;
    for (int trial = 0; trial < 40; ++trial) {
        const int p = 2 + trial % 5;
        const int m = p + trial % 6;
        SCOPED_TRACE("trial " + std::to_string(trial));
        auto h1 = make_pipeline("zb-h1", p, p, m, equal_cost(1, 1, 1), &link);
        AutoScheduleCosts costs;
        for (int s = 0; s < p; ++s) {
            StageCost& c = h1.input.stages[static_cast<std::size_t>(s)];
            c.forward_s = compute(random) * 1e-3;
            c.backward_input_s = compute(random) * 1e-3;
            c.backward_weight_s = compute(random) * 1e-3;
            c.output_bytes = bytes(random);
            c.input_bytes = bytes(random);
            c.stash_bytes = 1;
            AutoStageCosts a;
            a.forward_s = c.forward_s;
            a.input_s = c.backward_input_s;
            a.weight_s = c.backward_weight_s;
            a.memory_limit_bytes = p;
            a.to_next = {c.output_bytes / 2e9, 50e-6};
            a.to_previous = {c.input_bytes / 2e9, 50e-6};
            costs.stages.push_back(a);
        }
        auto automatic = h1;
        automatic.schedule = add_communication(generate_zb_auto(h1.schedule.stage_rank, m, costs));
        automatic.input.schedule = &automatic.schedule;
        h1.input.schedule = &h1.schedule;
        const double t_h1 = timeline_metrics(simulate_schedule(h1.input).timeline).iteration_time_s;
        const double t_auto =
            timeline_metrics(simulate_schedule(automatic.input).timeline).iteration_time_s;
        EXPECT_LE(t_auto, t_h1 + 1e-12);
        EXPECT_NEAR(t_auto, time_for_costs(automatic.schedule, costs).iteration_s, 1e-12);
        faster += t_auto < t_h1 - 1e-12 ? 1 : 0;
    }
    EXPECT_GT(faster, 20);
}

TEST(ScheduleLibrarySimulated, EveryAcceptedConfigurationRunsToTheEnd) {
    LinkSpec link{2.0, 50.0};
    int simulated = 0;
    for (const char* name :
         {"looped-bfs", "interleaved-zb", "zb-h2", "zbv", "dualpipev", "zb-auto"}) {
        for (int p = 1; p <= 5; ++p) {
            for (int v = 1; v <= 3; ++v) {
                for (int m = 1; m <= 11; m += 2) {
                    SCOPED_TRACE(std::string(name) + " p=" + std::to_string(p) +
                                 " v=" + std::to_string(v) + " m=" + std::to_string(m));
                    StageCost cost = equal_cost(0.7, 1.1, 0.5);
                    cost.output_bytes = 3e5;
                    cost.input_bytes = 3e5;
                    try {
                        auto pipeline = make_pipeline(name, p * v, p, m, cost, &link);
                        const auto metrics =
                            timeline_metrics(simulate_schedule(pipeline.input).timeline);
                        EXPECT_GE(metrics.iteration_time_s, m * v * 2.3 - 1e-9);
                        ++simulated;
                    } catch (const ScheduleError&) {
                        continue;  // a configuration the schedule does not accept
                    }
                }
            }
        }
    }
    EXPECT_GT(simulated, 80);
}

}  // namespace
}  // namespace pipewright
