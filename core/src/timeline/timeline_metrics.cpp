#include "pipewright/core/timeline_metrics.h"

#include <algorithm>

namespace pipewright {

TimelineMetrics MetricsAccumulator::metrics(const std::vector<std::string>& devices) const {
    TimelineMetrics m;
    const std::size_t ranks = ranks_.size();
    m.devices.resize(ranks);
    // Measured timelines start at an arbitrary clock; report from the first event.
    const double begin = events_ == 0 ? 0 : begin_;
    m.iteration_time_s = end_ - begin;
    double busy_total = 0;
    for (std::size_t r = 0; r < ranks; ++r) {
        DeviceMetrics& d = m.devices[r];
        const Rank& rank = ranks_[r];
        d.name = r < devices.size() ? devices[r] : std::string();
        d.rank = static_cast<int>(r);
        d.busy_s = rank.busy_s;
        d.start_s = (rank.start_s == kInfinity ? 0 : rank.start_s) - begin;
        d.end_s = std::max(0.0, rank.end_s - begin);
        d.bubble_fraction = m.iteration_time_s > 0 ? 1.0 - d.busy_s / m.iteration_time_s : 0.0;
        busy_total += d.busy_s;
    }
    if (m.iteration_time_s > 0 && ranks > 0) {
        m.bubble_fraction = 1.0 - busy_total / (static_cast<double>(ranks) * m.iteration_time_s);
    }
    return m;
}

std::map<ActionType, double> action_kind_medians(const Timeline& timeline) {
    std::map<ActionType, std::vector<double>> durations;
    for (const auto& e : timeline.events) {
        durations[e.action.type].push_back(e.duration_s());
    }
    std::map<ActionType, double> out;
    for (auto& [kind, d] : durations) {
        // Lower and upper middle of an even count averaged, as medians are.
        const std::size_t n = d.size();
        auto middle = d.begin() + static_cast<std::ptrdiff_t>(n / 2);
        std::nth_element(d.begin(), middle, d.end());
        double median = *middle;
        if (n % 2 == 0) {
            median = 0.5 * (median + *std::max_element(d.begin(), middle));
        }
        out[kind] = median;
    }
    return out;
}

TimelineMetrics timeline_metrics(const Timeline& timeline) {
    MetricsAccumulator totals(static_cast<std::size_t>(timeline.num_ranks()));
    for (const auto& e : timeline.events) {
        totals.add(e);
    }
    return totals.metrics(timeline.devices);
}

}  // namespace pipewright
