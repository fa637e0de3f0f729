#pragma once

#include <QPointF>
#include <QSizeF>
#include <vector>

namespace pipewright::gui {

// Where the cluster canvas puts its node boxes: left to right in topology
// order, wrapping into rows, with the row width chosen so that the whole
// cluster has about the shape of the view. A cluster of 128 collapsed nodes
// then fills the canvas as a grid instead of a column 128 boxes tall, which
// at fit-to-view would be too small to see anything.
struct CanvasFlow {
    std::vector<QPointF> positions;  // top-left corner of each box
    QSizeF size;                     // of everything, from (0, 0)
};

// `aspect` is the view's width over its height; `gap` goes between boxes.
// Every box is at least as wide as the widest one, so the widest box alone
// sets the least row width.
[[nodiscard]] CanvasFlow flow_boxes(const std::vector<QSizeF>& sizes, double gap, double aspect);

// The boxes wrapped at `row_width` (a box wider than that gets a row of its
// own); each row is as tall as its tallest box.
[[nodiscard]] CanvasFlow flow_boxes_at(const std::vector<QSizeF>& sizes, double gap,
                                       double row_width);

}  // namespace pipewright::gui
