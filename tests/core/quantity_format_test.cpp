#include <gtest/gtest.h>

#include "pipewright/core/quantity_format.h"

namespace pipewright {
namespace {

TEST(QuantityFormat, DurationsPickAReadableUnit) {
    EXPECT_EQ(format_duration(0), "0 s");
    EXPECT_EQ(format_duration(4.27e-9), "4.27 ns");
    EXPECT_EQ(format_duration(125e-6), "125 µs");
    EXPECT_EQ(format_duration(0.0638), "63.8 ms");
    EXPECT_EQ(format_duration(3.05), "3.05 s");
    EXPECT_EQ(format_duration(3594), "59.9 min");
}

TEST(QuantityFormat, BytesUseBinaryUnits) {
    EXPECT_EQ(format_bytes(512), "512 B");
    EXPECT_EQ(format_bytes(1280), "1.25 KiB");
    EXPECT_EQ(format_bytes(60.0 * 1024 * 1024), "60.0 MiB");
    EXPECT_EQ(format_bytes(40.0 * 1024 * 1024 * 1024), "40.0 GiB");
}

TEST(QuantityFormat, PercentRatesAndCounts) {
    EXPECT_EQ(format_percent(0.2043), "20.4 %");
    EXPECT_EQ(format_rate(1880.9), "1,881");
    EXPECT_EQ(format_rate(3196784.2), "3,196,784");
    EXPECT_EQ(format_rate(12.345), "12.3");
    EXPECT_EQ(format_rate(3.4), "3.40");
    EXPECT_EQ(format_count(512), "512");
    EXPECT_EQ(format_count(77.1e6), "77.1 M");
    EXPECT_EQ(format_count(8.2e9), "8.20 G");
}

}  // namespace
}  // namespace pipewright

namespace pipewright {
namespace {

// One signed form for errors, in the command line's compare and the
// studio's run table alike.
TEST(QuantityFormat, SignedPercentAlwaysWritesTheSign) {
    EXPECT_EQ(format_signed_percent(0.2), "+20.0 %");
    EXPECT_EQ(format_signed_percent(-0.6), "-60.0 %");
    EXPECT_EQ(format_signed_percent(0.0), "+0.0 %");
}

}  // namespace
}  // namespace pipewright
