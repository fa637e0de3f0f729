// Why nothing fits in memory, and what would help: the planner's message
// when no split of the model fits the cluster.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "planner/internal.h"

namespace pipewright {

namespace {

std::size_t at(int i) {
    return static_cast<std::size_t>(i);
}

// "41.3 GiB", "812 MiB": enough digits to compare a need with a capacity.
std::string gib(double bytes) {
    const char* unit = "GiB";
    double value = bytes / (1024.0 * 1024.0 * 1024.0);
    if (value < 1) {
        unit = "MiB";
        value *= 1024;
    }
    if (value < 1) {
        unit = "KiB";
        value *= 1024;
    }
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, value >= 100 ? "%.0f %s" : "%.1f %s", value, unit);
    return buffer;
}

std::string times(double ratio) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.2f×", ratio);
    return buffer;
}

}  // namespace

namespace planner {

namespace {

// The split of `p` stages under rule `r` that needs the least of every
// device's capacity, over the orders the DP sees.
std::pair<Split, SplitProblem> lightest(Context& context, MemoryRule r, const LayerTable& t, int p,
                                        bool checkpointing) {
    std::pair<Split, SplitProblem> best{Split{}, SplitProblem{}};
    for (int o : context.distinct_orders(p)) {
        SplitProblem problem = context.problem(t, at(o), p, r);
        problem.checkpointing = checkpointing;
        Split split = min_memory_ratio_split(problem);
        if (split.feasible && (!best.first.feasible || split.value < best.first.value)) {
            best = {std::move(split), std::move(problem)};
        }
    }
    return best;
}

std::string verdict(double ratio) {
    return ratio <= 1 ? "fits (" + times(ratio) + " the capacity)"
                      : "still needs " + times(ratio) + " the capacity";
}

// What the training settings could do: checkpointing, 1F1B, smaller
// micro-batches, each with what it would need.
std::vector<std::string> schedule_fixes(Context& context, MemoryRule rule, const LayerTable& table,
                                        int stages) {
    std::vector<std::string> fixes;
    const int m = table.microbatches;
    if (!context.checkpointing()) {
        const auto with = lightest(context, rule, table, stages, true);
        if (with.first.feasible) {
            fixes.push_back("activation checkpointing (training.activation_checkpointing): " +
                            verdict(with.first.value));
        }
    }
    if (rule == MemoryRule::gpipe && context.batch() >= stages) {
        const auto& small = context.table(context.batch());
        const auto with =
            lightest(context, MemoryRule::one_f_one_b, small, stages, context.checkpointing());
        if (with.first.feasible) {
            fixes.push_back("1f1b with " + std::to_string(context.batch()) +
                            " micro-batches (at most " + std::to_string(stages) +
                            " in flight, not all of them): " + verdict(with.first.value));
        }
    } else if (m < context.batch() && rule != MemoryRule::gpipe) {
        const auto& small = context.table(context.batch());
        const auto with = lightest(context, rule, small, stages, context.checkpointing());
        if (with.first.feasible) {
            fixes.push_back("smaller micro-batches (" + std::to_string(context.batch()) +
                            " of 1 sample): " + verdict(with.first.value));
        }
    }
    return fixes;
}

// What other devices could do: nothing when one layer outweighs the
// largest device (layers cannot be split), else how many it would take.
std::vector<std::string> device_fixes(Context& context, const SplitProblem& problem,
                                      double activations) {
    std::vector<std::string> fixes;
    const LayerTable& table = *problem.table;
    const auto& cluster = context.cluster();
    const int most = std::min(context.devices(), context.layers());
    double largest_capacity = 0;
    std::string largest_spec;
    for (const auto& spec_k : cluster.specs) {
        if (static_cast<double>(spec_k.memory_bytes) > largest_capacity) {
            largest_capacity = static_cast<double>(spec_k.memory_bytes);
            largest_spec = spec_k.name;
        }
    }
    int heaviest = 0;
    for (int l = 0; l < table.layers; ++l) {
        if (static_bytes(problem, l, l + 1) > static_bytes(problem, heaviest, heaviest + 1)) {
            heaviest = l;
        }
    }
    const double heaviest_bytes = static_bytes(problem, heaviest, heaviest + 1);
    const double total_static = static_bytes(problem, 0, table.layers);
    if (heaviest_bytes > largest_capacity) {
        fixes.push_back("nothing with these devices: layer \"" +
                        context.base().project.model.layers[at(heaviest)].name + "\" alone needs " +
                        gib(heaviest_bytes) +
                        " for weights, gradients and optimizer state, more than the largest "
                        "device (" +
                        gib(largest_capacity) +
                        "); use larger devices, lower precision or a lighter optimizer");
    } else if (largest_capacity > activations) {
        const double devices = std::ceil(total_static / (largest_capacity - activations) - 1e-9);
        if (devices > most) {
            fixes.push_back("more devices: " + gib(total_static) +
                            " of weights, gradients and optimizer state need about " +
                            std::to_string(static_cast<long long>(devices)) + " devices like " +
                            largest_spec + " (" + gib(largest_capacity) + ") beside " +
                            gib(activations) + " of activations each; the cluster has " +
                            std::to_string(context.devices()));
        }
    }
    return fixes;
}

}  // namespace

std::string explain_infeasible(Context& context, const SearchSpec& spec) {
    const int most = std::min(context.devices(), context.layers());
    const int m = spec.microbatches.empty() ? 1 : spec.microbatches.back();
    // The lightest configuration: every device (the least weight per device),
    // the most micro-batches (the smallest ones) and the fewest in flight.
    MemoryRule rule = spec.schedule ? rule_of(*spec.schedule) : MemoryRule::one_f_one_b;
    int stages = most;
    if (rule != MemoryRule::gpipe && m < stages) {
        if (spec.schedule) {
            stages = m;
        } else {
            rule = MemoryRule::gpipe;
        }
    }
    const LayerTable& table = context.table(m);
    auto [split, problem] = lightest(context, rule, table, stages, context.checkpointing());
    if (!split.feasible) {
        return "nothing fits in memory";
    }
    std::size_t tight = 0;
    double worst = 0;
    for (std::size_t k = 0; k < problem.slots.size(); ++k) {
        const double ratio = stage_memory(problem, k, split.first[k], split.first[k + 1]) /
                             problem.slots[k].capacity;
        if (ratio > worst) {
            worst = ratio;
            tight = k;
        }
    }
    const Slot& slot = problem.slots[tight];
    const double need = stage_memory(problem, tight, split.first[tight], split.first[tight + 1]);
    const double weights = static_bytes(problem, split.first[tight], split.first[tight + 1]);
    const auto& cluster = context.cluster();
    const ScheduleKind schedule = rule == MemoryRule::gpipe
                                      ? (m == 1 ? ScheduleKind::naive : ScheduleKind::gpipe)
                                  : rule == MemoryRule::zb_h1 ? ScheduleKind::zb_h1
                                  : rule == MemoryRule::zb_h2 ? ScheduleKind::zb_h2
                                                              : ScheduleKind::one_f_one_b;
    std::string out = "nothing fits in memory. The lightest configuration (" +
                      std::string(to_string(schedule)) + ", " + std::to_string(m) + " micro-batch" +
                      (m == 1 ? "" : "es") + " of " + std::to_string(table.microbatch_size) + ", " +
                      std::to_string(stages) + " stage" + (stages == 1 ? "" : "s") + ") needs " +
                      gib(need) + " on " + cluster.devices[at(slot.device)].path + ", which has " +
                      gib(slot.capacity) + " (" + times(worst) + " its capacity):\n  " +
                      gib(weights) + " of weights, gradients and optimizer state, " +
                      gib(need - weights) + " of activations (" +
                      std::to_string(static_cast<int>(slot.full)) + " micro-batch" +
                      (slot.full == 1 ? "" : "es") + " in flight).\n";

    std::vector<std::string> fixes = schedule_fixes(context, rule, table, stages);
    for (std::string& fix : device_fixes(context, problem, need - weights)) {
        fixes.push_back(std::move(fix));
    }
    if (fixes.empty()) {
        fixes.push_back("larger devices or a smaller model");
    }
    out += "What would help:\n";
    for (const auto& fix : fixes) {
        out += "  - " + fix + "\n";
    }
    return out;
}

}  // namespace planner

}  // namespace pipewright
