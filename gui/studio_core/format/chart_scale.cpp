#include "studio_core/format/chart_scale.h"

#include <algorithm>
#include <cmath>
#include <iterator>

namespace pipewright::gui {

ChartUnit duration_unit(double largest_seconds) {
    const double a = std::fabs(largest_seconds);
    if (!std::isfinite(a) || a == 0) {
        return {1, QStringLiteral("s")};
    }
    if (a < 1e-3) {
        return {1e-6, QStringLiteral("µs")};
    }
    if (a < 1) {
        return {1e-3, QStringLiteral("ms")};
    }
    if (a < 600) {
        return {1, QStringLiteral("s")};
    }
    if (a < 600 * 60) {
        return {60, QStringLiteral("min")};
    }
    return {3600, QStringLiteral("h")};
}

ChartUnit bytes_unit(double largest_bytes) {
    static const char* const symbols[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double a = std::fabs(largest_bytes);
    if (!std::isfinite(a)) {
        a = 0;
    }
    std::size_t u = 0;
    double size = 1;
    while (a >= 1024 && u + 1 < std::size(symbols)) {
        a /= 1024;
        size *= 1024;
        ++u;
    }
    return {size, QString::fromLatin1(symbols[u])};
}

namespace {

struct LabelRoom {
    double lo = 0;  // data extent, zero included
    double hi = 0;
    double left_px = 0;   // widest label of a negative bar
    double right_px = 0;  // widest label of a bar >= 0
};

LabelRoom label_room(const std::vector<double>& values, const std::vector<double>& label_px) {
    LabelRoom room;
    for (std::size_t i = 0; i < values.size(); ++i) {
        const double v = std::isfinite(values[i]) ? values[i] : 0;
        const double w = i < label_px.size() ? std::max(0.0, label_px[i]) : 0;
        room.lo = std::min(room.lo, v);
        room.hi = std::max(room.hi, v);
        (v < 0 ? room.left_px : room.right_px) = std::max(v < 0 ? room.left_px : room.right_px, w);
    }
    if (room.hi <= room.lo) {
        room.hi = room.lo + 1;  // all zero: an axis of one unit, bars of none
    }
    return room;
}

}  // namespace

AxisRange bar_axis_range(const std::vector<double>& values, const std::vector<double>& label_px,
                         double axis_px) {
    const LabelRoom room = label_room(values, label_px);
    const double axis = std::max(axis_px, 1.0);
    const double bars = std::max(axis - room.left_px - room.right_px, axis / 4);
    // Too narrow: the labels share what the bars leave, in proportion.
    const double shrink =
        std::min(1.0, (axis - bars) / std::max(room.left_px + room.right_px, 1.0));
    const double per_px = (room.hi - room.lo) / bars;
    return {room.lo - room.left_px * shrink * per_px, room.hi + room.right_px * shrink * per_px};
}

double bar_axis_needs_px(const std::vector<double>& values, const std::vector<double>& label_px,
                         double bars_px) {
    const LabelRoom room = label_room(values, label_px);
    return room.left_px + room.right_px + bars_px;
}

std::optional<double> bar_scale_cap(const std::vector<double>& values) {
    std::vector<double> positive;
    for (const double v : values) {
        if (v > 0) {
            positive.push_back(v);
        }
    }
    if (positive.size() < 3) {
        return std::nullopt;
    }
    std::sort(positive.begin(), positive.end());
    const std::size_t n = positive.size();
    const double median =
        n % 2 == 1 ? positive[n / 2] : (positive[n / 2 - 1] + positive[n / 2]) / 2;
    const double cap = kOutlierFactor * median;
    const auto within = static_cast<std::size_t>(
        std::upper_bound(positive.begin(), positive.end(), cap) - positive.begin());
    if (within == n || within < 2) {
        return std::nullopt;
    }
    return cap;
}

}  // namespace pipewright::gui
