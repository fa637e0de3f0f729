#include "pipewright/core/schedule_check.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "pipewright/core/schedule_csv.h"
#include "pipewright/core/schedule_generators.h"

namespace pipewright {
namespace {

std::vector<int> straight(int p) {
    std::vector<int> v;
    for (int i = 0; i < p; ++i) {
        v.push_back(i);
    }
    return v;
}

bool has_message(const Diagnostics& d, const std::string& path, const std::string& fragment) {
    for (const auto& item : d.items()) {
        if (item.path == path && item.message.find(fragment) != std::string::npos) {
            return true;
        }
    }
    return false;
}

// With one micro-batch: rank 0 runs 0F0 0B0, rank 1 runs 1F0 1B0.
Schedule two_stages_one_microbatch(bool lowered) {
    const Schedule s = generate_schedule("gpipe", {0, 1}, 1);
    return lowered ? add_communication(s) : s;
}

Schedule one_f_one_b(int p, int m, bool lowered) {
    const Schedule s = generate_schedule("1f1b", straight(p), m);
    return lowered ? add_communication(s) : s;
}

TEST(ScheduleCheck, GeneratedSchedulesAreClean) {
    EXPECT_TRUE(check_schedule(one_f_one_b(4, 8, false)).empty());
    EXPECT_TRUE(check_schedule(one_f_one_b(4, 8, true)).empty());
    const Schedule zb = add_communication(generate_schedule("zb-h1", straight(4), 6));
    EXPECT_TRUE(check_schedule(zb).empty()) << check_schedule(zb).format();
}

TEST(ScheduleCheck, ActionOnTheWrongRank) {
    Schedule s = one_f_one_b(2, 2, false);
    // Move 1B1 from rank 1 to the end of rank 0.
    s.ranks[1].pop_back();
    s.ranks[0].push_back({1, ActionType::backward, 1});
    const Diagnostics d = check_schedule(s);
    EXPECT_TRUE(
        has_message(d, "schedule.rank[0][4]", "rank 0 runs 1B1, but stage 1 belongs to rank 1"))
        << d.format();
}

TEST(ScheduleCheck, StageAndMicrobatchOutOfRange) {
    Schedule s = one_f_one_b(2, 2, false);
    s.ranks[0].push_back({5, ActionType::forward, 0});
    s.ranks[1].push_back({1, ActionType::forward, 7});
    const Diagnostics d = check_schedule(s);
    EXPECT_TRUE(has_message(d, "schedule.rank[0][4]", "5F0 names stage 5")) << d.format();
    EXPECT_TRUE(has_message(d, "schedule.rank[0][4]", "stages 0 to 1")) << d.format();
    EXPECT_TRUE(has_message(d, "schedule.rank[1][4]", "micro-batches 0 to 1")) << d.format();
    EXPECT_EQ(d.size(), 2U) << d.format();
}

TEST(ScheduleCheck, DuplicateAction) {
    Schedule s = one_f_one_b(2, 2, false);
    s.ranks[1].push_back({1, ActionType::forward, 0});
    const Diagnostics d = check_schedule(s);
    EXPECT_TRUE(has_message(d, "schedule.rank[1][4]",
                            "1F0 appears twice; it already runs at schedule.rank[1][0]"))
        << d.format();
    EXPECT_EQ(d.size(), 1U) << d.format();
}

TEST(ScheduleCheck, MissingForwardIsReportedAndStallsTheRank) {
    Schedule s = one_f_one_b(2, 2, false);
    // Rank 0: 0F0 0F1 0B0 0B1; drop 0F1.
    s.ranks[0].erase(s.ranks[0].begin() + 1);
    const Diagnostics d = check_schedule(s);
    EXPECT_TRUE(has_message(d, "schedule", "0F1 is missing")) << d.format();
    EXPECT_TRUE(has_message(d, "schedule.rank[1][2]",
                            "rank 1 stalls at action 2 (1F1): it waits for 0F1, which no rank "
                            "runs: the action is missing"))
        << d.format();
}

TEST(ScheduleCheck, SplitBackwardNeedsBothHalves) {
    Schedule s = generate_schedule("zb-h1", {0, 1}, 2);
    // Rank 1: 1F0 1I0 1F1 1I1 1W0 1W1; drop 1W1.
    s.ranks[1].pop_back();
    const Diagnostics d = check_schedule(s);
    EXPECT_TRUE(has_message(d, "schedule", "1W1 is missing")) << d.format();
    EXPECT_EQ(d.size(), 1U) << d.format();
}

TEST(ScheduleCheck, MixingFullAndSplitBackward) {
    Schedule s = one_f_one_b(2, 2, false);
    s.ranks[1].push_back({1, ActionType::backward_weight, 1});
    const Diagnostics d = check_schedule(s);
    EXPECT_TRUE(has_message(d, "schedule", "stage 1 runs micro-batch 1 through both"))
        << d.format();

    // Different (stage, micro-batch) pairs using different kinds run, as
    // DualPipeV's do: stage 0's B waits for stage 1's I.
    Schedule mixed = two_stages_one_microbatch(false);
    mixed.ranks[1][1] = {1, ActionType::backward_input, 0};
    mixed.ranks[1].push_back({1, ActionType::backward_weight, 0});
    const Diagnostics dm = check_schedule(mixed);
    EXPECT_TRUE(dm.empty()) << dm.format();
    EXPECT_TRUE(check_schedule(add_communication(mixed)).empty());
}

TEST(ScheduleCheck, UnmatchedSendAndReceive) {
    Schedule s = two_stages_one_microbatch(true);
    // Rank 0: 0F0 0SEND_F0 0RECV_B0 0B0; rank 1: 1RECV_F0 1F0 1B0 1SEND_B0.
    s.ranks[1].erase(s.ranks[1].begin());      // drop 1RECV_F0
    s.ranks[0].erase(s.ranks[0].begin() + 2);  // drop 0RECV_B0
    const Diagnostics d = check_schedule(s);
    EXPECT_TRUE(has_message(d, "schedule.rank[0][1]",
                            "0SEND_F0 has no matching 1RECV_F0: rank 1 never receives it"))
        << d.format();
    EXPECT_TRUE(has_message(d, "schedule.rank[1][2]",
                            "1SEND_B0 has no matching 0RECV_B0: rank 0 never receives it"))
        << d.format();
}

TEST(ScheduleCheck, MissingSendAndReceivePair) {
    Schedule s = two_stages_one_microbatch(true);
    s.ranks[1].erase(s.ranks[1].begin());      // drop 1RECV_F0
    s.ranks[0].erase(s.ranks[0].begin() + 1);  // drop 0SEND_F0
    const Diagnostics d = check_schedule(s);
    EXPECT_TRUE(has_message(d, "schedule", "0SEND_F0 on rank 0 and 1RECV_F0 on rank 1 are missing"))
        << d.format();
    // Lowered schedules wait on their RECVs, so the forward stalls.
    EXPECT_TRUE(has_message(d, "schedule.rank[1][0]", "waits for 1RECV_F0, which no rank runs"))
        << d.format();
}

TEST(ScheduleCheck, MisplacedSendOrReceive) {
    Schedule s = two_stages_one_microbatch(true);
    s.ranks[1].push_back({1, ActionType::send_forward, 0});
    s.ranks[0].push_back({0, ActionType::recv_forward, 0});
    const Diagnostics d = check_schedule(s);
    EXPECT_TRUE(has_message(d, "schedule.rank[1][4]", "stage 1 is the last stage")) << d.format();
    EXPECT_TRUE(has_message(d, "schedule.rank[0][4]", "stage 0 is the first stage")) << d.format();

    Schedule same = add_communication(generate_schedule("gpipe", {0, 0}, 1));
    ASSERT_FALSE(same.has_communication());
    same.ranks[0].insert(same.ranks[0].begin() + 1, {0, ActionType::send_forward, 0});
    const Diagnostics ds = check_schedule(same);
    EXPECT_TRUE(has_message(ds, "schedule.rank[0][1]", "stages 0 and 1 both run on rank 0"))
        << ds.format();
}

TEST(ScheduleCheck, HandWrittenDeadlockNamesEveryStalledRank) {
    // Rank 0 waits for the gradient before it sends the activation that rank 1
    // needs to produce that gradient.
    const Schedule s = schedule_from_csv(
        "0F0,0RECV_B0,0SEND_F0,0B0\n"
        "1RECV_F0,1F0,1B0,1SEND_B0\n");
    const Diagnostics d = check_schedule(s);
    ASSERT_EQ(d.size(), 2U) << d.format();
    EXPECT_EQ(d.items()[0].path, "schedule.rank[0][1]");
    EXPECT_EQ(d.items()[0].message,
              "rank 0 stalls at action 1 (0RECV_B0): it waits for 1SEND_B0, which rank 1 has not "
              "reached");
    EXPECT_EQ(d.items()[1].path, "schedule.rank[1][0]");
    EXPECT_EQ(d.items()[1].message,
              "rank 1 stalls at action 0 (1RECV_F0): it waits for 0SEND_F0, which rank 0 has not "
              "reached");
}

TEST(ScheduleCheck, ComputeOnlyDeadlockIsCheckedAsIfLowered) {
    // Rank 1 wants micro-batch 1 first, while rank 0 waits for micro-batch 0's
    // gradient before it produces micro-batch 1.
    const Schedule s = schedule_from_csv(
        "0F0,0B0,0F1,0B1\n"
        "1F1,1F0,1B0,1B1\n");
    const Diagnostics d = check_schedule(s);
    ASSERT_EQ(d.size(), 2U) << d.format();
    EXPECT_EQ(d.items()[0].message,
              "rank 0 stalls at action 1 (0B0): it waits for 1B0, which rank 1 has not reached");
    EXPECT_EQ(d.items()[1].message,
              "rank 1 stalls at action 0 (1F1): it waits for 0F1, which rank 0 has not reached");
}

TEST(ScheduleCheck, DependencyLaterOnTheSameRank) {
    const Schedule s = schedule_from_csv("0B0,0F0\n");
    const Diagnostics d = check_schedule(s);
    ASSERT_EQ(d.size(), 1U) << d.format();
    EXPECT_EQ(d.items()[0].path, "schedule.rank[0][0]");
    EXPECT_EQ(d.items()[0].message,
              "rank 0 stalls at action 0 (0B0): it waits for 0F0, which comes later in its own "
              "list, at action 1");
}

TEST(ScheduleCheck, BadShape) {
    Schedule s = one_f_one_b(2, 2, false);
    s.stage_rank = {0, 3};
    EXPECT_TRUE(has_message(check_schedule(s), "schedule", "stage 1 is placed on rank 3"));
    s.stage_rank = {0};
    EXPECT_TRUE(
        has_message(check_schedule(s), "schedule", "covers 1 stage, but the schedule has 2"));
    s = one_f_one_b(2, 2, false);
    s.num_microbatches = 0;
    EXPECT_TRUE(has_message(check_schedule(s), "schedule", "0 micro-batches"));
}

TEST(ScheduleCheck, AbsurdCountsAreRefusedWithoutHugeTables) {
    Schedule s = one_f_one_b(2, 2, false);
    s.num_microbatches = 1000000000;
    const Diagnostics d = check_schedule(s);
    ASSERT_EQ(d.size(), 1U);
    EXPECT_TRUE(has_message(d, "schedule", "1000000000 micro-batches need at least 4000000000"))
        << d.format();
}

TEST(ScheduleCheck, ManyProblemsOfOneKindAreCapped) {
    Schedule s = generate_schedule("gpipe", {0, 1}, 100);
    // Drop every backward of stage 1 (rank 1 runs 100 F's, then 100 B's).
    s.ranks[1].resize(100);
    s.ranks[1].insert(s.ranks[1].end(), 100, Action{1, ActionType::forward, 0});
    const Diagnostics d = check_schedule(s);
    EXPECT_TRUE(has_message(d, "schedule", "... and 80 more missing actions")) << d.format();
    EXPECT_TRUE(has_message(d, "schedule", "... and 80 more duplicate actions")) << d.format();
    EXPECT_TRUE(has_message(d, "schedule", "1B0 is missing")) << d.format();
    EXPECT_LT(d.size(), 60U);
}

TEST(ScheduleCheck, LargeLoweredScheduleChecksClean) {
    const Schedule s = one_f_one_b(64, 1024, true);
    ASSERT_EQ(s.action_count(), 64U * 1024U * 2U + 63U * 1024U * 4U);
    const auto start = std::chrono::steady_clock::now();
    const Diagnostics d = check_schedule(s);
    const auto elapsed = std::chrono::steady_clock::now() - start;
    EXPECT_TRUE(d.empty()) << d.format();
    // Linear work: a quadratic scan would take minutes here.
    EXPECT_LT(std::chrono::duration_cast<std::chrono::seconds>(elapsed).count(), 10);
}

TEST(ScheduleCheck, LargeDeadlockIsFoundQuickly) {
    Schedule s = one_f_one_b(64, 1024, true);
    // Swap the last rank's first two actions: it now computes before receiving.
    std::swap(s.ranks[63][0], s.ranks[63][1]);
    const Diagnostics d = check_schedule(s);
    EXPECT_TRUE(has_message(d, "schedule.rank[63][0]",
                            "rank 63 stalls at action 0 (63F0): it waits for 63RECV_F0, which "
                            "comes later in its own list, at action 1"))
        << d.format();
    // Everyone upstream eventually waits for gradients that never come.
    EXPECT_EQ(d.size(), 64U) << d.format();
}

}  // namespace
}  // namespace pipewright
