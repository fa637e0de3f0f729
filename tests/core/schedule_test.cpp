#include "pipewright/core/schedule.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace pipewright {
namespace {

constexpr ActionType kAllTypes[] = {
    ActionType::forward,         ActionType::backward,      ActionType::backward_input,
    ActionType::backward_weight, ActionType::send_forward,  ActionType::recv_forward,
    ActionType::send_backward,   ActionType::recv_backward,
};

TEST(ScheduleAction, TypeNamesFollowPyTorch) {
    EXPECT_EQ(to_string(ActionType::forward), "F");
    EXPECT_EQ(to_string(ActionType::backward), "B");
    EXPECT_EQ(to_string(ActionType::backward_input), "I");
    EXPECT_EQ(to_string(ActionType::backward_weight), "W");
    EXPECT_EQ(to_string(ActionType::send_forward), "SEND_F");
    EXPECT_EQ(to_string(ActionType::recv_forward), "RECV_F");
    EXPECT_EQ(to_string(ActionType::send_backward), "SEND_B");
    EXPECT_EQ(to_string(ActionType::recv_backward), "RECV_B");
}

TEST(ScheduleAction, FormatsStageTypeMicrobatch) {
    EXPECT_EQ(to_string(Action{2, ActionType::forward, 0}), "2F0");
    EXPECT_EQ(to_string(Action{1, ActionType::send_backward, 3}), "1SEND_B3");
    EXPECT_EQ(to_string(Action{12, ActionType::backward_weight, 345}), "12W345");
}

TEST(ScheduleAction, ParseFormatRoundTripForEveryType) {
    for (const ActionType t : kAllTypes) {
        for (const int stage : {0, 1, 7, 127}) {
            for (const int mb : {0, 3, 10, 4095}) {
                const Action a{stage, t, mb};
                const auto parsed = parse_action(to_string(a));
                ASSERT_TRUE(parsed.has_value()) << to_string(a);
                EXPECT_EQ(*parsed, a) << to_string(a);
            }
        }
    }
}

TEST(ScheduleAction, TheOtherEndOfATransfer) {
    const auto other = [](const char* text) {
        return to_string(matching_transfer(*parse_action(text)));
    };
    EXPECT_EQ(other("2SEND_F5"), "3RECV_F5");
    EXPECT_EQ(other("3RECV_F5"), "2SEND_F5");
    EXPECT_EQ(other("2SEND_B5"), "1RECV_B5");
    EXPECT_EQ(other("1RECV_B5"), "2SEND_B5");
    EXPECT_EQ(other("2F5"), "2F5");
    EXPECT_EQ(peer_stage(*parse_action("0SEND_F0")), 1);
    EXPECT_EQ(peer_stage(*parse_action("0RECV_B0")), 1);
    // Every transfer is its own partner's partner.
    for (const char* text : {"4SEND_F1", "4RECV_F1", "4SEND_B1", "4RECV_B1"}) {
        const Action a = *parse_action(text);
        EXPECT_EQ(matching_transfer(matching_transfer(a)), a) << text;
    }
}

TEST(ScheduleAction, ParsesPyTorchStrings) {
    EXPECT_EQ(parse_action("2F0"), (Action{2, ActionType::forward, 0}));
    EXPECT_EQ(parse_action("1SEND_B3"), (Action{1, ActionType::send_backward, 3}));
    EXPECT_EQ(parse_action("0RECV_F12"), (Action{0, ActionType::recv_forward, 12}));
    EXPECT_EQ(parse_action("3I1"), (Action{3, ActionType::backward_input, 1}));
    EXPECT_EQ(parse_action("  4W2\t"), (Action{4, ActionType::backward_weight, 2}));
    EXPECT_EQ(parse_action("10B20\r"), (Action{10, ActionType::backward, 20}));
}

TEST(ScheduleAction, CollectivesHaveNoMicroBatchAsInPyTorch) {
    EXPECT_EQ(parse_action("2REDUCE_GRAD"), (Action{2, ActionType::reduce_grad, 0}));
    EXPECT_EQ(parse_action("0UNSHARD"), (Action{0, ActionType::unshard, 0}));
    EXPECT_EQ(parse_action("13RESHARD"), (Action{13, ActionType::reshard, 0}));
    for (const char* text : {"2REDUCE_GRAD", "0UNSHARD", "13RESHARD"}) {
        EXPECT_EQ(to_string(*parse_action(text)), text);
    }
    EXPECT_TRUE(is_collective(ActionType::reduce_grad));
    EXPECT_FALSE(is_collective(ActionType::send_forward));
    EXPECT_FALSE(is_compute(ActionType::unshard));
}

TEST(ScheduleAction, RejectsMalformedStrings) {
    for (const char* bad : {"",
                            "   ",
                            "F0",
                            "2F",
                            "2X0",
                            "2f0",
                            "2UNSHARD0",
                            "UNSHARD",
                            "2RESHARD1",
                            "2F0x",
                            "x2F0",
                            "-1F0",
                            "2F-1",
                            "2 F0",
                            "2F 0",
                            "2SEND0",
                            "2SEND_X0",
                            "2SEND_F",
                            "2FF0",
                            "2F0,1B0",
                            "99999999999F0",
                            "0F99999999999",
                            "2REDUCE_GRAD0"}) {
        EXPECT_FALSE(parse_action(bad).has_value()) << '"' << bad << '"';
    }
}

Schedule two_rank_schedule() {
    Schedule s;
    s.name = "test";
    s.num_stages = 2;
    s.num_microbatches = 1;
    s.stage_rank = {0, 1};
    s.ranks = {{{0, ActionType::forward, 0}, {0, ActionType::backward, 0}},
               {{1, ActionType::forward, 0}, {1, ActionType::backward, 0}}};
    return s;
}

TEST(ScheduleProperties, CountsAndKinds) {
    Schedule s = two_rank_schedule();
    EXPECT_EQ(s.num_ranks(), 2);
    EXPECT_EQ(s.action_count(), 4U);
    EXPECT_FALSE(s.has_communication());
    EXPECT_FALSE(s.splits_backward());

    s.ranks[0].push_back({0, ActionType::recv_backward, 0});
    EXPECT_TRUE(s.has_communication());
    EXPECT_EQ(s.action_count(), 5U);

    Schedule split = two_rank_schedule();
    split.ranks[1][1] = {1, ActionType::backward_weight, 0};
    EXPECT_TRUE(split.splits_backward());
    EXPECT_FALSE(split.has_communication());

    Schedule input_only = two_rank_schedule();
    input_only.ranks[0][1] = {0, ActionType::backward_input, 0};
    EXPECT_TRUE(input_only.splits_backward());
}

std::vector<Action> deps(const Action& a, const Schedule& s) {
    const Dependencies d = dependencies_of(a, s);
    EXPECT_GE(d.count, 0);
    EXPECT_LE(d.count, 2);
    return {d.items.begin(), d.items.begin() + d.count};
}

// Stages 0 and 1 share rank 0, stages 2 and 3 share rank 1.
Schedule four_stages_two_ranks(bool split) {
    Schedule s;
    s.num_stages = 4;
    s.num_microbatches = 2;
    s.stage_rank = {0, 0, 1, 1};
    s.ranks.resize(2);
    const ActionType bwd = split ? ActionType::backward_input : ActionType::backward;
    for (int st = 0; st < 4; ++st) {
        s.ranks[st < 2 ? 0U : 1U].push_back({st, bwd, 0});
    }
    return s;
}

TEST(ScheduleDependencies, Forward) {
    const Schedule s = four_stages_two_ranks(false);
    using T = ActionType;
    EXPECT_TRUE(deps({0, T::forward, 1}, s).empty());
    EXPECT_EQ(deps({1, T::forward, 1}, s), (std::vector<Action>{{0, T::forward, 1}}));
    EXPECT_EQ(deps({2, T::forward, 1}, s), (std::vector<Action>{{2, T::recv_forward, 1}}));
    EXPECT_EQ(deps({2, T::recv_forward, 1}, s), (std::vector<Action>{{1, T::send_forward, 1}}));
    EXPECT_EQ(deps({1, T::send_forward, 1}, s), (std::vector<Action>{{1, T::forward, 1}}));
}

TEST(ScheduleDependencies, FullBackward) {
    const Schedule s = four_stages_two_ranks(false);
    using T = ActionType;
    EXPECT_EQ(deps({3, T::backward, 0}, s), (std::vector<Action>{{3, T::forward, 0}}));
    EXPECT_EQ(deps({2, T::backward, 0}, s),
              (std::vector<Action>{{2, T::forward, 0}, {3, T::backward, 0}}));
    EXPECT_EQ(deps({1, T::backward, 0}, s),
              (std::vector<Action>{{1, T::forward, 0}, {1, T::recv_backward, 0}}));
    EXPECT_EQ(deps({1, T::recv_backward, 0}, s), (std::vector<Action>{{2, T::send_backward, 0}}));
    EXPECT_EQ(deps({2, T::send_backward, 0}, s), (std::vector<Action>{{2, T::backward, 0}}));
}

TEST(ScheduleDependencies, SplitBackward) {
    const Schedule s = four_stages_two_ranks(true);
    using T = ActionType;
    EXPECT_EQ(deps({0, T::backward_input, 1}, s),
              (std::vector<Action>{{0, T::forward, 1}, {1, T::backward_input, 1}}));
    EXPECT_EQ(deps({1, T::backward_input, 1}, s),
              (std::vector<Action>{{1, T::forward, 1}, {1, T::recv_backward, 1}}));
    EXPECT_EQ(deps({2, T::send_backward, 1}, s), (std::vector<Action>{{2, T::backward_input, 1}}));
    EXPECT_EQ(deps({2, T::backward_weight, 1}, s),
              (std::vector<Action>{{2, T::backward_input, 1}}));
}

}  // namespace
}  // namespace pipewright
