#include <gtest/gtest.h>

#include "studio_core/format/chart_scale.h"

namespace pipewright::gui {
namespace {

TEST(ChartScale, DurationUnitFollowsTheLargestValueAsTheCommandLineDoes) {
    EXPECT_EQ(duration_unit(0.0004).symbol, "µs");
    EXPECT_EQ(duration_unit(0.0412).symbol, "ms");
    EXPECT_EQ(duration_unit(0.999).symbol, "ms");
    EXPECT_EQ(duration_unit(1.0).symbol, "s");
    EXPECT_EQ(duration_unit(599.0).symbol, "s");
    // An hour-long iteration reads in minutes, as `pipewright simulate` prints it.
    const ChartUnit hour = duration_unit(3744.0);
    EXPECT_EQ(hour.symbol, "min");
    EXPECT_DOUBLE_EQ(hour.of(3744.0), 62.4);
    const ChartUnit day = duration_unit(86400.0);
    EXPECT_EQ(day.symbol, "h");
    EXPECT_DOUBLE_EQ(day.of(86400.0), 24.0);
    EXPECT_EQ(duration_unit(0).symbol, "s");
}

TEST(ChartScale, BytesUnitIsTheLargestBinaryUnitUnder1024) {
    EXPECT_EQ(bytes_unit(512).symbol, "B");
    EXPECT_EQ(bytes_unit(1024).symbol, "KiB");
    EXPECT_EQ(bytes_unit(5.2 * 1024 * 1024 * 1024).symbol, "GiB");
    const double needs = 2.6 * 1024.0 * 1024 * 1024 * 1024;
    const ChartUnit tib = bytes_unit(needs);
    EXPECT_EQ(tib.symbol, "TiB");
    EXPECT_DOUBLE_EQ(tib.of(needs), 2.6);
    // A 40 GiB capacity in the same chart is a fraction of the unit.
    EXPECT_DOUBLE_EQ(tib.of(40.0 * 1024 * 1024 * 1024), 40.0 / 1024);
    EXPECT_EQ(bytes_unit(3.0 * 1024 * 1024 * 1024 * 1024 * 1024 * 1024).symbol, "PiB");
}

double pixel(double v, const AxisRange& r, double axis_px) {
    return (v - r.lo) / (r.hi - r.lo) * axis_px;
}

TEST(ChartScale, EveryLabelFitsBesideItsBar) {
    const std::vector<double> values = {35931, 120, 0, 8000};
    const std::vector<double> labels = {60, 40, 20, 50};
    const double axis = 400;
    const AxisRange r = bar_axis_range(values, labels, axis);
    EXPECT_DOUBLE_EQ(r.lo, 0);
    for (std::size_t i = 0; i < values.size(); ++i) {
        EXPECT_LE(pixel(values[i], r, axis) + labels[i], axis + 1e-9) << i;
    }
    // The longest bar ends exactly where the widest label needs to start.
    EXPECT_NEAR(pixel(35931, r, axis), axis - 60, 1e-9);
}

TEST(ChartScale, NegativeBarsCarryTheirLabelOnTheLeft) {
    const std::vector<double> values = {-20, 150, 40};
    const std::vector<double> labels = {70, 60, 50};
    const double axis = 500;
    const AxisRange r = bar_axis_range(values, labels, axis);
    EXPECT_LT(r.lo, -20);
    EXPECT_GE(pixel(-20, r, axis) - 70, -1e-9);
    EXPECT_LE(pixel(150, r, axis) + 60, axis + 1e-9);
    EXPECT_NEAR(pixel(-20, r, axis), 70, 1e-9);
    EXPECT_DOUBLE_EQ(bar_axis_needs_px(values, labels, 100), 230);
}

TEST(ChartScale, ANarrowAxisStillShowsBars) {
    const AxisRange r = bar_axis_range({10}, {300}, 200);
    // The bar keeps a quarter of the axis: 10 at 50 px.
    EXPECT_NEAR(pixel(10, r, 200), 50, 1e-9);
    const AxisRange zero = bar_axis_range({0, 0}, {10, 10}, 100);
    EXPECT_GT(zero.hi, zero.lo);
}

}  // namespace
// One or two outliers stop the scale at 4 × the median (issue 36 #7).
TEST(BarScaleCap, OutliersAreCutAtFourTimesTheMedian) {
    // GPT-3's comparison, in minutes: a single device and naive near 39,
    // the pipelines near 0.6.
    const auto cap = bar_scale_cap({39.2, 39.3, 0.615, 0.615, 0.617, 0.527, 0.483, 0.96});
    ASSERT_TRUE(cap.has_value());
    EXPECT_DOUBLE_EQ(*cap, 4 * (0.615 + 0.617) / 2);
    // Values close to each other, or too few, keep the whole scale.
    EXPECT_FALSE(bar_scale_cap({1, 2, 3, 3.5}));
    EXPECT_FALSE(bar_scale_cap({1, 100}));
    // Most values far above the rest: no cap that would cut most bars.
    EXPECT_FALSE(bar_scale_cap({1, 100, 100, 100}));
    // Negative and zero values (gains, an idle bubble) are not measured.
    EXPECT_FALSE(bar_scale_cap({-50, 0, 10, 12, 11}));
}

}  // namespace pipewright::gui
