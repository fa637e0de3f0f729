// The bars of the Metrics tab at cluster scale: a bar per device while they
// fit, else per node, else per run of nodes.
#include "studio_core/models/metrics_rows.h"

#include <gtest/gtest.h>

namespace pipewright::gui {
namespace {

// `nodes` nodes of `per_node` devices; device i is busy i % 4 / 4 of the
// time and holds i GiB of 10 GiB (over capacity from 11 on).
std::vector<DeviceMetrics> cluster(int nodes, int per_node) {
    std::vector<DeviceMetrics> out;
    for (int n = 0; n < nodes; ++n) {
        for (int g = 0; g < per_node; ++g) {
            DeviceMetrics d;
            const int i = n * per_node + g;
            d.name = "node" + std::to_string(n) + "/c0/gpu" + std::to_string(g);
            d.rank = i;
            d.bubble_fraction = 1 - (i % 4) / 4.0;
            d.peak_memory_bytes = static_cast<std::int64_t>(i) << 30;
            d.memory_capacity_bytes = std::int64_t{10} << 30;
            d.fits = d.peak_memory_bytes <= d.memory_capacity_bytes;
            out.push_back(d);
        }
    }
    return out;
}

TEST(MetricsRows, ADeviceABarWhileTheyFit) {
    const auto rows = metrics_rows(cluster(2, 4), 8);
    ASSERT_EQ(rows.size(), 8U);
    EXPECT_FALSE(rows_are_groups(rows));
    EXPECT_EQ(rows[3].label, QStringLiteral("node0/c0/gpu3"));
    EXPECT_DOUBLE_EQ(rows[3].busy_fraction, 0.75);
    EXPECT_EQ(rows[3].peak_bytes, std::int64_t{3} << 30);
}

TEST(MetricsRows, ANodeABarWhenDevicesDoNotFitWithTheMeanBusyAndTheFullestDevice) {
    const auto rows = metrics_rows(cluster(4, 4), 8);  // 16 devices, 8 lines
    ASSERT_EQ(rows.size(), 4U);
    EXPECT_TRUE(rows_are_groups(rows));
    EXPECT_EQ(rows[0].label, QStringLiteral("node0 (4)"));
    EXPECT_EQ(rows[0].devices, 4);
    EXPECT_DOUBLE_EQ(rows[0].busy_fraction, (0 + 0.25 + 0.5 + 0.75) / 4);
    EXPECT_EQ(rows[0].peak_bytes, std::int64_t{3} << 30);  // gpu3 is the fullest
    EXPECT_TRUE(rows[0].fits());
    // node2 holds devices 8..11: device 11 is over its 10 GiB.
    EXPECT_EQ(rows[2].over, 1);
    EXPECT_FALSE(rows[2].fits());
    EXPECT_EQ(rows[2].peak_bytes, std::int64_t{11} << 30);
}

TEST(MetricsRows, RunsOfNodesWhenEvenNodesDoNotFit) {
    const auto rows = metrics_rows(cluster(128, 8), 20);  // 1,024 devices
    ASSERT_LE(rows.size(), 20U);
    EXPECT_EQ(rows.size(), 19U);  // 7 nodes a bar: ceil(128 / 20)
    EXPECT_EQ(rows[0].label, QStringLiteral("node0 – node6 (56)"));
    EXPECT_EQ(rows.back().label, QStringLiteral("node126 – node127 (16)"));
    int devices = 0;
    for (const auto& row : rows) {
        devices += row.devices;
    }
    EXPECT_EQ(devices, 1024);
}

}  // namespace
}  // namespace pipewright::gui
