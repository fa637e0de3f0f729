#include "studio_core/canvas/canvas_flow.h"

#include <gtest/gtest.h>

#include "studio_core/canvas/canvas_detail.h"

namespace pipewright::gui {
namespace {

TEST(CanvasFlow, BoxesWrapAtTheRowWidthAndRowsAreAsTallAsTheirTallestBox) {
    const CanvasFlow flow =
        flow_boxes_at({QSizeF(100, 50), QSizeF(100, 80), QSizeF(100, 50)}, 10, 250);
    ASSERT_EQ(flow.positions.size(), 3u);
    EXPECT_EQ(flow.positions[0], QPointF(0, 0));
    EXPECT_EQ(flow.positions[1], QPointF(110, 0));
    EXPECT_EQ(flow.positions[2], QPointF(0, 90));
    EXPECT_EQ(flow.size, QSizeF(210, 140));
}

TEST(CanvasFlow, ABoxWiderThanTheRowGetsARowOfItsOwn) {
    const CanvasFlow flow = flow_boxes_at({QSizeF(50, 10), QSizeF(500, 10)}, 10, 100);
    EXPECT_EQ(flow.positions[1], QPointF(0, 20));
    EXPECT_EQ(flow.size, QSizeF(500, 30));
}

TEST(CanvasFlow, ManyEqualBoxesMakeAGridOfTheViewsShape) {
    // 128 collapsed nodes in a view 1.5 times as wide as tall.
    const std::vector<QSizeF> boxes(128, QSizeF(150, 100));
    const CanvasFlow flow = flow_boxes(boxes, 10, 1.5);
    const double shape = flow.size.width() / flow.size.height();
    EXPECT_GT(shape, 1.5 / 1.4);
    EXPECT_LT(shape, 1.5 * 1.4);
    // Wider view, wider grid.
    const CanvasFlow wide = flow_boxes(boxes, 10, 4);
    EXPECT_GT(wide.size.width(), flow.size.width());
}

TEST(CanvasFlow, OneBoxOrNoneIsLaidAtTheOrigin) {
    EXPECT_EQ(flow_boxes({QSizeF(30, 20)}, 10, 1).positions.front(), QPointF(0, 0));
    EXPECT_EQ(flow_boxes({}, 10, 1).size, QSizeF());
}

TEST(CanvasDetail, TextBelowEightPixelsOnScreenIsNotDrawn) {
    EXPECT_TRUE(text_readable(10, 1));
    EXPECT_TRUE(text_readable(10, 0.8));
    EXPECT_FALSE(text_readable(10, 0.79));
    EXPECT_DOUBLE_EQ(readable_scale(10), 0.8);
    EXPECT_FALSE(opens_collapsed(32));
    EXPECT_TRUE(opens_collapsed(33));
}

}  // namespace
}  // namespace pipewright::gui
