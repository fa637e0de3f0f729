// The planner's account of a data-parallel (and tensor-parallel) choice:
// the layout chosen, the best of every other size and count, and the
// layouts of one kind of parallelism only.

#include "planner/layout_explain.h"

#include <algorithm>

#include "pipewright/core/quantity_format.h"

namespace pipewright::planner {

namespace {

std::string zero_words(int zero) {
    return zero == 0 ? "without ZeRO" : "with ZeRO-" + std::to_string(zero);
}

// "2 × 52 stages", with each stage's group where it has one.
std::string short_layout(const DataParallelOption& o) {
    return std::to_string(o.replicas) + " × " + std::to_string(o.stages) +
           (o.stages == 1 ? " stage" : " stages") +
           (o.tensor_parallel > 1 ? " × " + std::to_string(o.tensor_parallel) + " devices" : "");
}

std::string option_time(const DataParallelOption& o) {
    if (o.floor_s) {
        return "at least " + format_duration(*o.floor_s) + " (not planned)";
    }
    return o.iteration_s ? format_duration(*o.iteration_s)
                         : std::string("nothing fits (") + o.reason + ")";
}

// The other layouts in brief: every count at one tensor-parallel size, or
// the best of each size when several were planned, then the layouts of one
// kind of parallelism only.
std::string other_layouts(const PlanResult& result, const DataParallelOption* chosen, int devices,
                          int batch) {
    std::vector<int> sizes;
    for (const DataParallelOption& o : result.data_parallel) {
        if (std::find(sizes.begin(), sizes.end(), o.tensor_parallel) == sizes.end()) {
            sizes.push_back(o.tensor_parallel);
        }
    }
    std::string others;
    const auto add = [&](const std::string& text) {
        others += (others.empty() ? "" : "; ") + text;
    };
    if (sizes.size() == 1) {
        for (const DataParallelOption& o : result.data_parallel) {
            if (&o != chosen) {
                add(o.iteration_s ? short_layout(o) + " " + option_time(o)
                                  : std::to_string(o.replicas) + " × " + option_time(o));
            }
        }
        return others;
    }
    for (const int t : sizes) {
        const DataParallelOption* fastest = nullptr;
        for (const DataParallelOption& o : result.data_parallel) {
            if (o.tensor_parallel == t && o.iteration_s &&
                (fastest == nullptr || *o.iteration_s < *fastest->iteration_s)) {
                fastest = &o;
            }
        }
        const std::string size =
            t == 1 ? "without tensor parallelism" : "with groups of " + std::to_string(t);
        if (fastest == chosen) {
            continue;
        }
        const DataParallelOption* lowest_floor = nullptr;
        for (const DataParallelOption& o : result.data_parallel) {
            if (o.tensor_parallel == t && o.floor_s &&
                (lowest_floor == nullptr || *o.floor_s < *lowest_floor->floor_s)) {
                lowest_floor = &o;
            }
        }
        add("best " + size + ": " +
            (fastest != nullptr        ? short_layout(*fastest) + " " + option_time(*fastest)
             : lowest_floor != nullptr ? option_time(*lowest_floor)
                                       : std::string("nothing fits")));
    }
    // The layouts of one kind of parallelism only.
    for (const DataParallelOption& o : result.data_parallel) {
        if (o.tensor_parallel == 1 && o.replicas == 1 && &o != chosen) {
            add("one pipeline of single devices: " + option_time(o));
        }
    }
    const auto pure_data = std::find_if(result.data_parallel.begin(), result.data_parallel.end(),
                                        [&](const DataParallelOption& o) {
                                            return o.tensor_parallel == 1 && o.replicas == devices;
                                        });
    if (pure_data != result.data_parallel.end()) {
        if (&*pure_data != chosen) {
            add("data parallelism alone (" + std::to_string(devices) +
                " replicas): " + option_time(*pure_data));
        }
    } else if (batch % devices != 0) {
        add("data parallelism alone: the batch of " + std::to_string(batch) +
            " does not split over " + std::to_string(devices) + " replicas");
    }
    return others;
}

}  // namespace

std::string explain_layout_choice(const PlanResult& result, const Project& project) {
    const int d = result.project.data_parallel.size;
    const int t = std::max(1, result.project.tensor_parallel.size);
    const DataParallelOption* chosen = nullptr;
    for (const DataParallelOption& o : result.data_parallel) {
        if (o.replicas == d && o.tensor_parallel == t && o.iteration_s) {
            chosen = &o;
        }
    }
    const int devices = static_cast<int>(project.topology.devices().size());
    const std::string others = other_layouts(result, chosen, devices, project.training.batch_size);
    std::string why = std::to_string(d) + (d == 1 ? " replica" : " replicas") + " of a " +
                      std::to_string(result.plan.stages.size()) + "-stage pipeline";
    if (t > 1) {
        why += ", each stage on a tensor-parallel group of " + std::to_string(t) + " devices" +
               (result.project.tensor_parallel.sequence_parallel ? " (sequence parallel)" : "") +
               ",";
    }
    why += " " + zero_words(result.project.data_parallel.zero_stage);
    if (chosen != nullptr && d > 1) {
        why += ", " + chosen->layout;
    }
    why += ": " + format_duration(result.plan.report->iteration_time_s) + " per iteration";
    if (!others.empty()) {
        why += " (the fastest that fits; " + others + ")";
    }
    const bool given_checkpointing = project.training.full_recompute();
    if (chosen != nullptr && chosen->activation_checkpointing != given_checkpointing) {
        why += chosen->activation_checkpointing
                   ? "; with activation checkpointing, which the project does not use: "
                     "the memory it frees is worth the recomputed forward"
                   : "; without the project's activation checkpointing: it fits without "
                     "recomputing the forward";
    }
    if (chosen != nullptr && d > 1) {
        std::string zeros;
        for (int z = 0; z <= kMaxZeroStage; ++z) {
            if (z == chosen->zero_stage) {
                continue;
            }
            const auto& time = chosen->by_zero_stage[static_cast<std::size_t>(z)];
            zeros += (zeros.empty() ? "" : ", ") + std::string("ZeRO-") + std::to_string(z) +
                     (time ? " " + format_duration(*time) : std::string(" does not fit"));
        }
        why += "; at " + std::to_string(d) + " replicas " + zeros;
    }
    if (!result.tensor_parallel_skipped.empty()) {
        why += "; tensor parallelism not planned: " + result.tensor_parallel_skipped.front();
    }
    return why;
}

}  // namespace pipewright::planner
