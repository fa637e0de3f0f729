#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <iterator>

#include "pipewright/core/schedule_csv.h"
#include "sim_test_support.h"

namespace pipewright {
namespace {

using testing::equal_cost;
using testing::make_pipeline;

const TimelineEvent& find_event(const Timeline& t, const std::string& action) {
    auto it = std::find_if(t.events.begin(), t.events.end(),
                           [&](const TimelineEvent& e) { return to_string(e.action) == action; });
    if (it == t.events.end()) {
        throw std::runtime_error("no event " + action);
    }
    return *it;
}

// The SimulationError that simulating two-rank `s` (unit costs) ends in;
// empty when it runs.
std::string simulation_error_of(const Schedule& s) {
    SimulationInput input;
    input.schedule = &s;
    input.stages.assign(2, equal_cost(1, 1, 0));
    input.rank_devices = {"a", "b"};
    try {
        (void)simulate_schedule(input);
    } catch (const SimulationError& e) {
        return e.what();
    }
    return {};
}

TEST(EventSimulator, EveryActionOfTheScheduleBecomesOneEvent) {
    auto p = make_pipeline("1f1b", 4, 4, 8, equal_cost(1, 2, 0));
    auto out = simulate_schedule(p.input);
    EXPECT_EQ(out.timeline.events.size(), p.schedule.action_count());
    EXPECT_EQ(out.timeline.num_ranks(), 4);
    EXPECT_EQ(out.timeline.source, "simulated");
    EXPECT_EQ(out.timeline.schedule, "1f1b");
}

TEST(EventSimulator, ComputeOnOneRankNeverOverlaps) {
    LinkSpec link{10, 5};
    auto p = make_pipeline("interleaved-1f1b", 8, 4, 8, equal_cost(1e-3, 1e-3, 1e-3), &link);
    auto out = simulate_schedule(p.input);
    std::vector<std::vector<TimelineEvent>> per_rank(4);
    for (const auto& e : out.timeline.events) {
        if (is_compute(e.action.type)) {
            per_rank[static_cast<std::size_t>(e.rank)].push_back(e);
        }
    }
    for (std::size_t r = 0; r < per_rank.size(); ++r) {
        const auto& events = per_rank[r];
        // Every compute action of the rank's list is there to check (F and B
        // of 2 stages × 8 micro-batches).
        const auto& actions = p.schedule.ranks[r];
        const auto computes = std::count_if(actions.begin(), actions.end(),
                                            [](const Action& a) { return is_compute(a.type); });
        ASSERT_EQ(computes, 32) << "rank " << r;
        ASSERT_EQ(events.size(), static_cast<std::size_t>(computes)) << "rank " << r;
        for (std::size_t i = 1; i < events.size(); ++i) {
            EXPECT_GE(events[i].start_s, events[i - 1].end_s - 1e-15);
        }
    }
}

TEST(EventSimulator, ForwardWaitsForTheTransferOfItsInput) {
    LinkSpec link{1.0, 50.0};  // 1 GB/s, 50 µs
    StageCost cost = equal_cost(1e-3, 2e-3, 0);
    cost.output_bytes = 2e6;  // 2 ms on the wire
    auto p = make_pipeline("gpipe", 2, 2, 2, cost, &link);
    auto t = simulate_schedule(p.input).timeline;
    const auto& send = find_event(t, "0SEND_F0");
    EXPECT_DOUBLE_EQ(send.start_s, 1e-3);
    EXPECT_NEAR(send.end_s, 1e-3 + 2e-3 + 50e-6, 1e-12);
    EXPECT_EQ(send.peer_rank, 1);
    EXPECT_DOUBLE_EQ(send.bytes, 2e6);
    const auto& recv = find_event(t, "1RECV_F0");
    EXPECT_NEAR(recv.end_s, send.end_s, 1e-12);
    EXPECT_NEAR(find_event(t, "1F0").start_s, send.end_s, 1e-12);
}

TEST(EventSimulator, SendsDoNotBlockTheSendersCompute) {
    LinkSpec slow{0.001, 0};  // 1 MB/s: a transfer takes far longer than compute
    auto p = make_pipeline("gpipe", 2, 2, 3, equal_cost(1e-3, 1e-3, 0), &slow);
    auto t = simulate_schedule(p.input).timeline;
    // Rank 0 runs its three forwards back to back although each send is slow.
    EXPECT_NEAR(find_event(t, "0F1").start_s, 1e-3, 1e-12);
    EXPECT_NEAR(find_event(t, "0F2").start_s, 2e-3, 1e-12);
}

// CPU workers of one machine: Gloo moves the bytes in the sending thread,
// so the sender's next action waits for its send.
TEST(EventSimulator, ASenderThatCopiesTheBytesItselfWaitsForItsSend) {
    LinkSpec link{1.0, 50.0};  // 1 GB/s, 50 µs: 1 ms + 50 µs for the 1 MB of equal_cost
    auto p = make_pipeline("gpipe", 2, 2, 3, equal_cost(1e-3, 1e-3, 0), &link);
    for (SimLink& l : p.input.links) {
        l.sender_copies = true;
    }
    auto t = simulate_schedule(p.input).timeline;
    const auto& send0 = find_event(t, "0SEND_F0");
    EXPECT_NEAR(send0.end_s, 1e-3 + 1e-3 + 50e-6, 1e-12);
    EXPECT_NEAR(find_event(t, "0F1").start_s, send0.end_s, 1e-12);
    EXPECT_NEAR(find_event(t, "0F2").start_s, find_event(t, "0SEND_F1").end_s, 1e-12);
    // Rank 1 waits for each of its backward sends in the same way: every
    // action after one starts once it has ended.
    std::vector<TimelineEvent> rank1;
    std::copy_if(t.events.begin(), t.events.end(), std::back_inserter(rank1),
                 [](const TimelineEvent& e) { return e.rank == 1; });
    std::sort(rank1.begin(), rank1.end(),
              [](const auto& a, const auto& b) { return a.start_s < b.start_s; });
    int sends = 0;
    for (std::size_t i = 0; i + 1 < rank1.size(); ++i) {
        if (rank1[i].action.type == ActionType::send_backward) {
            ++sends;
            EXPECT_GE(rank1[i + 1].start_s, rank1[i].end_s - 1e-12)
                << to_string(rank1[i + 1].action);
        }
    }
    EXPECT_EQ(sends, 2);  // the last one ends the rank's list
}

// CPU workers' Gloo: taking a message that came in while the rank computed
// costs the rank its own time (posting the next receive, handing over the
// tensor); a receive that waits for its message pays it while it waits.
TEST(EventSimulator, AReceiveWhoseMessageCameInCostsTheLinksReceiveTime) {
    LinkSpec link{1000.0, 0};  // the 1 MB of equal_cost in 1 µs
    auto p = make_pipeline("gpipe", 2, 2, 3, equal_cost(1e-3, 1e-3, 0), &link);
    p.input.stages.at(1).forward_s = 2e-3;  // rank 1 is the slower: its inputs wait for it
    for (SimLink& l : p.input.links) {
        l.receive_s = 20e-6;
    }
    auto t = simulate_schedule(p.input).timeline;
    // Rank 1 waits for its first input: it has it when the transfer ends.
    const auto& first = find_event(t, "1RECV_F0");
    EXPECT_NEAR(first.end_s, find_event(t, "0SEND_F0").end_s, 1e-12);
    // The second came while it computed F0: taking it costs 20 µs.
    const auto& second = find_event(t, "1RECV_F1");
    ASSERT_GT(second.start_s, find_event(t, "0SEND_F1").end_s);
    EXPECT_NEAR(second.end_s - second.start_s, 20e-6, 1e-12);
    EXPECT_NEAR(find_event(t, "1F1").start_s, second.end_s, 1e-12);
    // Without a receive time the same receive takes none.
    for (SimLink& l : p.input.links) {
        l.receive_s = 0;
    }
    const auto without = simulate_schedule(p.input).timeline;
    const auto& instant = find_event(without, "1RECV_F1");
    EXPECT_DOUBLE_EQ(instant.end_s, instant.start_s);
}

TEST(EventSimulator, TransfersSharingALinkGoOneAfterAnother) {
    LinkSpec link{1.0, 0};  // 1 GB/s
    StageCost cost = equal_cost(1e-6, 1e-6, 0);
    cost.output_bytes = 1e6;  // 1 ms each
    auto p = make_pipeline("gpipe", 2, 2, 4, cost, &link);
    auto out = simulate_schedule(p.input);
    // Forward sends leave every µs but the link carries one at a time.
    for (int m = 1; m < 4; ++m) {
        const auto& prev = find_event(out.timeline, "0SEND_F" + std::to_string(m - 1));
        const auto& next = find_event(out.timeline, "0SEND_F" + std::to_string(m));
        EXPECT_NEAR(next.start_s, prev.end_s, 1e-12) << m;
    }
    const int link_0_to_1 = p.input.link_index.find(0, 1);
    const auto& usage = out.links[static_cast<std::size_t>(link_0_to_1)];
    EXPECT_EQ(usage.transfers, 4);
    EXPECT_DOUBLE_EQ(usage.bytes, 4e6);
    EXPECT_NEAR(usage.busy_s, 4e-3, 1e-12);
}

TEST(EventSimulator, ALinkSharedByTwoRanksServesTransfersInTimeOrder) {
    // Ranks 0 and 1 both send forward over one link (as the devices of a
    // node share its network interface). Rank 0 computes slowly (1 ms a
    // forward), rank 1 quickly (0.1 ms); each transfer holds the link 0.5 ms.
    LinkSpec link{2.0, 0};  // 2 GB/s: 1 MB in 0.5 ms
    auto p = make_pipeline("gpipe", 3, 3, 3, equal_cost(1e-3, 1e-3, 0));
    p.input.stages[1].forward_s = 1e-4;
    p.input.links.push_back({"shared", link});
    p.input.link_index.set(0, 1, 0);
    p.input.link_index.set(1, 2, 0);
    const Timeline t = simulate_schedule(p.input).timeline;
    // 0SEND_F0 holds the link 1.0–1.5 ms; 1F0 ends at 1.6 ms, so 1SEND_F0
    // gets the link at once, before 0SEND_F1 asks for it at 2.0 ms.
    EXPECT_NEAR(find_event(t, "0SEND_F0").start_s, 1.0e-3, 1e-12);
    EXPECT_NEAR(find_event(t, "1SEND_F0").start_s, 1.6e-3, 1e-12);
    EXPECT_NEAR(find_event(t, "0SEND_F1").start_s, 2.1e-3, 1e-12);  // waits for 1SEND_F0
    EXPECT_NEAR(find_event(t, "1SEND_F1").start_s, 2.7e-3, 1e-12);  // 1F1 ran 2.6–2.7 ms
    // Every transfer on the link, one after another in the order they started.
    std::vector<TimelineEvent> on_link = t.events;
    std::erase_if(on_link,
                  [](const TimelineEvent& e) { return e.action.type != ActionType::send_forward; });
    std::sort(on_link.begin(), on_link.end(),
              [](const TimelineEvent& a, const TimelineEvent& b) { return a.start_s < b.start_s; });
    ASSERT_EQ(on_link.size(), 6u);
    for (std::size_t i = 1; i < on_link.size(); ++i) {
        EXPECT_GE(on_link[i].start_s, on_link[i - 1].end_s - 1e-12) << i;
    }
}

TEST(EventSimulator, AnActionOnARankThatDoesNotOwnItsStageIsRefused) {
    // Rank 1 starts with stage 0's forward, which rank 0 owns.
    Schedule s = schedule_from_csv(
        "0F0,0SEND_F0,0RECV_B0,0B0\n"
        "1RECV_F0,1F0,1B0,1SEND_B0\n");
    s.ranks[1][0] = Action{0, ActionType::forward, 0};
    const std::string what = simulation_error_of(s);
    EXPECT_NE(what.find("rank 1 runs 0F0, which is not an action of a stage it owns"),
              std::string::npos)
        << what;
}

TEST(EventSimulator, ReceiveRecordsHowLongTheRankWaited) {
    LinkSpec link{1.0, 0};
    StageCost cost = equal_cost(1e-3, 1e-3, 0);
    cost.output_bytes = 5e5;  // 0.5 ms
    auto p = make_pipeline("gpipe", 2, 2, 1, cost, &link);
    auto t = simulate_schedule(p.input).timeline;
    const auto& recv = find_event(t, "1RECV_F0");
    EXPECT_DOUBLE_EQ(recv.start_s, 0.0);  // rank 1 had nothing to do before
    EXPECT_NEAR(recv.end_s, 1.5e-3, 1e-12);
}

TEST(EventSimulator, DeadlockedScheduleNamesTheStalledRanks) {
    // Rank 0 first waits for a gradient that needs its own forward; rank 1
    // waits for that forward.
    Schedule s = schedule_from_csv(
        "0RECV_B0,0F0,0SEND_F0,0B0\n"
        "1RECV_F0,1F0,1B0,1SEND_B0\n");
    const std::string what = simulation_error_of(s);
    EXPECT_NE(what.find("rank 0 stalls at action 0 (0RECV_B0)"), std::string::npos) << what;
    EXPECT_NE(what.find("rank 1 stalls at action 0 (1RECV_F0)"), std::string::npos) << what;
}

TEST(EventSimulator, LargeScheduleIsExactAndScalesLinearly) {
    // (64, 1024) lowered 1F1B: ~400k actions, timed exactly.
    auto p = make_pipeline("1f1b", 64, 64, 1024, equal_cost(1e-3, 2e-3, 0));
    auto out = simulate_schedule(p.input);
    EXPECT_EQ(out.timeline.events.size(), p.schedule.action_count());
    auto metrics = timeline_metrics(out.timeline);
    EXPECT_NEAR(metrics.iteration_time_s, (1024 + 63) * 3e-3, 1e-6);
    // Four times the actions must take about four times as long, not
    // sixteen (a quadratic pass). A ratio of the fastest of five rounds,
    // taken in rotation in one process, in this thread's CPU time, so that
    // the time other processes of a loaded machine take from it does not
    // count: the bound of 10 leaves room for caches and page faults and
    // still fails a quadratic pass.
    auto quarter = make_pipeline("1f1b", 64, 64, 256, equal_cost(1e-3, 2e-3, 0));
    const auto thread_seconds = [] {
        timespec t{};
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
        return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
    };
    const auto seconds_of = [&](const testing::Pipeline& pipeline) {
        const double start = thread_seconds();
        (void)simulate_schedule(pipeline.input);
        return thread_seconds() - start;
    };
    double small = 1e9;
    double large = 1e9;
    for (int round = 0; round < 5; ++round) {
        small = std::min(small, seconds_of(quarter));
        large = std::min(large, seconds_of(p));
    }
    EXPECT_LT(large / small, 10.0) << "256 micro-batches " << small << " s, 1024 " << large << " s";
}

}  // namespace
}  // namespace pipewright
