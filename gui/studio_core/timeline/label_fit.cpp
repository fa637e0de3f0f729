#include "studio_core/timeline/label_fit.h"

#include <algorithm>

namespace pipewright::gui {

namespace {

// Touching edges are not an overlap: adjacent lanes share one.
bool overlap(const QRectF& a, const QRectF& b) {
    return a.left() < b.right() && b.left() < a.right() && a.top() < b.bottom() &&
           b.top() < a.bottom();
}

}  // namespace

bool lane_label_fits(double lane_height, double text_height) {
    return lane_height >= text_height;
}

int fit_label(double box_width, const std::vector<double>& widths, double padding) {
    for (std::size_t i = 0; i < widths.size(); ++i) {
        if (widths[i] + 2 * padding <= box_width) {
            return static_cast<int>(i);
        }
    }
    return -1;
}

std::vector<int> cull_overlapping(const std::vector<QRectF>& rects) {
    std::vector<int> kept;
    for (std::size_t i = 0; i < rects.size(); ++i) {
        const bool clear = std::none_of(kept.begin(), kept.end(), [&](int k) {
            return overlap(rects[static_cast<std::size_t>(k)], rects[i]);
        });
        if (clear) {
            kept.push_back(static_cast<int>(i));
        }
    }
    return kept;
}

bool none_overlap(const std::vector<QRectF>& rects) {
    // Sweep by left edge: only rectangles that started before this one ends
    // can overlap it.
    std::vector<QRectF> sorted = rects;
    std::sort(sorted.begin(), sorted.end(),
              [](const QRectF& a, const QRectF& b) { return a.left() < b.left(); });
    for (std::size_t i = 0; i < sorted.size(); ++i) {
        for (std::size_t j = i + 1; j < sorted.size() && sorted[j].left() < sorted[i].right();
             ++j) {
            if (overlap(sorted[i], sorted[j])) {
                return false;
            }
        }
    }
    return true;
}

}  // namespace pipewright::gui
