#include "studio_core/models/metrics_rows.h"

#include <algorithm>

namespace pipewright::gui {

namespace {

QString node_of(const std::string& path) {
    const auto slash = path.find('/');
    return QString::fromStdString(slash == std::string::npos ? path : path.substr(0, slash));
}

double fullness(const DeviceMetrics& d) {
    return d.memory_capacity_bytes > 0 ? static_cast<double>(d.peak_memory_bytes) /
                                             static_cast<double>(d.memory_capacity_bytes)
                                       : 0;
}

// One row for devices[first, end).
MetricsRow summarise(const std::vector<DeviceMetrics>& devices, std::size_t first,
                     std::size_t end) {
    MetricsRow row;
    row.devices = static_cast<int>(end - first);
    double busy = 0;
    const DeviceMetrics* fullest = &devices[first];
    for (std::size_t i = first; i < end; ++i) {
        const DeviceMetrics& d = devices[i];
        busy += 1 - d.bubble_fraction;
        row.over += d.fits ? 0 : 1;
        if (fullness(d) > fullness(*fullest)) {
            fullest = &d;
        }
    }
    row.busy_fraction = busy / row.devices;
    row.peak_bytes = fullest->peak_memory_bytes;
    row.capacity_bytes = fullest->memory_capacity_bytes;
    return row;
}

}  // namespace

std::vector<MetricsRow> metrics_rows(const std::vector<DeviceMetrics>& devices, int max_rows) {
    std::vector<MetricsRow> rows;
    const auto limit = static_cast<std::size_t>(std::max(1, max_rows));
    if (devices.size() <= limit) {
        for (std::size_t i = 0; i < devices.size(); ++i) {
            MetricsRow row = summarise(devices, i, i + 1);
            row.label = QString::fromStdString(devices[i].name);
            rows.push_back(row);
        }
        return rows;
    }
    // Devices come in pipeline order; a node's devices are consecutive in
    // every shipped layout, and a node met again starts a new run.
    std::vector<std::pair<std::size_t, std::size_t>> nodes;  // [first, end)
    for (std::size_t i = 0; i < devices.size(); ++i) {
        if (nodes.empty() ||
            node_of(devices[i].name) != node_of(devices[nodes.back().first].name)) {
            nodes.emplace_back(i, i + 1);
        } else {
            nodes.back().second = i + 1;
        }
    }
    const std::size_t per_row = (nodes.size() + limit - 1) / limit;
    for (std::size_t n = 0; n < nodes.size(); n += per_row) {
        const std::size_t last = std::min(nodes.size(), n + per_row) - 1;
        MetricsRow row = summarise(devices, nodes[n].first, nodes[last].second);
        const QString first_name = node_of(devices[nodes[n].first].name);
        const QString name = last == n ? first_name
                                       : QStringLiteral("%1 – %2").arg(
                                             first_name, node_of(devices[nodes[last].first].name));
        row.label = QStringLiteral("%1 (%2)").arg(name).arg(row.devices);
        rows.push_back(row);
    }
    return rows;
}

bool rows_are_groups(const std::vector<MetricsRow>& rows) {
    return std::any_of(rows.begin(), rows.end(), [](const MetricsRow& r) { return r.devices > 1; });
}

}  // namespace pipewright::gui
