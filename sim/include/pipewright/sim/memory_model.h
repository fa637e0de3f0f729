#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "pipewright/core/timeline.h"
#include "pipewright/sim/cost_model.h"

namespace pipewright {

struct RankMemory {
    std::int64_t static_bytes = 0;  // weights, gradients, optimizer state
    std::int64_t peak_bytes = 0;
    double peak_time_s = 0;
    std::vector<MemorySample> curve;  // total bytes from each time on
};

// How an action changes the activations its rank holds: a forward stashes
// its micro-batch's activations from its start, a backward frees them at
// its end (for a split backward: I keeps the weight-gradient part until W
// ends). Under ZeRO-3, UNSHARD holds the gathered weights from its start
// and RESHARD lets them go. A forward or backward also holds its transient
// bytes (context parallelism's exchanged keys and values, the layers that
// full recomputation rebuilds) from its start to its end. Transfers change nothing.
struct MemoryChange {
    double time_s = 0;
    double delta = 0;
};
// At most two changes: at an action's start and at its end.
struct MemoryChanges {
    std::array<MemoryChange, 2> items;
    int count = 0;

    void add(double time_s, double delta) {
        if (delta != 0) {
            items[static_cast<std::size_t>(count++)] = {time_s, delta};
        }
    }
    [[nodiscard]] const MemoryChange* begin() const { return items.data(); }
    [[nodiscard]] const MemoryChange* end() const { return items.data() + count; }
};
// Whether an action computes weight gradients (B, or W of a split
// backward): ZeRO-2/3 gradients are whole from the end of a stage's first.
[[nodiscard]] constexpr bool computes_weight_gradients(ActionType t) {
    return t == ActionType::backward || t == ActionType::backward_weight;
}

[[nodiscard]] inline MemoryChanges memory_changes(const StageCost& s, ActionType type,
                                                  double start_s, double end_s) {
    MemoryChanges c;
    switch (type) {
        case ActionType::forward:
            c.add(start_s, s.stash_bytes + s.transient_forward_bytes);
            c.add(end_s, -s.transient_forward_bytes);
            break;
        case ActionType::backward:
            c.add(start_s, s.transient_backward_bytes);
            c.add(end_s, -s.stash_bytes - s.transient_backward_bytes);
            break;
        case ActionType::backward_input:
            c.add(start_s, s.transient_backward_input_bytes);
            c.add(end_s, s.weight_stash_bytes - s.stash_bytes - s.transient_backward_input_bytes);
            break;
        case ActionType::backward_weight:
            c.add(end_s, -s.weight_stash_bytes);
            break;
        case ActionType::unshard:
            c.add(start_s, s.gathered_bytes);
            break;
        case ActionType::reshard:
            c.add(start_s, -s.gathered_bytes);
            break;
        default:
            break;
    }
    return c;
}

// The memory of one rank, its changes given in time order. All changes at
// one time count as one step, frees first (a backward that ends as the next
// forward begins has already released its activations), so the peak and
// the curve do not depend on the order of changes within a time.
class MemoryLevel {
  public:
    // `curve`, when given, receives one sample per distinct time.
    explicit MemoryLevel(std::int64_t static_bytes, std::vector<MemorySample>* curve = nullptr);

    void add(const MemoryChange& c) {
        if (!pending_.empty() && c.time_s != pending_time_s_) {
            settle();
        }
        pending_time_s_ = c.time_s;
        pending_.push_back(c.delta);
    }
    // Applies the changes still pending; call before reading the peak.
    void finish() {
        if (!pending_.empty()) {
            settle();
        }
    }

    [[nodiscard]] std::int64_t peak_bytes() const { return peak_bytes_; }
    // The time of the latest change added.
    [[nodiscard]] double latest_time_s() const { return pending_time_s_; }
    [[nodiscard]] double peak_time_s() const { return peak_time_s_; }

  private:
    void settle();

    double current_;
    std::int64_t peak_bytes_;
    double peak_time_s_ = 0;
    std::vector<MemorySample>* curve_;
    double pending_time_s_ = 0;
    std::vector<double> pending_;  // deltas at pending_time_s_
};

// Memory over one iteration: static bytes, plus each micro-batch's stashed
// activations (memory_change), plus under ZeRO-2/3 each stage's gradients
// beyond its shard from the end of its first weight gradient (B, or W) until
// its reduction ends.
[[nodiscard]] std::vector<RankMemory> memory_over_time(
    const Timeline& timeline, const std::vector<StageCost>& stages,
    const std::vector<std::int64_t>& static_bytes);

}  // namespace pipewright
