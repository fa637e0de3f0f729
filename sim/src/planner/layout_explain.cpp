// The planner's account of a data-parallel (and tensor-parallel) choice:
// the layout chosen, the best of every other size and count, and the
// layouts of one kind of parallelism only.

#include "planner/layout_explain.h"

#include <algorithm>
#include <string>
#include <vector>

#include "pipewright/core/quantity_format.h"

namespace pipewright::planner {

namespace {

std::string zero_words(int zero) {
    return zero == 0 ? "without ZeRO" : "with ZeRO-" + std::to_string(zero);
}

// How a layout groups its replicas: context and expert parallelism.
std::string grouping_words(const DataParallelOption& o) {
    std::string out;
    if (o.context_parallel > 1) {
        out += ", " + std::to_string(o.context_parallel) + " to a sequence";
    }
    if (o.expert_parallel > 1) {
        out += ", experts over " + std::to_string(o.expert_parallel);
    }
    return out;
}

// "2 × 52 stages", with each stage's group where it has one, and how the
// replicas group unless the words before it say so.
std::string short_layout(const DataParallelOption& o, bool grouping = true) {
    return std::to_string(o.replicas) + " × " + std::to_string(o.stages) +
           (o.stages == 1 ? " stage" : " stages") +
           (o.tensor_parallel > 1 ? " × " + std::to_string(o.tensor_parallel) + " devices" : "") +
           (grouping ? grouping_words(o) : std::string());
}

// The sizes a layout fixes besides its replica count.
struct Sizes {
    int tensor = 1;
    int context = 1;
    int experts = 1;

    explicit Sizes(const DataParallelOption& o)
        : tensor(o.tensor_parallel), context(o.context_parallel), experts(o.expert_parallel) {}
    bool operator==(const Sizes&) const = default;
    [[nodiscard]] bool plain() const { return tensor == 1 && context == 1 && experts == 1; }
    [[nodiscard]] std::string words(bool context_varies, bool experts_varies) const {
        std::vector<std::string> parts;
        if (tensor > 1) {
            parts.push_back("groups of " + std::to_string(tensor));
        }
        if (context > 1) {
            parts.push_back(std::to_string(context) + " replicas to a sequence");
        }
        if (experts > 1) {
            parts.push_back("experts over " + std::to_string(experts));
        }
        if (parts.empty()) {
            // Named by the dimensions the layouts vary in.
            if (context_varies && experts_varies) {
                return "without tensor, context or expert parallelism";
            }
            return std::string("without tensor") +
                   (context_varies   ? " or context"
                    : experts_varies ? " or expert"
                                     : "") +
                   " parallelism";
        }
        std::string out = "with";
        for (std::size_t i = 0; i < parts.size(); ++i) {
            out += (i == 0 ? " " : ", ") + parts[i];
        }
        return out;
    }
};

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
    std::vector<Sizes> sizes;
    bool context_varies = false;
    bool experts_varies = false;
    for (const DataParallelOption& o : result.data_parallel) {
        context_varies = context_varies || o.context_parallel > 1;
        experts_varies = experts_varies || o.expert_parallel > 1;
    }
    for (const DataParallelOption& o : result.data_parallel) {
        if (std::find(sizes.begin(), sizes.end(), Sizes(o)) == sizes.end()) {
            sizes.emplace_back(o);
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
    for (const Sizes& t : sizes) {
        const DataParallelOption* fastest = nullptr;
        for (const DataParallelOption& o : result.data_parallel) {
            if (Sizes(o) == t && o.iteration_s &&
                (fastest == nullptr || *o.iteration_s < *fastest->iteration_s)) {
                fastest = &o;
            }
        }
        const std::string size = t.words(context_varies, experts_varies);
        if (fastest == chosen) {
            continue;
        }
        const DataParallelOption* lowest_floor = nullptr;
        for (const DataParallelOption& o : result.data_parallel) {
            if (Sizes(o) == t && o.floor_s &&
                (lowest_floor == nullptr || *o.floor_s < *lowest_floor->floor_s)) {
                lowest_floor = &o;
            }
        }
        add("best " + size + ": " +
            (fastest != nullptr        ? short_layout(*fastest, false) + " " + option_time(*fastest)
             : lowest_floor != nullptr ? option_time(*lowest_floor)
                                       : std::string("nothing fits")));
    }
    // The layouts of one kind of parallelism only.
    for (const DataParallelOption& o : result.data_parallel) {
        if (Sizes(o).plain() && o.replicas == 1 && &o != chosen) {
            add("one pipeline of single devices: " + option_time(o));
        }
    }
    const auto pure_data = std::find_if(
        result.data_parallel.begin(), result.data_parallel.end(),
        [&](const DataParallelOption& o) { return Sizes(o).plain() && o.replicas == devices; });
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
    const int c = std::max(1, result.project.context_parallel.size);
    const int e = std::max(1, result.project.expert_parallel.size);
    const DataParallelOption* chosen = nullptr;
    for (const DataParallelOption& o : result.data_parallel) {
        if (o.replicas == d && o.tensor_parallel == t && o.context_parallel == c &&
            o.expert_parallel == e && o.iteration_s) {
            chosen = &o;
        }
    }
    const int devices = static_cast<int>(project.topology.devices().size());
    const std::string others = other_layouts(result, chosen, devices, project.training.batch_size);
    std::string why = std::to_string(d) + (d == 1 ? " replica" : " replicas") + " of a " +
                      std::to_string(result.plan.stages.size()) + "-stage pipeline";
    // Each clause after the first ends with a comma before the ZeRO words.
    const auto clause = [&why](const std::string& text) { why += ", " + text; };
    if (t > 1) {
        clause("each stage on a tensor-parallel group of " + std::to_string(t) + " devices" +
               (result.project.tensor_parallel.sequence_parallel ? " (sequence parallel)" : ""));
    }
    if (c > 1) {
        clause("every sequence split over " + std::to_string(c) + " replicas");
    }
    if (e > 1) {
        clause("each block's experts split over " + std::to_string(e) + " replicas");
    }
    why += (t > 1 || c > 1 || e > 1 ? ", " : " ") +
           zero_words(result.project.data_parallel.zero_stage);
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
    if (!result.context_parallel_skipped.empty()) {
        why += "; context parallelism not planned: " + result.context_parallel_skipped.front();
    }
    if (!result.expert_parallel_skipped.empty()) {
        why += "; expert parallelism not planned: " + result.expert_parallel_skipped.front();
    }
    return why;
}

}  // namespace pipewright::planner
