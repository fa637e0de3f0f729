// The generators that follow torch.distributed.pipelining and the zero-bubble
// paper: their lists match what torch builds, their rules are explained, and
// every configuration they accept is a valid schedule.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "pipewright/core/schedule_check.h"
#include "pipewright/core/schedule_generators.h"
#include "schedule_test_support.h"

namespace pipewright {
namespace {

using testing::expect_error;
using testing::expect_ranks;
using testing::looped;
using testing::v_shape;

// The expected lists are what torch 2.15's _calculate_single_rank_operations
// returns for these configurations, None slots left out.
TEST(ScheduleLibrary, LoopedBfsMatchesTorch) {
    expect_ranks(generate_schedule("looped-bfs", looped(2, 2), 3),
                 {"0F0 0F1 0F2 2F0 2F1 2F2 2B2 2B1 2B0 0B2 0B1 0B0",
                  "1F0 1F1 1F2 3F0 3F1 3F2 3B2 3B1 3B0 1B2 1B1 1B0"});
}

TEST(ScheduleLibrary, InterleavedZeroBubbleMatchesTorch) {
    expect_ranks(generate_schedule("interleaved-zb", looped(2, 2), 4),
                 {"0F0 0F1 2F0 2F1 2I0 2W0 0F2 2I1 2W1 0F3 0I0 0W0 2F2 0I1 0W1 2F3 2I2 2W2 2I3 "
                  "2W3 0I2 0W2 0I3 0W3",
                  "1F0 1F1 3F0 3I0 3F1 3I1 3W0 1F2 1I0 3W1 1F3 1I1 1W0 3F2 3I2 1W1 3F3 3I3 3W2 "
                  "1I2 3W3 1I3 1W2 1W3"});
    // One round of five micro-batches on three devices.
    expect_ranks(
        generate_schedule("interleaved-zb", looped(3, 2), 5),
        {"0F0 0F1 0F2 0F3 0F4 3F0 3F1 3F2 3I0 3W0 3F3 3I1 3W1 3F4 3I2 3W2 3I3 3W3 3I4 3W4 0I0 "
         "0W0 0I1 0W1 0I2 0W2 0I3 0W3 0I4 0W4",
         "1F0 1F1 1F2 1F3 1F4 4F0 4F1 4I0 4F2 4I1 4W0 4F3 4I2 4W1 4F4 4I3 4W2 4I4 4W3 1I0 4W4 "
         "1I1 1W0 1I2 1W1 1I3 1W2 1I4 1W3 1W4",
         "2F0 2F1 2F2 2F3 2F4 5F0 5I0 5F1 5I1 5F2 5I2 5W0 5F3 5I3 5W1 5F4 5I4 5W2 2I0 5W3 2I1 "
         "5W4 2I2 2W0 2I3 2W1 2I4 2W2 2W3 2W4"});
    // Three rounds of two.
    expect_ranks(generate_schedule("interleaved-zb", looped(2, 2), 6),
                 {"0F0 0F1 2F0 2F1 2I0 2W0 0F2 2I1 2W1 0F3 0I0 0W0 2F2 0I1 0W1 2F3 2I2 2W2 0F4 "
                  "2I3 2W3 0F5 0I2 0W2 2F4 0I3 0W3 2F5 2I4 2W4 2I5 2W5 0I4 0W4 0I5 0W5",
                  "1F0 1F1 3F0 3I0 3F1 3I1 3W0 1F2 1I0 3W1 1F3 1I1 1W0 3F2 3I2 1W1 3F3 3I3 3W2 "
                  "1F4 1I2 3W3 1F5 1I3 1W2 3F4 3I4 1W3 3F5 3I5 3W4 1I4 3W5 1I5 1W4 1W5"});
}

TEST(ScheduleLibrary, ZeroBubbleVMatchesTorch) {
    expect_ranks(generate_schedule("zbv", v_shape(2), 4),
                 {"0F0 0F1 0F2 3F0 3I0 3W0 3F1 3I1 3W1 0F3 0I0 0W0 3F2 3I2 3W2 0I1 0W1 3F3 3I3 "
                  "3W3 0I2 0W2 0I3 0W3",
                  "1F0 2F0 1F1 2F1 2I0 2W0 1F2 1I0 1W0 2F2 2I1 2W1 1F3 1I1 1W1 2F3 2I2 2W2 1I2 "
                  "2I3 1I3 1W2 2W3 1W3"});
    expect_ranks(
        generate_schedule("zbv", v_shape(3), 5),
        {"0F0 0F1 0F2 0F3 0F4 5F0 5I0 5W0 5F1 5I1 5W1 5F2 5I2 5W2 0I0 0W0 5F3 5I3 5W3 0I1 0W1 "
         "5F4 5I4 5W4 0I2 0W2 0I3 0W3 0I4 0W4",
         "1F0 1F1 1F2 4F0 1F3 4F1 4I0 4W0 4F2 4I1 4W1 1F4 1I0 1W0 4F3 4I2 4W2 1I1 1W1 4F4 4I3 "
         "4W3 1I2 4I4 1I3 1W2 1I4 1W3 4W4 1W4",
         "2F0 3F0 2F1 3F1 2F2 3F2 3I0 3W0 2F3 2I0 2W0 3F3 3I1 3W1 2F4 2I1 2W1 3F4 3I2 3W2 2I2 "
         "3I3 2I3 3I4 2I4 2W2 3W3 3W4 2W3 2W4"});
    // Fewer than 2p - 1 micro-batches: torch plans 2p - 1 and drops the rest.
    expect_ranks(generate_schedule("zbv", v_shape(3), 3),
                 {"0F0 0F1 0F2 5F0 5I0 5W0 5F1 5I1 5W1 5F2 5I2 5W2 0I0 0W0 0I1 0W1 0I2 0W2",
                  "1F0 1F1 1F2 4F0 4F1 4I0 4W0 4F2 4I1 4W1 1I0 1W0 4I2 4W2 1I1 1W1 1I2 1W2",
                  "2F0 3F0 2F1 3F1 2F2 3F2 3I0 3W0 2I0 2W0 3I1 3W1 2I1 2W1 3I2 3W2 2I2 2W2"});
    expect_ranks(generate_schedule("zbv", v_shape(2), 1),
                 {"0F0 3F0 3I0 3W0 0I0 0W0", "1F0 2F0 2I0 2W0 1I0 1W0"});
}

TEST(ScheduleLibrary, ZeroBubbleH2DoublesTheWarmUp) {
    // Stage i: F(x), I(x - 2(p-1-i)), W(x - 2(p-1)).
    expect_ranks(generate_schedule("zb-h2", {0, 1, 2}, 5),
                 {"0F0 0F1 0F2 0F3 0F4 0I0 0W0 0I1 0W1 0I2 0W2 0I3 0W3 0I4 0W4",
                  "1F0 1F1 1F2 1I0 1F3 1I1 1F4 1I2 1W0 1I3 1W1 1I4 1W2 1W3 1W4",
                  "2F0 2I0 2F1 2I1 2F2 2I2 2F3 2I3 2F4 2I4 2W0 2W1 2W2 2W3 2W4"});
}

TEST(ScheduleLibrary, RulesAreExplained) {
    expect_error("looped-bfs", {0, 1, 0}, 4,
                 {"same number of stages on every device", "3 stages", "2 devices", "use 2, 4",
                  "or use gpipe"});
    expect_error("looped-bfs", {0, 0, 1, 1}, 4, {"stage 1 is on device 0", "expected device 1"});
    expect_error("interleaved-zb", {0, 1}, 4,
                 {"at least 2 each", "2 stages", "2 devices", "use 4, 6", "or use zb-h1"});
    expect_error("interleaved-zb", looped(4, 2), 3,
                 {"at least as many micro-batches as devices", "4 devices", "3 micro-batches",
                  "raise microbatches to 4"});
    expect_error("interleaved-zb", looped(4, 2), 9,
                 {"rounds of equal size", "ScheduleInterleavedZeroBubble", "9 micro-batches",
                  "4 devices", "2 rounds", "use 8 or 10"});
    expect_error("zbv", looped(2, 2), 4, {"V", "stage 2 is on device 0", "expected device 1"});
    expect_error("zbv", {0, 1, 2}, 4,
                 {"exactly two stages on every device", "3 stages", "3 devices", "use 6 stages"});
    expect_error("zb-h2", {0, 0, 1}, 4,
                 {"exactly one stage", "3 stages", "2 devices", "use interleaved-zb or gpipe"});
    expect_error("zb-h2", {0, 1, 2}, 2,
                 {"at least as many micro-batches as stages", "raise microbatches to 3"});
}

// Every configuration a generator accepts is a valid schedule before and
// after lowering; the simulator tests check that they run.
TEST(ScheduleLibrary, EveryAcceptedConfigurationIsValid) {
    int built = 0;
    for (const char* name : {"looped-bfs", "interleaved-zb", "zb-h2"}) {
        for (int p = 1; p <= 5; ++p) {
            for (int v = 1; v <= 3; ++v) {
                for (int m = 1; m <= 13; ++m) {
                    SCOPED_TRACE(std::string(name) + " p=" + std::to_string(p) +
                                 " v=" + std::to_string(v) + " m=" + std::to_string(m));
                    Schedule s;
                    try {
                        s = generate_schedule(name, looped(p, v), m);
                    } catch (const ScheduleError&) {
                        continue;
                    }
                    ++built;
                    const Diagnostics d = check_schedule(s);
                    EXPECT_TRUE(d.empty()) << d.format();
                    const Diagnostics lowered = check_schedule(add_communication(s));
                    EXPECT_TRUE(lowered.empty()) << lowered.format();
                    EXPECT_EQ(
                        s.action_count(),
                        static_cast<std::size_t>(s.num_stages * m * (s.splits_backward() ? 3 : 2)));
                }
            }
        }
    }
    for (int p = 1; p <= 6; ++p) {
        for (int m = 1; m <= 14; ++m) {
            SCOPED_TRACE("zbv p=" + std::to_string(p) + " m=" + std::to_string(m));
            const Schedule s = generate_schedule("zbv", v_shape(p), m);
            ++built;
            const Diagnostics d = check_schedule(s);
            EXPECT_TRUE(d.empty()) << d.format();
            EXPECT_TRUE(check_schedule(add_communication(s)).empty());
            EXPECT_EQ(s.action_count(), static_cast<std::size_t>(2 * p * m * 3));
        }
    }
    EXPECT_GT(built, 200);
}

// A stage's micro-batch runs either a whole B or I then W; DualPipeV mixes
// the two, and a pair marked OVERLAP_F_B is a forward right before a B.
TEST(ScheduleLibrary, DualPipeVIsValidForEveryAcceptedConfiguration) {
    int built = 0;
    for (int p = 1; p <= 6; ++p) {
        for (int m = 2 * p; m <= 2 * p + 9; ++m) {
            SCOPED_TRACE("dualpipev p=" + std::to_string(p) + " m=" + std::to_string(m));
            const Schedule s = generate_schedule("dualpipev", v_shape(p), m);
            ++built;
            const Diagnostics d = check_schedule(s);
            EXPECT_TRUE(d.empty()) << d.format();
            const Schedule lowered = add_communication(s);
            EXPECT_TRUE(check_schedule(lowered).empty()) << check_schedule(lowered).format();
            int overlapped = 0;
            for (const auto& row : lowered.ranks) {
                for (std::size_t i = 0; i < row.size(); ++i) {
                    if (row[i].overlaps_next) {
                        ++overlapped;
                        ASSERT_LT(i + 1, row.size());
                        EXPECT_EQ(row[i + 1].type, ActionType::backward);
                    }
                }
            }
            // The steady state overlaps: 2(m - 2p + r + 1) + (p - r - 1)
            // pairs on device r, less the turn of the V on the last one.
            int expected = 0;
            for (int r = 0; r < p; ++r) {
                expected += 2 * (m - 2 * p + r + 1) + (p - r - 1) - (r == p - 1 ? 1 : 0);
            }
            EXPECT_EQ(overlapped, expected);
        }
    }
    EXPECT_EQ(built, 60);
}

TEST(ScheduleLibrary, DualPipeVRulesAreExplained) {
    expect_error("dualpipev", v_shape(3), 5,
                 {"at least as many micro-batches as stages", "6 for 6 stages on 3 devices",
                  "5 micro-batches", "use 6 or more", "or use zbv"});
    expect_error("dualpipev", looped(2, 2), 4, {"V", "stage 2 is on device 0"});
    expect_error("dualpipev", {0, 1}, 4, {"exactly two stages on every device"});
}

TEST(ScheduleLibrary, CheckerExplainsMisplacedOverlap) {
    Schedule s = generate_schedule("dualpipev", v_shape(2), 4);
    // Rank 0's first pair: mark its backward instead of its forward.
    auto& row = s.ranks[0];
    const auto pair = static_cast<std::size_t>(
        std::find_if(row.begin(), row.end(), [](const Action& a) { return a.overlaps_next; }) -
        row.begin());
    ASSERT_LT(pair + 1, row.size());
    row[pair].overlaps_next = false;
    row[pair + 1].overlaps_next = true;
    const std::string text = check_schedule(s).format();
    EXPECT_NE(text.find("only a forward overlaps a backward"), std::string::npos) << text;
    EXPECT_NE(text.find("schedule.rank[0][" + std::to_string(pair + 1) + "]"), std::string::npos)
        << text;
    // A stage's micro-batch with both B and I is still refused.
    Schedule mixed = generate_schedule("zb-h1", {0, 1}, 2);
    mixed.ranks[1].push_back({1, ActionType::backward, 0});
    EXPECT_NE(check_schedule(mixed).format().find("both a full backward (B) and a split"),
              std::string::npos);
}

}  // namespace
}  // namespace pipewright
