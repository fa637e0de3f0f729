// Absurd numbers and hostile names in a project (issue 18): values outside
// the documented ranges are refused with the range, whole numbers that an
// int cannot hold say the real limit, nothing prints as "inf" or "nan", and
// control characters in names are escaped before they reach a terminal.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include <nlohmann/json.hpp>

#include "pipewright/core/analysis.h"
#include "pipewright/core/printable_name.h"
#include "pipewright/core/quantity_format.h"
#include "project_fixtures.h"

namespace pipewright {
namespace {

using nlohmann::json;
using testing::diagnose;
using testing::dummy_json;
using testing::has_diagnostic;

json& first_device(json& j) {
    return j["topology"]["nodes"][0]["containers"][0]["devices"][0];
}

TEST(InputLimits, HugeDeviceMemoryIsRefusedWithTheRange) {
    // 9e9 GiB wrapped to a capacity of -8192 PiB and "over capacity".
    json j = dummy_json();
    first_device(j)["memory_GiB"] = 9e9;
    EXPECT_TRUE(has_diagnostic(diagnose(j), "topology.nodes[0].containers[0].devices[0].memory_GiB",
                               {"from 0.001 to 1048576", "9000000000"}));
}

TEST(InputLimits, DenormalBandwidthIsRefusedWithTheRange) {
    // 5e-324 GB/s made every transfer infinite: "inf min", "-nan %".
    json j = dummy_json();
    j["topology"]["links"]["intra_container"]["bandwidth_GBps"] = 5e-324;
    EXPECT_TRUE(has_diagnostic(diagnose(j), "topology.links.intra_container.bandwidth_GBps",
                               {"from 0.001 to 1000000"}));
}

TEST(InputLimits, PeakAndLatencyAndCostsAreBounded) {
    json j = dummy_json();
    first_device(j)["peak_tflops"] = 1e-300;
    j["topology"]["links"]["intra_node"]["latency_us"] = 1e300;
    j["model"]["layers"][0]["cost"] = {{"forward_ms", 1e300}};
    const Diagnostics d = diagnose(j);
    EXPECT_TRUE(has_diagnostic(d, "topology.nodes[0].containers[0].devices[0].peak_tflops",
                               {"from 1e-06 to 1000000"}));
    EXPECT_TRUE(has_diagnostic(d, "topology.links.intra_node.latency_us",
                               {"from 0 to 1000000000", "1e+300"}));
    EXPECT_TRUE(
        has_diagnostic(d, "model.layers[0].cost.forward_ms", {"from 0 to 1000000000", "1e+300"}));
}

TEST(InputLimits, BatchSizeBeyondAnIntSaysTheLimit) {
    // 2^31 .. 2^53 wrapped negative and read "must be at least 1".
    for (std::int64_t big : {std::int64_t{1} << 31, std::int64_t{1} << 53}) {
        json j = dummy_json();
        j["training"]["batch_size"] = big;
        j["training"]["microbatches"] = big;
        const Diagnostics d = diagnose(j);
        EXPECT_TRUE(has_diagnostic(d, "training.batch_size", {"at most 2147483647"}));
        EXPECT_TRUE(has_diagnostic(d, "training.microbatches", {"at most 2147483647"}));
    }
}

// The refused batch is not checked again against the micro-batches as the
// default that stands in for it (1 sample).
TEST(InputLimits, ARefusedBatchSizeIsTheOnlyProblemOfTheBatch) {
    json j = dummy_json();
    j["training"]["batch_size"] = std::int64_t{3000000000};
    Diagnostics d;
    const auto project = project_from_json(j, d);
    ASSERT_TRUE(project.has_value()) << d.format();
    (void)analyze_project(*project, AnalysisOptions{}, d);
    EXPECT_EQ(d.size(), 1U) << d.format();
    EXPECT_TRUE(has_diagnostic(d, "training.batch_size", {"at most 2147483647"}));
}

TEST(InputLimits, NonFiniteQuantitiesAreNeverPrintedAsFigures) {
    const double inf = std::numeric_limits<double>::infinity();
    const double nan = std::numeric_limits<double>::quiet_NaN();
    EXPECT_EQ(format_duration(inf), "(infinite)");
    EXPECT_EQ(format_percent(nan), "(not a number)");
    EXPECT_EQ(format_bytes(-inf), "(-infinite)");
    EXPECT_EQ(format_rate(nan), "(not a number)");
    EXPECT_EQ(format_count(inf), "(infinite)");
}

TEST(PrintableName, ControlCharactersAreEscaped) {
    EXPECT_EQ(printable_name("gpu0"), "gpu0");
    EXPECT_EQ(printable_name("µs-layer"), "µs-layer");
    EXPECT_EQ(printable_name(std::string("a\0b", 3)), "a\\0b");
    EXPECT_EQ(printable_name("\x1b[31mred\n\r\t\x7f"), "\\x1b[31mred\\n\\r\\t\\x7f");
    EXPECT_EQ(printable_name("x\xc2\x9by"), "x\\u009by");  // U+009B, a one-byte CSI
    EXPECT_EQ(printable_text("line 1\nline \x1b 2"), "line 1\nline \\x1b 2");
}

}  // namespace
}  // namespace pipewright
