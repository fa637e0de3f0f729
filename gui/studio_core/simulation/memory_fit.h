#pragma once

#include <QString>
#include <cstdint>
#include <optional>
#include <vector>

#include "pipewright/core/timeline_metrics.h"

namespace pipewright::gui {

// Whether a simulated configuration fits in its devices' memory, told as the
// command line's `fits` column does (a device fits when its peak is within
// its capacity), with the numbers that make it not fit.
struct MemoryOverflow {
    QString device;  // the device that overflows most, relative to its capacity
    std::int64_t peak_bytes = 0;
    std::int64_t capacity_bytes = 0;
    int devices_over = 0;  // how many devices do not fit
};

// Empty when every device fits.
[[nodiscard]] std::optional<MemoryOverflow> worst_overflow(
    const std::vector<DeviceMetrics>& devices);
// "needs 2.60 TiB of 40.0 GiB on node0/c0/dev0", plus " (and 3 more
// device(s))" when others overflow too.
[[nodiscard]] QString overflow_needs(const MemoryOverflow& overflow);
// "does not fit: " and the above.
[[nodiscard]] QString overflow_text(const MemoryOverflow& overflow);
// The largest peak of any device: the CLI's "peak memory" column.
[[nodiscard]] std::int64_t largest_peak(const std::vector<DeviceMetrics>& devices);

}  // namespace pipewright::gui
