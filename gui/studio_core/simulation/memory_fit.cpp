#include "studio_core/simulation/memory_fit.h"

#include <QCoreApplication>
#include <algorithm>
#include <limits>

#include "studio_core/format/format.h"

namespace pipewright::gui {

namespace {

// peak / capacity; a device without a known capacity that still does not fit
// (capacity 0) counts as the worst.
double overflow_ratio(const DeviceMetrics& d) {
    return d.memory_capacity_bytes > 0 ? static_cast<double>(d.peak_memory_bytes) /
                                             static_cast<double>(d.memory_capacity_bytes)
                                       : std::numeric_limits<double>::infinity();
}

}  // namespace

std::optional<MemoryOverflow> worst_overflow(const std::vector<DeviceMetrics>& devices) {
    std::optional<MemoryOverflow> worst;
    double worst_ratio = 0;
    int over = 0;
    for (const auto& d : devices) {
        if (d.fits) {
            continue;
        }
        ++over;
        const double ratio = overflow_ratio(d);
        if (!worst || ratio > worst_ratio) {
            worst = MemoryOverflow{QString::fromStdString(d.name), d.peak_memory_bytes,
                                   d.memory_capacity_bytes, 0};
            worst_ratio = ratio;
        }
    }
    if (worst) {
        worst->devices_over = over;
    }
    return worst;
}

QString overflow_needs(const MemoryOverflow& overflow) {
    QString text =
        QCoreApplication::translate("MemoryFit", "needs %1 of %2 on %3")
            .arg(format_bytes(static_cast<double>(overflow.peak_bytes)),
                 format_bytes(static_cast<double>(overflow.capacity_bytes)), overflow.device);
    if (overflow.devices_over > 1) {
        text += QCoreApplication::translate("MemoryFit", " (and %n more device(s))", nullptr,
                                            overflow.devices_over - 1);
    }
    return text;
}

QString overflow_text(const MemoryOverflow& overflow) {
    return QCoreApplication::translate("MemoryFit", "does not fit: %1")
        .arg(overflow_needs(overflow));
}

std::int64_t largest_peak(const std::vector<DeviceMetrics>& devices) {
    std::int64_t peak = 0;
    for (const auto& d : devices) {
        peak = std::max(peak, d.peak_memory_bytes);
    }
    return peak;
}

}  // namespace pipewright::gui
