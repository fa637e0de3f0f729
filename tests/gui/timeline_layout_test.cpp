#include "studio_core/timeline/timeline_layout.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <vector>

namespace pipewright::gui {
namespace {

Timeline dense(int blocks) {
    Timeline t;
    t.devices = {"a", "b"};
    for (int i = 0; i < blocks; ++i) {
        TimelineEvent e;
        e.rank = i % 2;
        e.action = {0, ActionType::forward, i};
        e.start_s = i * 1e-3;
        e.end_s = e.start_s + 0.9e-3;
        t.events.push_back(e);
    }
    return t;
}

TEST(TimelineLayout, HoldsOneBlockPerEvent) {
    const TimelineLayout layout(dense(1000));
    EXPECT_EQ(layout.blockCount(), 1000u);
    EXPECT_EQ(layout.ranks(), 2);
}

TEST(TimelineLayout, VisibleRangeIsCulled) {
    const TimelineLayout layout(dense(20000));
    const auto spans = layout.visible(0, 1.0, 1.1, 1e-9);
    // Rank 0 runs every other block: 2 ms apart, so ~50 in 100 ms.
    EXPECT_GE(spans.size(), 49u);
    EXPECT_LE(spans.size(), 52u);
    for (const auto& s : spans) {
        EXPECT_GE(s.end, 1.0);
        EXPECT_LE(s.start, 1.1);
    }
}

TEST(TimelineLayout, NarrowBlocksAreFolded) {
    const TimelineLayout layout(dense(20000));
    // The whole 20 s on ~1000 pixels: 20 ms per pixel, blocks are ~1 ms.
    const auto spans = layout.visible(0, 0, 20, 3 * 20e-3);
    EXPECT_LT(spans.size(), 1000u);
    int folded = 0;
    for (const auto& s : spans) {
        folded += s.folded;
    }
    EXPECT_EQ(folded, 10000);
}

TEST(TimelineLayout, FindsTheEventUnderTheCursorAndTheBubbles) {
    const Timeline t = dense(10);
    const TimelineLayout layout(t);
    EXPECT_EQ(layout.eventAt(0, 3.5e-3, 0), -1);  // a gap on rank 0
    EXPECT_EQ(layout.eventAt(0, 2.3e-3, 0), 2);
    EXPECT_FALSE(layout.bubbles(0).empty());
}

TEST(TimelineLayout, PairsEachSendWithItsReceive) {
    Timeline t;
    t.devices = {"a", "b"};
    auto add = [&t](int rank, Action action, double start, double end) {
        TimelineEvent e;
        e.rank = rank;
        e.action = action;
        e.start_s = start;
        e.end_s = end;
        t.events.push_back(e);
    };
    // Two forward transfers of micro-batch 0 (a repeat), one backward of 1.
    add(0, {0, ActionType::send_forward, 0}, 1.0, 2.0);
    add(1, {1, ActionType::recv_forward, 0}, 1.5, 2.5);
    add(0, {0, ActionType::send_forward, 0}, 5.0, 6.0);
    add(1, {1, ActionType::recv_forward, 0}, 6.0, 6.0);
    add(1, {1, ActionType::send_backward, 1}, 3.0, 4.0);
    add(0, {0, ActionType::recv_backward, 1}, 3.0, 3.5);
    add(0, {0, ActionType::send_forward, 7}, 8.0, 9.0);  // never received
    const TimelineLayout layout(t);
    const auto& transfers = layout.transfers();
    ASSERT_EQ(transfers.size(), 3u);
    EXPECT_EQ(transfers[0].send_event, 0);
    EXPECT_EQ(transfers[0].recv_event, 1);
    EXPECT_DOUBLE_EQ(transfers[0].end, 2.5);
    EXPECT_EQ(transfers[1].from_rank, 1);  // sorted by start: the backward at 3.0
    EXPECT_EQ(transfers[1].to_rank, 0);
    EXPECT_DOUBLE_EQ(transfers[1].end, 4.0);
    EXPECT_EQ(transfers[2].recv_event, 3);
}

// Pairs of a timeline whose stages and micro-batches are numbered far apart
// (an edited trace): the same pairs as the compact numbering, found by the
// sorted list instead of the dense table.
TEST(TimelineLayout, PairsSparselyNumberedTransfersAlike) {
    const auto pairs = [](int stage_base, int mb_base) {
        Timeline t;
        t.devices = {"a", "b", "c"};
        auto add = [&t](int rank, ActionType type, int stage, int mb, double start) {
            TimelineEvent e;
            e.rank = rank;
            e.action = {stage, type, mb};
            e.start_s = start;
            e.end_s = start + 0.5;
            t.events.push_back(e);
        };
        for (int m = 0; m < 3; ++m) {
            for (int repeat = 0; repeat < 2; ++repeat) {
                const double at = m * 10.0 + repeat * 3;
                add(0, ActionType::send_forward, stage_base, mb_base + m, at);
                add(1, ActionType::recv_forward, stage_base + 1, mb_base + m, at + 0.2);
                add(1, ActionType::send_forward, stage_base + 1, mb_base + m, at + 1);
                add(2, ActionType::recv_forward, stage_base + 2, mb_base + m, at + 1.2);
                add(2, ActionType::send_backward, stage_base + 2, mb_base + m, at + 2);
                add(1, ActionType::recv_backward, stage_base + 1, mb_base + m, at + 2.2);
            }
        }
        std::vector<std::array<int, 4>> out;
        const TimelineLayout layout(t);
        for (const Transfer& x : layout.transfers()) {
            out.push_back({x.send_event, x.recv_event, x.from_rank, x.to_rank});
        }
        return out;
    };
    const auto compact = pairs(0, 0);
    ASSERT_EQ(compact.size(), 18u);
    for (const auto& p : compact) {
        EXPECT_EQ(p[1], p[0] + 1);  // each send's own receive, repeats first with first
    }
    EXPECT_EQ(pairs(5000, 7'000'000), compact);
}

}  // namespace
}  // namespace pipewright::gui

namespace pipewright::gui {
namespace {

TimelineEvent comm(int rank, ActionType type, int stage, int microbatch, double start, double end) {
    TimelineEvent e;
    e.rank = rank;
    e.action = {stage, type, microbatch};
    e.start_s = start;
    e.end_s = end;
    return e;
}

// Issue 36 #8: a measured send from 0.6 to 11 ms under a receive's wait from
// 1 to 7 ms: each gets a sub-row of rank 0's communication row, and the
// tooltip's lookup finds each in its own.
TEST(TimelineLayout, OverlappingTransfersGetSubRowsOfTheirOwn) {
    Timeline t;
    t.devices = {"a", "b"};
    t.events.push_back(comm(0, ActionType::send_forward, 0, 0, 0.6e-3, 11e-3));
    t.events.push_back(comm(0, ActionType::recv_backward, 0, 0, 1e-3, 7e-3));
    t.events.push_back(comm(0, ActionType::send_forward, 0, 1, 12e-3, 13e-3));
    t.events.push_back(comm(1, ActionType::recv_forward, 1, 0, 0.5e-3, 11.5e-3));
    const TimelineLayout layout(t);
    EXPECT_EQ(layout.tracks(0), 1);  // rank 0's compute row
    EXPECT_EQ(layout.tracks(1), 2);  // rank 0's communication row
    EXPECT_EQ(layout.tracks(3), 1);  // rank 1's: one receive, nothing overlaps
    EXPECT_EQ(layout.trackOf(0), 0);
    EXPECT_EQ(layout.trackOf(1), 1);
    EXPECT_EQ(layout.trackOf(2), 0);  // the first sub-row is free again by 12 ms
    // At 5 ms both are under the pointer: the sub-row decides.
    EXPECT_EQ(layout.eventAt(1, 5e-3, 0, 0), 0);
    EXPECT_EQ(layout.eventAt(1, 5e-3, 0, 1), 1);
    // The send's whole length is drawn: found at 10 ms in its sub-row.
    EXPECT_EQ(layout.eventAt(1, 10e-3, 0, 0), 0);
    EXPECT_EQ(layout.eventAt(1, 10e-3, 0, 1), -1);
}

TEST(TimelineLayout, SubRowsStopAtTheMostALaneCanShow) {
    Timeline t;
    t.devices = {"a"};
    for (int i = 0; i < 6; ++i) {  // six transfers all overlapping
        t.events.push_back(comm(0, ActionType::send_forward, 0, i, i * 1e-4, 1.0));
    }
    const TimelineLayout layout(t);
    EXPECT_EQ(layout.tracks(1), kMaxCommTracks);
    for (int i = 0; i < 6; ++i) {
        EXPECT_LT(layout.trackOf(i), kMaxCommTracks);
    }
}

// Arrows are drawn from the first transfer until one starts after the view,
// so every start must be in order: negative ones (a measured clock before
// the iteration's zero), equal ones (kept in timeline order) and starts
// that differ in their last bits.
TEST(TimelineLayout, TransfersAreSortedByStartWithTiesInTimelineOrder) {
    const std::vector<double> starts = {
        3.0, -2.5, 1.0, 1.0, -0.001, 0.0, 1e-300, 7.25, std::nextafter(1.0, 2.0), -1e9};
    Timeline t;
    t.devices = {"a", "b"};
    for (std::size_t i = 0; i < starts.size(); ++i) {
        const int mb = static_cast<int>(i);
        t.events.push_back(comm(0, ActionType::send_forward, 0, mb, starts[i], starts[i] + 1));
        t.events.push_back(comm(1, ActionType::recv_forward, 1, mb, starts[i], starts[i] + 1));
    }
    const TimelineLayout layout(t);
    const auto& transfers = layout.transfers();
    ASSERT_EQ(transfers.size(), starts.size());
    std::vector<int> order;
    for (const Transfer& x : transfers) {
        order.push_back(x.send_event / 2);
    }
    EXPECT_EQ(order, (std::vector<int>{9, 1, 4, 5, 6, 2, 3, 8, 0, 7}));
}

}  // namespace
}  // namespace pipewright::gui
