#include "studio_core/timeline/lane_density.h"

#include <algorithm>
#include <cmath>

namespace pipewright::gui {

BusyProfile::BusyProfile(const TimelineLayout& layout, const std::vector<int>& ranks)
    : devices_(static_cast<int>(ranks.size())) {
    // +1 where a block starts, -1 where it ends; a rank's compute blocks do
    // not overlap, so the count is how many devices compute.
    std::vector<std::pair<double, int>> steps;
    for (int rank : ranks) {
        for (const Block& b : layout.row(2 * rank)) {
            if (b.end > b.start) {
                steps.emplace_back(b.start, 1);
                steps.emplace_back(b.end, -1);
            }
        }
    }
    std::sort(steps.begin(), steps.end());
    int count = 0;
    double area = 0;
    for (const auto& [t, delta] : steps) {
        if (!times_.empty() && times_.back() == t) {
            count += delta;
            counts_.back() = count;
            continue;
        }
        if (!times_.empty()) {
            area += counts_.back() * (t - times_.back());
        }
        count += delta;
        times_.push_back(t);
        counts_.push_back(count);
        integral_.push_back(area);
    }
}

double BusyProfile::integralAt(double t) const {
    // The last step at or before t.
    const auto it = std::upper_bound(times_.begin(), times_.end(), t);
    if (it == times_.begin()) {
        return 0;
    }
    const auto i = static_cast<std::size_t>(it - times_.begin() - 1);
    return integral_[i] + counts_[i] * (t - times_[i]);
}

double BusyProfile::busyBetween(double a, double b) const {
    return b > a ? integralAt(b) - integralAt(a) : 0;
}

std::vector<float> BusyProfile::fractions(double t0, double t1, int columns) const {
    std::vector<float> out(static_cast<std::size_t>(std::max(columns, 0)), 0.0F);
    if (columns <= 0 || devices_ == 0 || t1 <= t0 || times_.empty()) {
        return out;
    }
    const double width = (t1 - t0) / columns;
    // Walk the column edges and the steps together: the integral at each edge.
    auto it = std::upper_bound(times_.begin(), times_.end(), t0);
    std::size_t i = it == times_.begin() ? 0 : static_cast<std::size_t>(it - times_.begin() - 1);
    auto integral = [&](double t) {
        while (i + 1 < times_.size() && times_[i + 1] <= t) {
            ++i;
        }
        if (t < times_[i]) {
            return 0.0;
        }
        return integral_[i] + counts_[i] * (t - times_[i]);
    };
    double left = integral(t0);
    for (int c = 0; c < columns; ++c) {
        const double right = integral(t0 + (c + 1) * width);
        out[static_cast<std::size_t>(c)] =
            static_cast<float>(std::clamp((right - left) / (width * devices_), 0.0, 1.0));
        left = right;
    }
    return out;
}

std::vector<float> busy_fractions(const TimelineLayout& layout, const std::vector<int>& ranks,
                                  double t0, double t1, int columns) {
    std::vector<float> out(static_cast<std::size_t>(std::max(columns, 0)), 0.0F);
    if (columns <= 0 || ranks.empty() || t1 <= t0) {
        return out;
    }
    const double width = (t1 - t0) / columns;
    std::vector<double> busy(out.size(), 0.0);  // device-seconds per column
    for (int rank : ranks) {
        const int row = 2 * rank;
        const auto& blocks = layout.row(row);
        for (std::size_t i = layout.firstVisible(row, t0); i < blocks.size(); ++i) {
            const Block& b = blocks[i];
            if (b.start >= t1) {
                break;
            }
            const double from = std::max(b.start, t0);
            const double to = std::min(b.end, t1);
            if (to <= from) {
                continue;
            }
            const int c0 = std::clamp(static_cast<int>((from - t0) / width), 0, columns - 1);
            const int c1 = std::clamp(static_cast<int>((to - t0) / width), 0, columns - 1);
            for (int c = c0; c <= c1; ++c) {
                const double left = t0 + c * width;
                const double share = std::min(to, left + width) - std::max(from, left);
                if (share > 0) {
                    busy[static_cast<std::size_t>(c)] += share;
                }
            }
        }
    }
    const double capacity = width * static_cast<double>(ranks.size());
    for (std::size_t c = 0; c < out.size(); ++c) {
        out[c] = static_cast<float>(std::clamp(busy[c] / capacity, 0.0, 1.0));
    }
    return out;
}

void paint_row(const TimelineLayout& layout, int row, double t0, double t1, int columns,
               double min_pixels, RowPaint* out) {
    out->boxes.clear();
    out->columns.clear();
    if (columns <= 0 || t1 <= t0) {
        return;
    }
    const double per_pixel = (t1 - t0) / columns;
    const double min_width = min_pixels * per_pixel;
    const auto& blocks = layout.row(row);
    for (std::size_t i = layout.firstVisible(row, t0); i < blocks.size(); ++i) {
        const Block& b = blocks[i];
        if (b.start > t1) {
            break;
        }
        if (b.end < t0 || b.end <= b.start) {
            continue;  // outside, or a receive that did not wait
        }
        if (b.end - b.start >= min_width) {
            out->boxes.push_back(&b);
            continue;
        }
        if (out->columns.empty()) {
            out->columns.resize(static_cast<std::size_t>(columns));
        }
        // Spread the block over the columns it touches.
        const double x0 = (std::max(b.start, t0) - t0) / per_pixel;
        const double x1 = (std::min(b.end, t1) - t0) / per_pixel;
        const int c0 = std::clamp(static_cast<int>(std::floor(x0)), 0, columns - 1);
        const int c1 = std::clamp(static_cast<int>(std::floor(x1)), 0, columns - 1);
        for (int c = c0; c <= c1; ++c) {
            const double share = std::min(x1, c + 1.0) - std::max(x0, static_cast<double>(c));
            if (share <= 0) {
                continue;
            }
            ColumnCover& column = out->columns[static_cast<std::size_t>(c)];
            column.cover = std::min(1.0F, column.cover + static_cast<float>(share));
            if (share > static_cast<double>(column.largest)) {
                column.largest = static_cast<float>(share);
                column.kind = b.kind;
            }
        }
    }
}

}  // namespace pipewright::gui
