// A GPU that fits with less to spare than NCCL's buffers and fragmentation
// take is named, with what it has left; CPUs and layouts that do not fit
// are not (they say so otherwise).
#include "pipewright/core/memory_headroom.h"

#include <gtest/gtest.h>

namespace pipewright {
namespace {

constexpr std::int64_t kGiB = std::int64_t{1} << 30;

DeviceMetrics device(const std::string& name, const std::string& spec, double peak_GiB,
                     double capacity_GiB) {
    DeviceMetrics d;
    d.name = name;
    d.spec = spec;
    d.peak_memory_bytes = static_cast<std::int64_t>(peak_GiB * kGiB);
    d.memory_capacity_bytes = static_cast<std::int64_t>(capacity_GiB * kGiB);
    d.fits = d.peak_memory_bytes <= d.memory_capacity_bytes;
    return d;
}

TEST(MemoryHeadroom, TheGpuWithLeastToSpareUnderTwoGiBIsNamed) {
    const auto tight =
        tightest_gpu({device("a", "H100-SXM", 70, 78.6), device("b", "H100-SXM", 77.6, 78.6),
                      device("c", "H100-SXM", 77.1, 78.6)});
    ASSERT_TRUE(tight);
    EXPECT_EQ(tight->name, "b");
    EXPECT_NEAR(static_cast<double>(tight->spare_bytes), 1.0 * kGiB, 1.0);
    EXPECT_EQ(tight_memory_note(*tight),
              "b has 1.00 GiB to spare, less than NCCL's buffers and the allocator's "
              "fragmentation may take (not counted)");
}

TEST(MemoryHeadroom, RoomEnoughCpusAndLayoutsThatDoNotFitAreNotNamed) {
    // Two GiB and more to spare.
    EXPECT_FALSE(tightest_gpu({device("a", "H100-SXM", 76.6, 78.6)}));
    // A CPU worker's memory holds no NCCL buffers.
    EXPECT_FALSE(tightest_gpu({device("a", "cpu", 63.9, 64)}));
    // One device over capacity: the report says that instead.
    EXPECT_FALSE(
        tightest_gpu({device("a", "H100-SXM", 78, 78.6), device("b", "H100-SXM", 79, 78.6)}));
    // A spec the catalog does not know is not taken for a GPU.
    EXPECT_FALSE(tightest_gpu({device("a", "custom", 78, 78.6)}));
}

// A margin takes its bytes off every GPU's memory, none off a CPU's, and
// leaves nothing below zero.
TEST(MemoryHeadroom, AMarginTakesItsBytesOffEveryGpu) {
    const DeviceCatalog& builtin = DeviceCatalog::builtin();
    const DeviceCatalog kept = with_memory_margin(builtin, 2 * kGiB);
    EXPECT_EQ(kept.find("H100-SXM")->memory_bytes,
              builtin.find("H100-SXM")->memory_bytes - 2 * kGiB);
    EXPECT_EQ(kept.find("T4")->memory_bytes, builtin.find("T4")->memory_bytes - 2 * kGiB);
    EXPECT_EQ(kept.find("cpu")->memory_bytes, builtin.find("cpu")->memory_bytes);
    EXPECT_EQ(with_memory_margin(builtin, 1000 * kGiB).find("H100-SXM")->memory_bytes, 0);
    EXPECT_EQ(kept.specs().size(), builtin.specs().size());
}

}  // namespace
}  // namespace pipewright
