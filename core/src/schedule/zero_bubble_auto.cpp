#include "pipewright/core/zero_bubble_auto.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <queue>
#include <string>
#include <utility>

#include "pipewright/core/schedule_generators.h"
#include "schedule/schedule_layout.h"

namespace pipewright {

namespace {

using detail::idx;

constexpr double kNotYet = std::numeric_limits<double>::infinity();
// Bytes compared against a limit: sums of doubles, so allow for rounding.
constexpr double kSlack = 1e-9;

bool fits(double held, double limit) {
    return held <= limit * (1 + kSlack) + kSlack;
}

// When each stage's inputs arrive: the activation of micro-batch mb at
// stage s (forward) and the gradient of its output (backward).
class Arrivals {
  public:
    Arrivals(int stages, int microbatches)
        : mbs_(idx(microbatches)),
          forward_(idx(stages) * mbs_, kNotYet),
          backward_(idx(stages) * mbs_, kNotYet),
          link_free_(2 * idx(stages), 0.0) {}

    double& forward(int stage, int mb) { return forward_[idx(stage) * mbs_ + idx(mb)]; }
    double& backward(int stage, int mb) { return backward_[idx(stage) * mbs_ + idx(mb)]; }

    // A send that leaves when its compute ends at `end_s`, on the stage's
    // link in that direction, one transfer at a time.
    double send(int stage, bool to_next, const AutoTransfer& t, double end_s) {
        double& free = link_free_[2 * idx(stage) + (to_next ? 0 : 1)];
        const double start = std::max(end_s, free);
        free = start + t.occupancy_s;
        return start + t.occupancy_s + t.latency_s;
    }

  private:
    std::size_t mbs_;
    std::vector<double> forward_;
    std::vector<double> backward_;
    std::vector<double> link_free_;
};

// What finishing a compute action of `stage` makes available elsewhere.
void deliver(const Action& a, double end_s, int stages, const AutoScheduleCosts& costs,
             Arrivals& arrivals) {
    const AutoStageCosts& c = costs.stages[idx(a.stage)];
    if (a.type == ActionType::forward) {
        if (a.stage + 1 < stages) {
            arrivals.forward(a.stage + 1, a.microbatch) =
                arrivals.send(a.stage, true, c.to_next, end_s);
        } else {
            arrivals.backward(a.stage, a.microbatch) = end_s;  // the loss, on this rank
        }
    } else if ((a.type == ActionType::backward_input || a.type == ActionType::backward) &&
               a.stage > 0) {
        arrivals.backward(a.stage - 1, a.microbatch) =
            arrivals.send(a.stage, false, c.to_previous, end_s);
    }
}

double duration(const AutoStageCosts& c, ActionType type) {
    switch (type) {
        case ActionType::forward:
            return c.forward_s;
        case ActionType::backward_input:
            return c.input_s;
        case ActionType::backward_weight:
            return c.weight_s;
        case ActionType::backward:
            return c.input_s + c.weight_s;
        default:
            return 0;
    }
}

// Activations held after the action (its change to the stage's memory).
double memory_delta(const AutoStageCosts& c, ActionType type) {
    switch (type) {
        case ActionType::forward:
            return c.stash_bytes;
        case ActionType::backward_input:
            return c.weight_stash_bytes - c.stash_bytes;
        case ActionType::backward_weight:
            return -c.weight_stash_bytes;
        case ActionType::backward:
            return -c.stash_bytes;
        default:
            return 0;
    }
}

// How a device fills a gap with a weight gradient.
enum class Fill {
    always,         // whenever nothing else is ready
    where_it_fits,  // only when no input known to arrive sooner would wait for it
};

// The heuristic, as an event simulation of the devices under `costs`: at
// each moment a device is free it runs, in this order, the input gradient
// whose gradient has arrived, the forward whose input has arrived if its
// activations fit under `limit`, a weight gradient (per `fill`); otherwise
// it waits for the next arrival. Returns the compute-only lists.
std::vector<std::vector<Action>> greedy_lists(int stages, int m, const AutoScheduleCosts& costs,
                                              const std::vector<double>& limit, Fill fill) {
    struct Device {
        int forwards = 0;
        int inputs = 0;
        int weights = 0;
        double free_at = 0;
    };
    std::vector<Device> dev(idx(stages));
    std::vector<std::vector<Action>> lists(idx(stages));
    Arrivals arrivals(stages, m);
    for (int mb = 0; mb < m; ++mb) {
        arrivals.forward(0, mb) = 0;
    }
    using Wake = std::pair<double, int>;  // time, stage
    std::priority_queue<Wake, std::vector<Wake>, std::greater<>> wakes;
    std::vector<bool> waiting(idx(stages), false);
    for (int s = 0; s < stages; ++s) {
        wakes.push({0.0, s});
        lists[idx(s)].reserve(idx(m) * 3);
    }
    const auto run = [&](int s, double t, ActionType type, int mb) {
        Device& d = dev[idx(s)];
        const AutoStageCosts& c = costs.stages[idx(s)];
        const Action a{s, type, mb};
        lists[idx(s)].push_back(a);
        d.free_at = t + duration(c, type);
        deliver(a, d.free_at, stages, costs, arrivals);
        // Wake the neighbour that waits for what this sends.
        const int peer = type == ActionType::forward ? s + 1 : s - 1;
        if (type != ActionType::backward_weight && peer >= 0 && peer < stages &&
            waiting[idx(peer)]) {
            waiting[idx(peer)] = false;
            const double at = type == ActionType::forward ? arrivals.forward(peer, mb)
                                                          : arrivals.backward(peer, mb);
            wakes.push({at, peer});
        }
        wakes.push({d.free_at, s});
    };
    while (!wakes.empty()) {
        const auto [t, s] = wakes.top();
        wakes.pop();
        Device& d = dev[idx(s)];
        const AutoStageCosts& c = costs.stages[idx(s)];
        if (t < d.free_at || (d.weights == m && d.forwards == m)) {
            continue;  // busy (a stale wake), or finished
        }
        waiting[idx(s)] = false;
        const double input_ready = d.inputs < d.forwards ? arrivals.backward(s, d.inputs) : kNotYet;
        // A forward's micro-batch holds its stash until I, then its
        // weight stash until W, which under checkpointing is the larger
        // (I recomputes the activations W needs): a forward starts only if
        // the memory still fits once every micro-batch waiting for its I
        // has had it.
        const double reserve = std::max(c.stash_bytes, c.weight_stash_bytes);
        const double after_inputs =
            static_cast<double>(d.forwards - d.inputs + 1) * reserve +
            static_cast<double>(d.inputs - d.weights) * c.weight_stash_bytes;
        const bool forward_fits = d.forwards < m && fits(after_inputs, limit[idx(s)]);
        const double forward_ready = forward_fits ? arrivals.forward(s, d.forwards) : kNotYet;
        const bool weight_pending = d.weights < d.inputs;
        if (input_ready <= t) {
            run(s, t, ActionType::backward_input, d.inputs++);
        } else if (forward_ready <= t) {
            run(s, t, ActionType::forward, d.forwards++);
        } else if (weight_pending && (fill == Fill::always || d.inputs == m ||
                                      std::min(input_ready, forward_ready) >= t + c.weight_s)) {
            run(s, t, ActionType::backward_weight, d.weights++);
        } else if (const double next = std::min(input_ready, forward_ready); next < kNotYet) {
            wakes.push({next, s});
        } else if (weight_pending) {
            // Nothing known to come: the forward waits for memory, which
            // only a weight gradient frees.
            run(s, t, ActionType::backward_weight, d.weights++);
        } else {
            waiting[idx(s)] = true;  // woken by the neighbour's send
        }
    }
    return lists;
}

}  // namespace

std::string auto_costs_text(const AutoScheduleCosts& costs) {
    std::string out;
    char number[32];
    for (std::size_t s = 0; s < costs.stages.size(); ++s) {
        const AutoStageCosts& c = costs.stages[s];
        const double values[] = {c.forward_s,
                                 c.input_s,
                                 c.weight_s,
                                 c.stash_bytes,
                                 c.weight_stash_bytes,
                                 c.memory_limit_bytes,
                                 c.to_next.occupancy_s,
                                 c.to_next.latency_s,
                                 c.to_previous.occupancy_s,
                                 c.to_previous.latency_s};
        out += s == 0 ? "" : ";";
        for (std::size_t k = 0; k < std::size(values); ++k) {
            std::snprintf(number, sizeof number, "%.17g", values[k]);
            out += (k == 0 ? "" : ",") + std::string(number);
        }
    }
    return out;
}

AutoScheduleCosts auto_costs_from_text(std::string_view text) {
    AutoScheduleCosts costs;
    std::size_t stage = 0;
    for (std::size_t start = 0; start <= text.size(); ++stage) {
        auto end = text.find(';', start);
        end = end == std::string_view::npos ? text.size() : end;
        const std::string part(text.substr(start, end - start));
        start = end + 1;
        double v[10];
        std::size_t n = 0;
        const char* p = part.c_str();
        while (n < std::size(v)) {
            char* next = nullptr;
            v[n] = std::strtod(p, &next);
            if (next == p || std::isnan(v[n]) || v[n] < 0) {
                break;
            }
            ++n;
            p = next;
            if (*p != ',') {
                break;
            }
            ++p;
        }
        if (n != std::size(v) || *p != '\0') {
            throw ScheduleError("zb-auto's costs for stage " + std::to_string(stage) +
                                " are not ten non-negative numbers separated by commas: \"" +
                                part.substr(0, 80) + "\"");
        }
        costs.stages.push_back({v[0], v[1], v[2], v[3], v[4], v[5], {v[6], v[7]}, {v[8], v[9]}});
    }
    return costs;
}

AutoScheduleCosts unit_auto_costs(int stages) {
    AutoScheduleCosts costs;
    costs.stages.resize(idx(std::max(stages, 0)));
    for (AutoStageCosts& c : costs.stages) {
        c.memory_limit_bytes = stages;
    }
    return costs;
}

AutoTiming time_for_costs(const Schedule& s, const AutoScheduleCosts& costs) {
    const int stages = s.num_stages;
    const int m = s.num_microbatches;
    Arrivals arrivals(stages, m);
    for (int mb = 0; mb < m; ++mb) {
        arrivals.forward(0, mb) = 0;
    }
    std::vector<std::size_t> pc(s.ranks.size(), 0);
    std::vector<double> clock(s.ranks.size(), 0.0);
    std::vector<double> held(s.ranks.size(), 0.0);
    AutoTiming timing;
    for (bool progress = true; progress;) {
        progress = false;
        for (std::size_t r = 0; r < s.ranks.size(); ++r) {
            const auto& list = s.ranks[r];
            for (; pc[r] < list.size(); ++pc[r]) {
                const Action& a = list[pc[r]];
                const AutoStageCosts& c = costs.stages[idx(a.stage)];
                double ready = 0;
                if (a.type == ActionType::forward) {
                    ready = arrivals.forward(a.stage, a.microbatch);
                } else if (a.type == ActionType::backward_input || a.type == ActionType::backward) {
                    ready = arrivals.backward(a.stage, a.microbatch);
                }
                if (ready == kNotYet) {
                    break;
                }
                const double start = std::max(clock[r], ready);
                clock[r] = start + duration(c, a.type);
                held[r] += memory_delta(c, a.type);
                timing.peak_bytes = std::max(timing.peak_bytes, held[r]);
                if (!fits(held[r], c.memory_limit_bytes)) {
                    timing.within_memory = false;
                }
                deliver(a, clock[r], stages, costs, arrivals);
                progress = true;
            }
        }
    }
    for (std::size_t r = 0; r < s.ranks.size(); ++r) {
        if (pc[r] < s.ranks[r].size()) {
            throw ScheduleError("the schedule cannot run to the end under zb-auto's timing");
        }
        timing.iteration_s = std::max(timing.iteration_s, clock[r]);
    }
    return timing;
}

Schedule generate_zb_auto(const std::vector<int>& stage_rank, int microbatches,
                          const AutoScheduleCosts& costs) {
    const std::string name(to_string(ScheduleKind::zb_auto));
    const detail::Layout layout = detail::check_layout(name, stage_rank, microbatches);
    detail::require_one_stage_per_device(name, stage_rank, layout, "zbv, interleaved-zb");
    if (costs.stages.size() != idx(layout.stages)) {
        throw ScheduleError(name + " got costs for " +
                            detail::stages_words(static_cast<long long>(costs.stages.size())) +
                            " but the pipeline has " + detail::stages_words(layout.stages));
    }
    const int p = layout.stages;
    const int m = layout.microbatches;
    std::vector<double> limit(idx(p));
    std::vector<double> one_f_one_b(idx(p));  // at most what 1F1B holds
    for (int s = 0; s < p; ++s) {
        const AutoStageCosts& c = costs.stages[idx(s)];
        if (!fits(std::max(c.stash_bytes, c.weight_stash_bytes), c.memory_limit_bytes)) {
            throw ScheduleError(name + ": stage " + std::to_string(s) +
                                " cannot hold the activations of even one micro-batch under its "
                                "memory limit; use more devices, smaller micro-batches or "
                                "activation checkpointing");
        }
        limit[idx(s)] = c.memory_limit_bytes;
        one_f_one_b[idx(s)] =
            std::min(c.memory_limit_bytes, (p - s) * std::max(c.stash_bytes, c.weight_stash_bytes));
    }
    Schedule best;
    double best_s = kNotYet;
    double best_peak = kNotYet;
    const auto consider = [&](Schedule candidate) {
        const AutoTiming t = time_for_costs(candidate, costs);
        // Times that differ only by rounding are a tie, which the smaller
        // memory peak breaks.
        const double tie = 1e-12 * std::max(1.0, best_s == kNotYet ? 1.0 : best_s);
        const bool faster = t.iteration_s < best_s - tie;
        const bool as_fast_smaller = t.iteration_s <= best_s + tie && t.peak_bytes < best_peak;
        if (t.within_memory && (faster || as_fast_smaller)) {
            best_s = std::min(best_s, t.iteration_s);
            best_peak = t.peak_bytes;
            best = std::move(candidate);
        }
    };
    for (const auto* caps : {&limit, &one_f_one_b}) {
        for (const Fill fill : {Fill::where_it_fits, Fill::always}) {
            Schedule s = detail::empty_schedule(name, stage_rank, layout);
            s.ranks = greedy_lists(p, m, costs, *caps, fill);
            consider(std::move(s));
        }
    }
    if (m >= p) {
        for (const ScheduleKind handcrafted : {ScheduleKind::zb_h1, ScheduleKind::zb_h2}) {
            Schedule s = generate_schedule(handcrafted, stage_rank, m);
            s.name = name;
            consider(std::move(s));
        }
    }
    if (best_s == kNotYet) {
        throw ScheduleError(name + " found no schedule within the memory limits");
    }
    return best;
}

}  // namespace pipewright
