#include <gtest/gtest.h>

#include "studio_core/simulation/memory_fit.h"

namespace pipewright::gui {
namespace {

constexpr std::int64_t kGiB = 1024LL * 1024 * 1024;

DeviceMetrics device(const std::string& name, double peak_gib, double capacity_gib) {
    DeviceMetrics d;
    d.name = name;
    d.peak_memory_bytes = static_cast<std::int64_t>(peak_gib * static_cast<double>(kGiB));
    d.memory_capacity_bytes = static_cast<std::int64_t>(capacity_gib * static_cast<double>(kGiB));
    d.fits = d.peak_memory_bytes <= d.memory_capacity_bytes;
    return d;
}

TEST(MemoryFit, EveryDeviceFitsMeansNoOverflow) {
    EXPECT_FALSE(worst_overflow({device("a", 30, 40), device("b", 39, 40)}));
    EXPECT_EQ(largest_peak({device("a", 30, 40), device("b", 39, 40)}), 39 * kGiB);
}

TEST(MemoryFit, ASingleDeviceBaselineSaysWhatItNeeds) {
    const auto over = worst_overflow({device("node0/c0/dev0", 2.6 * 1024, 40)});
    ASSERT_TRUE(over);
    EXPECT_EQ(over->device, "node0/c0/dev0");
    EXPECT_EQ(over->devices_over, 1);
    EXPECT_EQ(overflow_text(*over), "does not fit: needs 2.60 TiB of 40.0 GiB on node0/c0/dev0");
}

TEST(MemoryFit, TheWorstDeviceIsTheOneFurthestOverItsCapacity) {
    // b needs more bytes, but c is further over its smaller capacity.
    const auto over = worst_overflow(
        {device("a", 10, 40), device("b", 60, 40), device("c", 30, 16), device("d", 41, 40)});
    ASSERT_TRUE(over);
    EXPECT_EQ(over->device, "c");
    EXPECT_EQ(over->devices_over, 3);
    EXPECT_EQ(overflow_text(*over),
              "does not fit: needs 30.0 GiB of 16.0 GiB on c (and 2 more devices)");
    EXPECT_EQ(overflow_needs(*over), "needs 30.0 GiB of 16.0 GiB on c (and 2 more devices)");
}

}  // namespace
}  // namespace pipewright::gui
