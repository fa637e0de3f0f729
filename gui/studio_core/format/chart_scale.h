#pragma once

#include <QString>
#include <optional>
#include <vector>

namespace pipewright::gui {

// How a chart's value axis reads: one unit per chart, chosen from its largest
// value, so that an hour-long iteration reads "62.4 min" rather than
// "3.74·10⁶ ms" and every bar of the chart can be compared digit for digit.
struct ChartUnit {
    double size = 1;  // one unit in the quantity's base (seconds, bytes)
    QString symbol;   // "ms", "GiB"

    [[nodiscard]] double of(double quantity) const { return quantity / size; }
};

// µs, ms, s, min or h. The thresholds are the command line's (format_duration:
// seconds up to 600, then minutes), so the chart's largest bar reads as the
// CLI prints it; past ten hours, hours.
[[nodiscard]] ChartUnit duration_unit(double largest_seconds);
// B, KiB, MiB, GiB, TiB or PiB: the largest whose figure is at least 1, as
// format_bytes does.
[[nodiscard]] ChartUnit bytes_unit(double largest_bytes);

// The value axis of a horizontal bar chart, from `lo` to `hi`, that leaves
// room beside every bar for its label: a bar of value >= 0 carries its label
// on its right, a negative one on its left. label_px[i] is the width of bar
// i's label in pixels (padding included), axis_px the axis' length in pixels.
// The bars get what the widest labels leave, but never less than a quarter
// of the axis: a chart narrower than its labels needs (see
// bar_axis_needs_px) shows whole bars with labels past the edge, not a
// chart of nothing.
struct AxisRange {
    double lo = 0;
    double hi = 1;
};
[[nodiscard]] AxisRange bar_axis_range(const std::vector<double>& values,
                                       const std::vector<double>& label_px, double axis_px);
// The shortest axis on which bar_axis_range leaves every label inside, with
// `bars_px` pixels for the bars themselves.
[[nodiscard]] double bar_axis_needs_px(const std::vector<double>& values,
                                       const std::vector<double>& label_px, double bars_px);

// Where a chart's scale stops so that one or two outliers do not make the
// rest slivers (issue 36: a single device's 39 min beside pipelines' 37 s):
// kOutlierFactor times the median of the positive values, when some value
// lies beyond that and at least two do not. Bars past it are drawn to it,
// broken, with their figure beside them; nullopt: no cap.
inline constexpr double kOutlierFactor = 4;
[[nodiscard]] std::optional<double> bar_scale_cap(const std::vector<double>& values);

}  // namespace pipewright::gui
