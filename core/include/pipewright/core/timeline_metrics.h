#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "pipewright/core/timeline.h"

namespace pipewright {

// Arithmetic over a Timeline, simulated or measured alike: the backend's run
// report and the simulator's summary use the same definitions.
struct DeviceMetrics {
    std::string name;  // device path
    std::string spec;
    int rank = 0;
    double busy_s = 0;  // compute time
    double start_s = 0;
    double end_s = 0;
    double bubble_fraction = 0;  // 1 - busy / iteration time
    std::int64_t peak_memory_bytes = 0;
    std::int64_t memory_capacity_bytes = 0;
    bool fits = true;
};

struct TimelineMetrics {
    double iteration_time_s = 0;
    double bubble_fraction = 0;  // 1 - sum busy / (devices x iteration time)
    std::vector<DeviceMetrics> devices;
};

// The metrics of a timeline, gathered one event at a time, so that the
// simulator can report them without keeping its events (tens of bytes per
// action, gigabytes for the largest cases). Fed the same events in the same
// order, it gives the same numbers as timeline_metrics, to the last bit.
class MetricsAccumulator {
  public:
    explicit MetricsAccumulator(std::size_t ranks = 0) : ranks_(ranks) {}

    void add(const TimelineEvent& e) {
        if (events_ == 0) {
            first_start_s_ = e.start_s;
        }
        ++events_;
        begin_ = std::min(begin_, e.start_s);
        end_ = std::max(end_, e.end_s);
        const auto r = static_cast<std::size_t>(e.rank);
        if (r >= ranks_.size()) {
            return;
        }
        Rank& rank = ranks_[r];
        rank.last_end_s = std::max(rank.last_end_s, e.end_s);
        if (is_compute(e.action.type)) {
            rank.busy_s += e.duration_s();
            rank.start_s = std::min(rank.start_s, e.start_s);
            rank.end_s = std::max(rank.end_s, e.end_s);
        }
    }

    // `devices` names the ranks, one each.
    [[nodiscard]] TimelineMetrics metrics(const std::vector<std::string>& devices) const;

    [[nodiscard]] bool empty() const { return events_ == 0; }
    [[nodiscard]] std::size_t ranks() const { return ranks_.size(); }
    // The earliest start of any event (+infinity when there is none).
    [[nodiscard]] double begin_s() const { return begin_; }
    // The start of the first event added (not the earliest start).
    [[nodiscard]] double first_start_s() const { return first_start_s_; }
    // The latest end of any event of `rank`, sends and receives included;
    // -infinity when it has none.
    [[nodiscard]] double last_end_s(std::size_t rank) const { return ranks_[rank].last_end_s; }

  private:
    static constexpr double kInfinity = std::numeric_limits<double>::infinity();
    struct Rank {
        double busy_s = 0;
        double start_s = kInfinity;
        double end_s = 0;
        double last_end_s = -kInfinity;
    };
    std::vector<Rank> ranks_;
    std::size_t events_ = 0;
    double first_start_s_ = 0;
    double begin_ = kInfinity;
    double end_ = 0;
};

// Busy time, span and bubble of every rank of a timeline.
[[nodiscard]] TimelineMetrics timeline_metrics(const Timeline& timeline);

// The median duration of each kind of action in a timeline, keyed as the
// schedule notation writes the kind ("F", "SEND_B", ...). Kinds the timeline
// lacks are absent. What `compare` and the studio's Run tab put side by side
// to say which kind of action the simulator mis-prices.
[[nodiscard]] std::map<ActionType, double> action_kind_medians(const Timeline& timeline);

}  // namespace pipewright
