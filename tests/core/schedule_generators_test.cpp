#include "pipewright/core/schedule_generators.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>
#include <set>
#include <string>
#include <vector>

#include "pipewright/core/schedule_check.h"
#include "schedule_test_support.h"

namespace pipewright {
namespace {

using testing::expect_error;
using testing::expect_ranks;
using testing::join;
using testing::looped;
using testing::placement_for;
using testing::straight;

void expect_clean(const Schedule& s) {
    const Diagnostics d = check_schedule(s);
    EXPECT_TRUE(d.empty()) << s.name << ": " << d.format();
    const Schedule lowered = add_communication(s);
    const Diagnostics dl = check_schedule(lowered);
    EXPECT_TRUE(dl.empty()) << s.name << " lowered: " << dl.format();
}

TEST(ScheduleGenerators, OneFOneBTwoStagesThreeMicrobatches) {
    const Schedule s = generate_schedule("1f1b", {0, 1}, 3);
    EXPECT_EQ(s.name, "1f1b");
    EXPECT_EQ(s.num_stages, 2);
    EXPECT_EQ(s.num_microbatches, 3);
    EXPECT_EQ(s.stage_rank, (std::vector<int>{0, 1}));
    expect_ranks(s, {"0F0 0F1 0B0 0F2 0B1 0B2", "1F0 1B0 1F1 1B1 1F2 1B2"});
}

TEST(ScheduleGenerators, OneFOneBFourStages) {
    const Schedule s = generate_schedule("1f1b", straight(4), 4);
    expect_ranks(s, {"0F0 0F1 0F2 0F3 0B0 0B1 0B2 0B3", "1F0 1F1 1F2 1B0 1F3 1B1 1B2 1B3",
                     "2F0 2F1 2B0 2F2 2B1 2F3 2B2 2B3", "3F0 3B0 3F1 3B1 3F2 3B2 3F3 3B3"});
}

TEST(ScheduleGenerators, GPipeAllForwardsThenAllBackwards) {
    expect_ranks(generate_schedule("gpipe", {0, 1}, 2), {"0F0 0F1 0B0 0B1", "1F0 1F1 1B0 1B1"});
    // Several stages on one rank: all of a stage, then the next; backwards in
    // reverse stage order.
    expect_ranks(generate_schedule("gpipe", {0, 1, 0}, 2),
                 {"0F0 0F1 2F0 2F1 2B0 2B1 0B0 0B1", "1F0 1F1 1B0 1B1"});
}

TEST(ScheduleGenerators, NaiveRunsOneBatchThroughEveryStage) {
    expect_ranks(generate_schedule("naive", {0, 1, 2}, 1), {"0F0 0B0", "1F0 1B0", "2F0 2B0"});
    expect_ranks(generate_schedule("naive", {1, 0, 1}, 1), {"1F0 1B0", "0F0 2F0 2B0 0B0"});
}

TEST(ScheduleGenerators, InterleavedTwoDevicesTwoChunks) {
    const Schedule s = generate_schedule("interleaved-1f1b", looped(2, 2), 2);
    expect_ranks(s, {"0F0 0F1 2F0 2F1 2B0 2B1 0B0 0B1", "1F0 1F1 3F0 3B0 3F1 3B1 1B0 1B1"});
}

TEST(ScheduleGenerators, ZeroBubbleH1TwoStages) {
    const Schedule s = generate_schedule("zb-h1", {0, 1}, 2);
    expect_ranks(s, {"0F0 0F1 0I0 0W0 0I1 0W1", "1F0 1I0 1F1 1I1 1W0 1W1"});
    EXPECT_TRUE(s.splits_backward());
}

TEST(ScheduleGenerators, ZeroBubbleH1ThreeStages) {
    const Schedule s = generate_schedule("zb-h1", straight(3), 4);
    expect_ranks(s, {"0F0 0F1 0F2 0I0 0W0 0F3 0I1 0W1 0I2 0W2 0I3 0W3",
                     "1F0 1F1 1I0 1F2 1I1 1W0 1F3 1I2 1W1 1I3 1W2 1W3",
                     "2F0 2I0 2F1 2I1 2F2 2I2 2W0 2F3 2I3 2W1 2W2 2W3"});
}

int forwards_before_first(const std::vector<Action>& actions, ActionType t) {
    const auto first =
        std::find_if(actions.begin(), actions.end(), [t](const Action& a) { return a.type == t; });
    return static_cast<int>(std::count_if(
        actions.begin(), first, [](const Action& a) { return a.type == ActionType::forward; }));
}

TEST(ScheduleGenerators, OneFOneBWarmupAndCounts) {
    for (const int p : {1, 2, 3, 4, 8}) {
        for (const int m : {p, p + 1, 2 * p + 3, 16}) {
            if (m < p) {
                continue;
            }
            const Schedule s = generate_schedule("1f1b", straight(p), m);
            SCOPED_TRACE("p=" + std::to_string(p) + " m=" + std::to_string(m));
            for (int r = 0; r < p; ++r) {
                const auto& actions = s.ranks[static_cast<std::size_t>(r)];
                EXPECT_EQ(actions.size(), static_cast<std::size_t>(2 * m));
                EXPECT_EQ(forwards_before_first(actions, ActionType::backward), std::min(p - r, m));
            }
            expect_clean(s);
        }
    }
}

TEST(ScheduleGenerators, InterleavedWarmupAndCounts) {
    for (const int p : {1, 2, 4}) {
        for (const int v : {2, 3}) {
            for (const int m : {p, 2 * p, 4 * p}) {
                const Schedule s = generate_schedule("interleaved-1f1b", looped(p, v), m);
                SCOPED_TRACE("p=" + std::to_string(p) + " v=" + std::to_string(v) +
                             " m=" + std::to_string(m));
                EXPECT_EQ(s.num_stages, p * v);
                for (int r = 0; r < p; ++r) {
                    const auto& actions = s.ranks[static_cast<std::size_t>(r)];
                    EXPECT_EQ(actions.size(), static_cast<std::size_t>(2 * m * v));
                    const int warmup = std::min((p - r - 1) * 2 + (v - 1) * p, m * v);
                    EXPECT_EQ(forwards_before_first(actions, ActionType::backward),
                              std::min(warmup + 1, m * v));
                    for (const Action& a : actions) {
                        EXPECT_EQ(a.stage % p, r) << to_string(a);
                    }
                }
                expect_clean(s);
            }
        }
    }
}

TEST(ScheduleGenerators, ZeroBubbleDefersWeightsByRank) {
    for (const int p : {1, 2, 3, 4, 8}) {
        for (const int m : {p, p + 2, 3 * p}) {
            const Schedule s = generate_schedule("zb-h1", straight(p), m);
            SCOPED_TRACE("p=" + std::to_string(p) + " m=" + std::to_string(m));
            for (int r = 0; r < p; ++r) {
                const auto& actions = s.ranks[static_cast<std::size_t>(r)];
                EXPECT_EQ(actions.size(), static_cast<std::size_t>(3 * m));
                EXPECT_EQ(forwards_before_first(actions, ActionType::backward_input),
                          std::min(p - r, m));
                // Rank r holds back r weight gradients before its first W.
                const auto first_w = std::find_if(
                    actions.begin(), actions.end(),
                    [](const Action& a) { return a.type == ActionType::backward_weight; });
                const auto inputs = std::count_if(actions.begin(), first_w, [](const Action& a) {
                    return a.type == ActionType::backward_input;
                });
                EXPECT_EQ(inputs, std::min(r + 1, m));
                // W's follow I's in micro-batch order.
                int next_w = 0;
                for (const Action& a : actions) {
                    if (a.type == ActionType::backward_weight) {
                        EXPECT_EQ(a.microbatch, next_w++);
                    }
                }
            }
            expect_clean(s);
        }
    }
}

TEST(ScheduleGenerators, GPipeAndNaiveAcceptAnyPlacement) {
    for (const auto& placement : std::vector<std::vector<int>>{
             {0}, {0, 1}, {1, 0}, {0, 0, 1, 1}, {1, 0, 1, 0}, {2, 0, 1}, {0, 1, 2, 0, 1, 2}}) {
        expect_clean(generate_schedule("gpipe", placement, 3));
        expect_clean(generate_schedule("naive", placement, 1));
        const Schedule g = generate_schedule("gpipe", placement, 5);
        EXPECT_EQ(g.action_count(), placement.size() * 10);
    }
}

TEST(ScheduleGenerators, RejectsUnmetConstraintsWithNumbers) {
    expect_error("1f1b", straight(4), 2,
                 {"1f1b needs at least as many micro-batches as stages", "4 stages",
                  "2 micro-batches", "4 or more", "gpipe"});
    expect_error("zb-h1", straight(3), 1, {"zb-h1", "3 stages", "1 micro-batch", "3 or more"});
    expect_error("1f1b", {0, 0, 1, 1}, 8, {"exactly one stage", "4 stages", "2 devices"});
    expect_error("1f1b", {1, 0}, 4, {"stage 0 is on device 1"});
    expect_error("zb-h1", {0, 0}, 4, {"exactly one stage", "2 stages", "1 device"});
    expect_error("naive", {0, 1}, 2,
                 {"naive model parallelism runs the whole batch as one piece", "2 micro-batches",
                  "set microbatches to 1 or choose gpipe"});
    expect_error("interleaved-1f1b", {0, 1}, 2, {"at least 2", "2 stages", "2 devices"});
    expect_error("interleaved-1f1b", {0, 1, 0}, 2, {"3 stages", "2 devices"});
    expect_error("interleaved-1f1b", {0, 0, 1, 1}, 2,
                 {"stage 1 is on device 0", "expected device 1", "mod 2"});
    expect_error("interleaved-1f1b", looped(4, 2), 6,
                 {"multiple of the number of devices", "Megatron-LM", "4 devices",
                  "6 micro-batches", "4 or 8"});
    expect_error("interleaved-1f1b", looped(4, 2), 2, {"4 devices", "2 micro-batches", "use 4"});
    expect_error("gpipe", {0, 2}, 2, {"device 1 runs no stage", "0 to 2"});
    expect_error("gpipe", {0, -1}, 2, {"stage 1", "device -1"});
    expect_error("gpipe", {}, 2, {"at least one stage"});
    expect_error("gpipe", {0, 1}, 0, {"at least one micro-batch", "got 0"});
    expect_error("pipedream", {0, 1}, 2, {"unknown schedule \"pipedream\"", "1f1b", "zb-h1"});
}

TEST(ScheduleGenerators, CatalogListsEveryGenerator) {
    const auto& catalog = schedule_catalog();
    std::vector<std::string> names;
    for (const auto& info : catalog) {
        names.push_back(info.name);
        EXPECT_FALSE(info.title.empty());
        EXPECT_FALSE(info.constraints.empty());
        EXPECT_EQ(find_schedule(info.name), &info);
    }
    EXPECT_EQ(names, (std::vector<std::string>{"naive", "gpipe", "looped-bfs", "1f1b",
                                               "interleaved-1f1b", "zb-h1", "zb-h2",
                                               "interleaved-zb", "zbv", "dualpipev", "zb-auto"}));
    EXPECT_EQ(find_schedule("nope"), nullptr);
    EXPECT_TRUE(find_schedule("zb-h1")->splits_backward);
    EXPECT_FALSE(find_schedule("1f1b")->splits_backward);
    EXPECT_FALSE(find_schedule("naive")->microbatching);
    EXPECT_TRUE(find_schedule("interleaved-1f1b")->multiple_stages_per_rank);
    EXPECT_FALSE(find_schedule("1f1b")->multiple_stages_per_rank);
    // The flags describe what the generator really emits.
    for (const auto& info : catalog) {
        const Schedule s =
            generate_schedule(info.name, placement_for(info, 2), info.microbatching ? 4 : 1);
        EXPECT_EQ(s.splits_backward(), info.splits_backward) << info.name;
        EXPECT_FALSE(s.has_communication()) << info.name;
    }
}

TEST(ScheduleComms, OneFOneBLiteral) {
    const Schedule s = add_communication(generate_schedule("1f1b", {0, 1}, 2));
    expect_ranks(s, {"0F0 0SEND_F0 0F1 0SEND_F1 0RECV_B0 0B0 0RECV_B1 0B1",
                     "1RECV_F0 1F0 1B0 1SEND_B0 1RECV_F1 1F1 1B1 1SEND_B1"});
    EXPECT_TRUE(check_schedule(s).empty()) << check_schedule(s).format();
}

TEST(ScheduleComms, MiddleStageReceivesAndSendsBothWays) {
    const Schedule s = add_communication(generate_schedule("gpipe", {0, 1, 2}, 1));
    EXPECT_EQ(join(s.ranks[1]), "1RECV_F0 1F0 1SEND_F0 1RECV_B0 1B0 1SEND_B0");
}

TEST(ScheduleComms, NoCommunicationBetweenStagesOnOneRank) {
    const Schedule s = add_communication(generate_schedule("gpipe", {0, 0, 1}, 1));
    expect_ranks(s, {"0F0 1F0 1SEND_F0 1RECV_B0 1B0 0B0", "2RECV_F0 2F0 2B0 2SEND_B0"});
}

TEST(ScheduleComms, SplitBackwardSendsAfterInputGradient) {
    const Schedule s = add_communication(generate_schedule("zb-h1", {0, 1}, 2));
    expect_ranks(s, {"0F0 0SEND_F0 0F1 0SEND_F1 0RECV_B0 0I0 0W0 0RECV_B1 0I1 0W1",
                     "1RECV_F0 1F0 1I0 1SEND_B0 1RECV_F1 1F1 1I1 1SEND_B1 1W0 1W1"});
}

TEST(ScheduleComms, LoweringIsIdempotentAndPlacesEverySend) {
    for (const auto& info : schedule_catalog()) {
        const Schedule compute =
            generate_schedule(info.name, placement_for(info, 3), info.microbatching ? 6 : 1);
        const Schedule lowered = add_communication(compute);
        EXPECT_EQ(add_communication(lowered), lowered) << info.name;
        EXPECT_TRUE(lowered.has_communication());
        std::size_t sends = 0;
        std::size_t recvs = 0;
        for (std::size_t r = 0; r < lowered.ranks.size(); ++r) {
            const auto& actions = lowered.ranks[r];
            for (std::size_t i = 0; i < actions.size(); ++i) {
                const Action& a = actions[i];
                // Right after its compute, or after the overlapped pair
                // that holds it (with the pair's other send between).
                const auto uses = [&](std::size_t k) {
                    const auto at = [&](std::size_t j) {
                        return j < actions.size() && is_compute(actions[j].type) &&
                               actions[j].stage == a.stage && actions[j].microbatch == a.microbatch;
                    };
                    return at(k) || (k < actions.size() && actions[k].overlaps_next && at(k + 1)) ||
                           (k > 0 && actions[k - 1].overlaps_next && at(k - 1));
                };
                if (is_send(a.type)) {
                    ++sends;
                    std::size_t j = i;
                    while (j > 0 && is_send(actions[j - 1].type)) {
                        --j;
                    }
                    ASSERT_GT(j, 0U);
                    EXPECT_TRUE(uses(j - 1)) << to_string(a);
                } else if (is_recv(a.type)) {
                    ++recvs;
                    std::size_t j = i;
                    while (j + 1 < actions.size() && is_recv(actions[j + 1].type)) {
                        ++j;
                    }
                    ASSERT_LT(j + 1, actions.size());
                    EXPECT_TRUE(uses(j + 1)) << to_string(a);
                }
            }
        }
        // Each boundary between stages on two ranks (all of them but the
        // turn of ZB-V's V) is crossed once per micro-batch each way.
        int crossing = 0;
        for (std::size_t st = 1; st < compute.stage_rank.size(); ++st) {
            crossing += compute.stage_rank[st] != compute.stage_rank[st - 1] ? 1 : 0;
        }
        const auto expected = static_cast<std::size_t>(2 * crossing * compute.num_microbatches);
        EXPECT_EQ(sends, expected) << info.name;
        EXPECT_EQ(recvs, expected) << info.name;
        EXPECT_EQ(lowered.action_count(), compute.action_count() + 2 * expected);
        EXPECT_TRUE(check_schedule(lowered).empty()) << check_schedule(lowered).format();
    }
}

TEST(ScheduleKind, EveryGeneratorHasOneKindAndItsNameMapsBack) {
    std::set<ScheduleKind> kinds;
    for (const auto& info : schedule_catalog()) {
        SCOPED_TRACE(info.name);
        EXPECT_EQ(to_string(info.kind), info.name);
        EXPECT_EQ(schedule_kind(info.name), info.kind);
        EXPECT_EQ(&schedule_info(info.kind), &info);
        EXPECT_EQ(find_schedule(info.name), &info);
        kinds.insert(info.kind);
    }
    EXPECT_EQ(kinds.size(), schedule_catalog().size());
    EXPECT_EQ(schedule_kind("csv"), std::nullopt);
    EXPECT_EQ(schedule_kind("1F1B"), std::nullopt);  // names are exact
    EXPECT_EQ(find_schedule("pipedream"), nullptr);
}

TEST(ScheduleKind, GeneratingByKindOrByNameGivesTheSameSchedule) {
    const std::vector<int> one_per_rank = {0, 1, 2, 3};
    for (const auto& info : schedule_catalog()) {
        SCOPED_TRACE(info.name);
        const auto stage_rank = placement_for(info, 2);
        const int m = info.kind == ScheduleKind::naive ? 1 : 4;
        const Schedule by_kind = generate_schedule(info.kind, stage_rank, m);
        EXPECT_EQ(by_kind, generate_schedule(info.name, stage_rank, m));
        EXPECT_EQ(by_kind.name, info.name);
    }
    EXPECT_THROW((void)generate_schedule("pipedream", one_per_rank, 4), ScheduleError);
}

}  // namespace
}  // namespace pipewright
