#include "timeline_layout.h"

#include <gtest/gtest.h>

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
    EXPECT_EQ(layout.block_count(), 1000u);
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
    EXPECT_EQ(layout.event_at(0, 3.5e-3, 0), -1);  // a gap on rank 0
    EXPECT_EQ(layout.event_at(0, 2.3e-3, 0), 2);
    EXPECT_FALSE(layout.bubbles(0).empty());
}

}  // namespace
}  // namespace pipewright::gui
