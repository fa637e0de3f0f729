#include "pipewright/core/timeline_metrics.h"

#include <algorithm>
#include <limits>

namespace pipewright {

TimelineMetrics timeline_metrics(const Timeline& timeline) {
    TimelineMetrics m;
    const auto ranks = static_cast<std::size_t>(timeline.num_ranks());
    m.devices.resize(ranks);
    for (std::size_t r = 0; r < ranks; ++r) {
        m.devices[r].name = timeline.devices[r];
        m.devices[r].rank = static_cast<int>(r);
        m.devices[r].start_s = std::numeric_limits<double>::infinity();
    }
    double begin = std::numeric_limits<double>::infinity();
    double end = 0;
    for (const auto& e : timeline.events) {
        begin = std::min(begin, e.start_s);
        end = std::max(end, e.end_s);
        const auto r = static_cast<std::size_t>(e.rank);
        if (r >= ranks || !is_compute(e.action.type)) {
            continue;
        }
        auto& d = m.devices[r];
        d.busy_s += e.duration_s();
        d.start_s = std::min(d.start_s, e.start_s);
        d.end_s = std::max(d.end_s, e.end_s);
    }
    if (timeline.events.empty()) {
        begin = 0;
    }
    // Measured timelines start at an arbitrary clock; report from the first event.
    m.iteration_time_s = end - begin;
    double busy_total = 0;
    for (auto& d : m.devices) {
        if (d.start_s == std::numeric_limits<double>::infinity()) {
            d.start_s = 0;
        }
        d.start_s -= begin;
        d.end_s = std::max(0.0, d.end_s - begin);
        d.bubble_fraction = m.iteration_time_s > 0 ? 1.0 - d.busy_s / m.iteration_time_s : 0.0;
        busy_total += d.busy_s;
    }
    if (m.iteration_time_s > 0 && ranks > 0) {
        m.bubble_fraction = 1.0 - busy_total / (static_cast<double>(ranks) * m.iteration_time_s);
    }
    return m;
}

}  // namespace pipewright
