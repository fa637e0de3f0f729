#include "studio_core/canvas/canvas_flow.h"

#include <algorithm>
#include <set>

namespace pipewright::gui {

CanvasFlow flow_boxes_at(const std::vector<QSizeF>& sizes, double gap, double row_width) {
    CanvasFlow flow;
    flow.positions.reserve(sizes.size());
    double x = 0;
    double y = 0;
    double row_height = 0;
    double width = 0;
    for (const QSizeF& size : sizes) {
        if (x > 0 && x + size.width() > row_width) {
            y += row_height + gap;
            x = 0;
            row_height = 0;
        }
        flow.positions.emplace_back(x, y);
        width = std::max(width, x + size.width());
        row_height = std::max(row_height, size.height());
        x += size.width() + gap;
    }
    flow.size = QSizeF(width, sizes.empty() ? 0.0 : y + row_height);
    return flow;
}

CanvasFlow flow_boxes(const std::vector<QSizeF>& sizes, double gap, double aspect) {
    if (sizes.empty()) {
        return {};
    }
    // The row widths worth trying: the end of every prefix of boxes laid in
    // one row. Each gives a different wrapping; any width in between wraps
    // like the prefix below it.
    double widest = 0;
    for (const QSizeF& s : sizes) {
        widest = std::max(widest, s.width());
    }
    std::set<double> widths{widest};
    double x = 0;
    for (const QSizeF& s : sizes) {
        x += s.width();
        if (x >= widest) {
            widths.insert(x);
        }
        x += gap;
    }
    // The wrapping that a view of this shape shows largest: fitting W x H
    // into aspect x 1 scales by min(aspect / W, 1 / H).
    const double shape = aspect > 0 ? aspect : 1.0;
    CanvasFlow best;
    double best_scale = -1;
    for (const double w : widths) {
        CanvasFlow flow = flow_boxes_at(sizes, gap, w);
        const double scale = std::min(shape / std::max(flow.size.width(), 1.0),
                                      1.0 / std::max(flow.size.height(), 1.0));
        if (scale > best_scale * (1 + 1e-9)) {
            best_scale = scale;
            best = std::move(flow);
        }
    }
    return best;
}

}  // namespace pipewright::gui
