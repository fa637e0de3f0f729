// Collectives measured among one machine's devices (`calibrate`): the time
// of any group size and buffer, read from the samples.
#include <gtest/gtest.h>

#include <cmath>

#include "pipewright/core/measured_collectives.h"

namespace pipewright {
namespace {

// An all-reduce among 4 and among 8 devices at 1 MiB and 64 MiB, and no
// other kind.
MeasuredCollectives four_and_eight() {
    return MeasuredCollectives({{CollectiveKind::all_reduce, 8, 1 << 20, 40e-6},
                                {CollectiveKind::all_reduce, 4, 1 << 20, 30e-6},
                                {CollectiveKind::all_reduce, 4, 64 << 20, 600e-6},
                                {CollectiveKind::all_reduce, 8, 64 << 20, 700e-6}});
}

TEST(MeasuredCollectives, AMeasuredPointIsItsTime) {
    const MeasuredCollectives m = four_and_eight();
    EXPECT_DOUBLE_EQ(*m.seconds(CollectiveKind::all_reduce, 4, 1 << 20), 30e-6);
    EXPECT_DOUBLE_EQ(*m.seconds(CollectiveKind::all_reduce, 8, 64 << 20), 700e-6);
    EXPECT_EQ(m.largest_group(), 8);
}

TEST(MeasuredCollectives, BetweenSizesLogLogBeyondThemLatencyOrBandwidth) {
    const MeasuredCollectives m = four_and_eight();
    // 8 MiB lies half way between 1 and 64 MiB in log bytes: the geometric
    // mean of the two times.
    EXPECT_NEAR(*m.seconds(CollectiveKind::all_reduce, 4, 8 << 20), std::sqrt(30e-6 * 600e-6),
                1e-12);
    // Below the smallest, its time; above the largest, its rate.
    EXPECT_DOUBLE_EQ(*m.seconds(CollectiveKind::all_reduce, 4, 1024), 30e-6);
    EXPECT_NEAR(*m.seconds(CollectiveKind::all_reduce, 4, 256 << 20), 4 * 600e-6, 1e-12);
}

TEST(MeasuredCollectives, AGroupSizeNotMeasuredScalesTheNextLargerByTheRingsShare) {
    const MeasuredCollectives m = four_and_eight();
    // 2 members from the group of 4: (1/2) / (3/4) of its time; 6 from 8.
    EXPECT_NEAR(*m.seconds(CollectiveKind::all_reduce, 2, 1 << 20), 30e-6 * (0.5 / 0.75), 1e-15);
    EXPECT_NEAR(*m.seconds(CollectiveKind::all_reduce, 6, 1 << 20), 40e-6 * (5.0 / 6) / (7.0 / 8),
                1e-15);
    EXPECT_DOUBLE_EQ(*m.seconds(CollectiveKind::all_reduce, 1, 1 << 20), 0.0);
}

TEST(MeasuredCollectives, UnmeasuredKindsAndLargerGroupsAreUnknown) {
    const MeasuredCollectives m = four_and_eight();
    EXPECT_EQ(m.seconds(CollectiveKind::all_gather, 4, 1 << 20), std::nullopt);
    EXPECT_EQ(m.seconds(CollectiveKind::all_reduce, 9, 1 << 20), std::nullopt);
}

TEST(MeasuredCollectives, TheBusCarriesTheRingsShareTwiceForAnAllReduce) {
    EXPECT_DOUBLE_EQ(bus_traffic_share(CollectiveKind::all_reduce, 8), 2 * 7.0 / 8);
    EXPECT_DOUBLE_EQ(bus_traffic_share(CollectiveKind::all_gather, 4), 3.0 / 4);
    EXPECT_DOUBLE_EQ(bus_traffic_share(CollectiveKind::all_to_all, 2), 0.5);
    EXPECT_DOUBLE_EQ(bus_traffic_share(CollectiveKind::reduce_scatter, 1), 0.0);
}

}  // namespace
}  // namespace pipewright
