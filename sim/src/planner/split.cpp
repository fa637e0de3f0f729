// The split DP: for a fixed sequence of devices, the contiguous split of the
// layers into one stage per device that minimises the slowest stage, with
// every stage within its device's memory. See docs/planner.md.
//
// A bottleneck T is feasible when prefix i of the layers can end stage k for
// some reachable end a of stage k-1 with [a, i) fitting stage k. For a fixed i
// both conditions select a suffix of candidate a's, or a condition on a key of
// a alone:
//   time:   S(i) - S(a) + send(i-1) <= T   <=>  S(a) >= S(i) + send(i-1) - T
//   memory: per_param * (P(i) - P(a)) + full * (St(i) - St(a))
//           + weight_only * (W(i) - W(a)) <= capacity
//           <=>  key(a) <= capacity - per_param * P(i) - full * St(i) - weight_only * W(i)
// with key(a) = -per_param * P(a) - full * St(a) - weight_only * W(a). Under
// checkpointing each unit of recomputation keeps its input
// (core/recomputation_units.h; the stage's first layer begins one), which
// replaces full * St; a split backward's I recomputes one micro-batch's
// whole stage, adding St(i) - St(a) once, but a whole backward recomputes
// one unit at a time, adding the largest unit's stash in [a, i), which no
// key of a alone holds: it shrinks as a grows, so an a dropped from the
// stack below stays dominated, and the stack's suffix is scanned. S is
// non-decreasing, so the time condition is a suffix of a; a stack of
// reachable a's with increasing keys answers "smallest key in the suffix"
// by binary search. The check is exact, so bisection on T (snapping to the
// bottleneck actually reached) finds the optimum.

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "pipewright/core/recomputation_units.h"
#include "planner/internal.h"

namespace pipewright::planner {

namespace {

std::size_t at(int i) {
    return static_cast<std::size_t>(i);
}

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// Under checkpointing, the micro-batches whose backward recomputes
// activations (one micro-batch at a time).
double recomputed(const Slot& slot) {
    return slot.full > 0 ? 1.0 : 0.0;
}

// Whether the memory of a stage has a term no key of its start holds (see
// above): the largest unit a whole backward rebuilds.
bool unit_by_unit(const SplitProblem& problem) {
    return problem.checkpointing && !problem.split_backward;
}

class Checker {
  public:
    explicit Checker(const SplitProblem& problem)
        : problem_(problem),
          table_(*problem.table),
          layers_(table_.layers),
          stages_(static_cast<int>(problem.slots.size())) {}

    // Whether every stage can take at most `bound` seconds with every
    // capacity scaled by `scale`; on success `first` holds such a split.
    bool feasible(double bound, double scale, std::vector<int>& first) {
        if (stages_ < 1 || stages_ > layers_) {
            return false;
        }
        const bool timed = bound < kInfinity;
        need_.assign(at(stages_), 0);
        // The last stages can absorb at most what their compute allows
        // (sending costs >= 0, memory ignored), which bounds every stage end
        // from below; greedy from the back finds that bound exactly.
        int end = layers_;
        need_[at(stages_ - 1)] = layers_;
        for (int k = stages_ - 1; k >= 1; --k) {
            int start = k;  // stages before k need a layer each
            if (timed) {
                const auto& s = table_.time[at(slot(k).cls)];
                const auto it = std::lower_bound(s.begin(), s.begin() + end, s[at(end)] - bound);
                const int earliest = static_cast<int>(it - s.begin());
                if (earliest >= end && end == layers_) {
                    return false;  // the last layer alone is slower than the bound
                }
                // Otherwise `end` only bounds stage k's end from below: where
                // its last layer alone is too slow on this device, stage k
                // ends later, and that layer goes to an earlier stage, maybe
                // on a faster device.
                start = std::max(start, earliest);
            }
            need_[at(k - 1)] = start;
            end = start;
        }

        lo_.assign(at(stages_), 0);
        parent_.resize(at(stages_));
        int prev_lo = 0;
        int prev_hi = 0;
        for (int k = 0; k < stages_; ++k) {
            const Slot& sl = slot(k);
            const auto& s = table_.time[at(sl.cls)];
            const bool last = k == stages_ - 1;
            int lo = std::max(need_[at(k)], prev_lo + 1);
            int hi = layers_ - (stages_ - 1 - k);
            if (timed) {
                const auto it =
                    std::upper_bound(s.begin() + prev_hi, s.end(), s[at(prev_hi)] + bound);
                hi = std::min(hi, static_cast<int>(it - s.begin()) - 1);
            }
            if (last) {
                lo = std::max(lo, layers_);
            }
            if (lo > hi) {
                return false;
            }
            auto& parent = parent_[at(k)];
            parent.assign(at(hi - lo + 1), -1);
            lo_[at(k)] = lo;
            stack_.clear();
            const double cap = sl.capacity * scale;
            int next_push = prev_lo;
            int new_lo = -1;
            int new_hi = -1;
            for (int i = lo; i <= hi; ++i) {
                for (; next_push <= std::min(i - 1, prev_hi); ++next_push) {
                    if (reachable(k - 1, next_push)) {
                        push(next_push, key(sl, next_push));
                    }
                }
                if (stack_.empty()) {
                    continue;
                }
                int first_ok = prev_lo;
                if (timed) {
                    const double send = last ? 0.0 : sl.next.send_seconds(table_, i - 1);
                    const double threshold = s[at(i)] + send - bound;
                    first_ok = static_cast<int>(
                        std::lower_bound(s.begin() + prev_lo, s.begin() + i, threshold) -
                        s.begin());
                }
                const auto pos =
                    std::lower_bound(stack_.begin(), stack_.end(), first_ok,
                                     [](const Entry& e, int index) { return e.index < index; });
                if (pos == stack_.end()) {
                    continue;
                }
                int start = pos->index;
                const double room = rhs(sl, cap, i);
                if (unit_by_unit(problem_)) {
                    // Later entries have larger keys and rebuild less.
                    start = -1;
                    for (auto e = pos; e != stack_.end() && start < 0; ++e) {
                        if (e->key + recomputed(sl) * table_.largest_unit(e->index, i) <= room) {
                            start = e->index;
                        }
                    }
                    if (start < 0) {
                        continue;
                    }
                } else if (pos->key > room) {
                    continue;
                }
                parent[at(i - lo)] = start;
                new_lo = new_lo < 0 ? i : new_lo;
                new_hi = i;
            }
            if (new_lo < 0) {
                return false;
            }
            prev_lo = new_lo;
            prev_hi = new_hi;
        }
        first.assign(at(stages_ + 1), 0);
        first[at(stages_)] = layers_;
        int i = layers_;
        for (int k = stages_ - 1; k >= 0; --k) {
            i = parent_[at(k)][at(i - lo_[at(k)])];
            first[at(k)] = i;
        }
        return true;
    }

  private:
    struct Entry {
        int index;
        double key;
    };

    [[nodiscard]] const Slot& slot(int k) const { return problem_.slots[at(k)]; }

    [[nodiscard]] bool reachable(int k, int i) const {
        if (k < 0) {
            return i == 0;
        }
        const int offset = i - lo_[at(k)];
        const auto& parent = parent_[at(k)];
        return offset >= 0 && at(offset) < parent.size() && parent[at(offset)] >= 0;
    }

    [[nodiscard]] double key(const Slot& sl, int a) const {
        const double base = -problem_.bytes_per_param * table_.params[at(a)] -
                            sl.weight_only * table_.weight_stash[at(a)];
        if (!problem_.checkpointing) {
            return base - sl.full * table_.stash[at(a)];
        }
        const double kept = sl.full * (table_.takes[at(a)] - table_.unit_kept[at(a) + 1]);
        return base + kept - (problem_.split_backward ? recomputed(sl) * table_.stash[at(a)] : 0);
    }

    [[nodiscard]] double rhs(const Slot& sl, double cap, int i) const {
        // Only a split of one stage has a stage of every layer (static_bytes).
        const double both_ends = stages_ == 1 && i == layers_ ? table_.tied_params : 0;
        const double base = cap - problem_.bytes_per_param * (table_.params[at(i)] - both_ends) -
                            sl.weight_only * table_.weight_stash[at(i)] -
                            (i == layers_ ? sl.full * table_.loss_stash : 0);
        if (!problem_.checkpointing) {
            return base - sl.full * table_.stash[at(i)];
        }
        return base - sl.full * table_.unit_kept[at(i)] -
               (problem_.split_backward ? recomputed(sl) * table_.stash[at(i)] : 0);
    }

    // Keeps keys increasing from bottom to top: an older a with a larger key
    // is never better than a newer one, which is in every suffix the older is.
    void push(int index, double k) {
        while (!stack_.empty() && stack_.back().key >= k) {
            stack_.pop_back();
        }
        stack_.push_back({index, k});
    }

    const SplitProblem& problem_;
    const LayerTable& table_;
    int layers_;
    int stages_;
    std::vector<int> need_;
    std::vector<int> lo_;
    std::vector<std::vector<int>> parent_;
    std::vector<Entry> stack_;
};

double bottleneck_of(const SplitProblem& problem, const std::vector<int>& first) {
    double worst = 0;
    for (std::size_t k = 0; k + 1 < first.size(); ++k) {
        worst = std::max(worst, stage_time(problem, k, first[k], first[k + 1]));
    }
    return worst;
}

double ratio_of(const SplitProblem& problem, const std::vector<int>& first) {
    double worst = 0;
    for (std::size_t k = 0; k + 1 < first.size(); ++k) {
        const double need = stage_memory(problem, k, first[k], first[k + 1]);
        const double cap = problem.slots[k].capacity;
        worst = std::max(worst, cap > 0 ? need / cap : (need > 0 ? kInfinity : 0.0));
    }
    return worst;
}

// Relative width at which bisection stops: far below any difference a user
// or the simulator could see, far above rounding of the prefix sums.
constexpr double kTolerance = 1e-9;
constexpr int kMaxRounds = 200;

// Bisects a bound in [lo, hi] that `try_bound` checks exactly, leaving the
// split it found in `first`; `value` measures that split. The interval at
// least halves every round, whatever rounding does to the value reached,
// and the best split seen is kept in `best` and `best_first`.
template <class Try, class Value>
void bisect(double lo, double hi, const Try& try_bound, const Value& value,
            const std::vector<int>& first, double& best, std::vector<int>& best_first) {
    for (int round = 0; round < kMaxRounds && hi - lo > kTolerance * hi; ++round) {
        const double mid = lo + (hi - lo) / 2;
        if (try_bound(mid)) {
            const double reached = value(first);
            if (reached < best) {
                best = reached;
                best_first = first;
            }
            hi = std::min(mid, reached);
        } else {
            lo = mid;
        }
    }
}

}  // namespace

double static_bytes(const SplitProblem& problem, int a, int i) {
    const LayerTable& t = *problem.table;
    const double both_ends = a == 0 && i == t.layers ? t.tied_params : 0;
    return problem.bytes_per_param * (t.params[at(i)] - t.params[at(a)] - both_ends);
}

double stage_time(const SplitProblem& problem, std::size_t k, int a, int i) {
    const LayerTable& t = *problem.table;
    const Slot& sl = problem.slots[k];
    const auto& s = t.time[at(sl.cls)];
    double seconds = s[at(i)] - s[at(a)];
    if (k + 1 < problem.slots.size()) {
        seconds += sl.next.send_seconds(t, i - 1);
    }
    return seconds;
}

void LayerTable::index_units(std::span<const LayerSpec> model_layers) {
    unit_of.assign(at(layers), 0);
    unit_kept.assign(at(layers) + 1, 0.0);
    unit_starts.clear();
    for (int l = 0; l < layers; ++l) {
        const bool begins = begins_recomputation_unit(model_layers, l);
        if (begins) {
            unit_starts.push_back(l);
        }
        unit_of[at(l)] = static_cast<int>(unit_starts.size()) - 1;
        unit_kept[at(l) + 1] = unit_kept[at(l)] + (begins ? takes[at(l)] : 0.0);
    }
    const std::size_t units = unit_starts.size();
    unit_starts.push_back(layers);
    unit_runs.assign(1, std::vector<double>(units));
    for (std::size_t u = 0; u < units; ++u) {
        unit_runs[0][u] = stash[at(unit_starts[u + 1])] - stash[at(unit_starts[u])];
    }
    for (std::size_t j = 1; (std::size_t{1} << j) <= units; ++j) {
        const std::vector<double>& shorter = unit_runs[j - 1];
        const std::size_t half = std::size_t{1} << (j - 1);
        std::vector<double> runs(units - 2 * half + 1);
        for (std::size_t u = 0; u < runs.size(); ++u) {
            runs[u] = std::max(shorter[u], shorter[u + half]);
        }
        unit_runs.push_back(std::move(runs));
    }
}

double LayerTable::kept_inputs(int a, int i) const {
    // The stage's first layer begins a unit wherever it is.
    return takes[at(a)] + unit_kept[at(i)] - unit_kept[at(a) + 1];
}

double LayerTable::largest_unit(int a, int i) const {
    const int first = unit_of[at(a)];
    const int last = unit_of[at(i - 1)];
    const int first_end = std::min(unit_starts[at(first + 1)], i);
    double largest = stash[at(first_end)] - stash[at(a)];
    if (last > first) {
        largest = std::max(largest, stash[at(i)] - stash[at(unit_starts[at(last)])]);
    }
    if (last > first + 1) {
        // The whole units between: the larger of two overlapping runs.
        const auto from = at(first + 1);
        const auto j = static_cast<std::size_t>(std::bit_width(at(last) - from)) - 1;
        largest =
            std::max({largest, unit_runs[j][from], unit_runs[j][at(last) - (std::size_t{1} << j)]});
    }
    return largest;
}

double stage_memory(const SplitProblem& problem, std::size_t k, int a, int i) {
    const LayerTable& t = *problem.table;
    const Slot& sl = problem.slots[k];
    const double stash =
        problem.checkpointing ? t.kept_inputs(a, i) : t.stash[at(i)] - t.stash[at(a)];
    const double loss = i == t.layers ? t.loss_stash : 0;
    const double rebuilt = !problem.checkpointing   ? 0
                           : problem.split_backward ? t.stash[at(i)] - t.stash[at(a)]
                                                    : t.largest_unit(a, i);
    const double transient = recomputed(sl) * rebuilt;
    return static_bytes(problem, a, i) + sl.full * (stash + loss) + transient +
           sl.weight_only * (t.weight_stash[at(i)] - t.weight_stash[at(a)]);
}

Split min_bottleneck_split(const SplitProblem& problem, int* checks) {
    Split out;
    const LayerTable& t = *problem.table;
    const int stages = static_cast<int>(problem.slots.size());
    if (stages < 1 || stages > t.layers) {
        return out;
    }
    Checker checker(problem);
    int passes = 0;
    std::vector<int> first;
    const auto try_bound = [&](double bound) {
        ++passes;
        return checker.feasible(bound, 1.0, first);
    };

    std::vector<int> classes;
    for (const auto& sl : problem.slots) {
        classes.push_back(sl.cls);
    }
    std::sort(classes.begin(), classes.end());
    classes.erase(std::unique(classes.begin(), classes.end()), classes.end());
    double fastest_total = kInfinity;
    double slowest_total = 0;
    for (int c : classes) {
        fastest_total = std::min(fastest_total, t.time[at(c)][at(t.layers)]);
        slowest_total = std::max(slowest_total, t.time[at(c)][at(t.layers)]);
    }
    double largest_layer = 0;
    double largest_output = 0;
    for (int l = 0; l < t.layers; ++l) {
        double fastest = kInfinity;
        for (int c : classes) {
            fastest = std::min(fastest, t.time[at(c)][at(l + 1)] - t.time[at(c)][at(l)]);
        }
        largest_layer = std::max(largest_layer, fastest);
        largest_output = std::max(largest_output, t.output_bytes[at(l)]);
    }
    double largest_send = 0;
    for (std::size_t k = 0; k + 1 < problem.slots.size(); ++k) {
        largest_send =
            std::max(largest_send, problem.slots[k].next.spec.transfer_seconds(largest_output));
    }
    // No split does better than an even share of the fastest device's total
    // or than its slowest layer; every split does at least as well as
    // everything on the slowest device plus the largest send.
    const double lowest = std::max(largest_layer, fastest_total / stages);
    const double ceiling = slowest_total + largest_send;

    // Grow from the lower bound in steps that start small and square: checks
    // below the optimum fail fast, and the first that passes is close above
    // it, where the reachable windows are narrow.
    double probe = lowest > 0 ? lowest : ceiling * 1e-6;
    double step = 1.1;
    double lo = 0;
    double hi = 0;
    double best = 0;
    while (true) {
        if (try_bound(probe)) {
            best = bottleneck_of(problem, first);
            hi = std::min(probe, best);
            out.first = first;
            break;
        }
        if (!(probe < ceiling)) {
            if (checks != nullptr) {
                *checks += passes;
            }
            return out;  // no split fits in memory, however slow
        }
        lo = probe;
        probe = std::min(probe * step, ceiling);
        step *= step;
    }
    bisect(
        lo, hi, try_bound, [&](const std::vector<int>& f) { return bottleneck_of(problem, f); },
        first, best, out.first);
    if (checks != nullptr) {
        *checks += passes;
    }
    out.feasible = true;
    out.value = best;
    return out;
}

double relaxed_bottleneck(const LayerTable& table, int stages, std::span<const double> sends,
                          double tolerance) {
    const auto& s = table.min_prefix;
    const int layers = table.layers;
    if (stages < 1 || layers < 1) {
        return 0;
    }
    // Empty stages are allowed: that only relaxes further.
    const auto fits = [&](double bound) {
        int pos = 0;
        for (int k = 0; k < stages && pos < layers; ++k) {
            const double budget = bound - (k + 1 < stages ? sends[at(k)] : 0.0);
            const auto it = std::upper_bound(s.begin() + pos, s.end(), s[at(pos)] + budget);
            pos = std::max(pos, static_cast<int>(it - s.begin()) - 1);
        }
        return pos >= layers;
    };
    double largest_send = 0;
    for (int k = 0; k + 1 < stages; ++k) {
        largest_send = std::max(largest_send, sends[at(k)]);
    }
    double lo = std::max(table.min_largest, s[at(layers)] / stages);
    double hi = s[at(layers)] + largest_send;
    if (fits(lo)) {
        return lo;
    }
    while (hi - lo > tolerance * hi) {
        const double mid = lo + (hi - lo) / 2;
        (fits(mid) ? hi : lo) = mid;
    }
    return lo;  // infeasible, so a lower bound
}

Split min_memory_ratio_split(const SplitProblem& problem) {
    Split out;
    const int stages = static_cast<int>(problem.slots.size());
    const int layers = problem.table->layers;
    if (stages < 1 || stages > layers) {
        return out;
    }
    // Equal layer counts give a split, and so an upper bound.
    std::vector<int> first(static_cast<std::size_t>(stages) + 1);
    for (int k = 0; k <= stages; ++k) {
        first[at(k)] = static_cast<int>(static_cast<long long>(layers) * k / stages);
    }
    double hi = ratio_of(problem, first);
    out.first = first;
    if (!(hi < kInfinity)) {
        return out;
    }
    Checker checker(problem);
    double lo = 0;
    double best = hi;
    bisect(
        lo, hi, [&](double ratio) { return checker.feasible(kInfinity, ratio, first); },
        [&](const std::vector<int>& f) { return ratio_of(problem, f); }, first, best, out.first);
    out.feasible = true;
    out.value = best;
    return out;
}

}  // namespace pipewright::planner
