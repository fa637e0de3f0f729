#pragma once

#include <QRectF>
#include <vector>

namespace pipewright::gui {

// Text on the timeline is drawn only where it fits, so that it never
// overprints (Tracy's rule: draw what fits, leave out the rest). Widths and
// heights are in pixels, measured by the caller's font.

// A lane's name fits when the lane is at least as tall as a line of text.
[[nodiscard]] bool lane_label_fits(double lane_height, double text_height);

// The first of `widths` (label variants, longest first) that fits inside a
// box `box_width` wide with `padding` on each side; -1 when none does.
[[nodiscard]] int fit_label(double box_width, const std::vector<double>& widths,
                            double padding = 2);

// Keeps, in order, each rectangle that overlaps none already kept: callers
// propose labels by priority and draw only the indices returned.
[[nodiscard]] std::vector<int> cull_overlapping(const std::vector<QRectF>& rects);

// True when no two of `rects` overlap (a check for tests and debugging).
[[nodiscard]] bool none_overlap(const std::vector<QRectF>& rects);

}  // namespace pipewright::gui
