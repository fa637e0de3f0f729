#pragma once

#include <QString>
#include <cstdint>
#include <vector>

#include "pipewright/core/timeline_metrics.h"

namespace pipewright::gui {

// One bar of the Metrics tab's per-device charts: a device, or at cluster
// scale a node (or a run of nodes) when one bar per device would not leave
// each its line of text.
struct MetricsRow {
    QString label;  // "node0/c0/gpu3", "node4 (8)", "node0 – node7 (64)"
    int devices = 1;
    double busy_fraction = 0;         // mean over the row's devices
    std::int64_t peak_bytes = 0;      // of the row's fullest device (peak / capacity)
    std::int64_t capacity_bytes = 0;  // of that device
    int over = 0;                     // devices over capacity

    [[nodiscard]] bool fits() const { return over == 0; }
};

// The rows for at most `max_rows` bars: one per device when they fit, else
// one per node (the path's first part), else runs of consecutive nodes.
[[nodiscard]] std::vector<MetricsRow> metrics_rows(const std::vector<DeviceMetrics>& devices,
                                                   int max_rows);

// Whether the rows stand for groups of devices rather than devices.
[[nodiscard]] bool rows_are_groups(const std::vector<MetricsRow>& rows);

}  // namespace pipewright::gui
