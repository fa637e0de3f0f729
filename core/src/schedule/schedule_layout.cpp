#include "schedule/schedule_layout.h"

#include <algorithm>

#include "pipewright/core/schedule_generators.h"
#include "schedule/schedule_internal.h"

namespace pipewright::detail {

std::string stages_words(long long n) {
    return count_of(n, "stage", "stages");
}
std::string devices_words(long long n) {
    return count_of(n, "device", "devices");
}
std::string microbatches_words(long long n) {
    return count_of(n, "micro-batch", "micro-batches");
}

Layout check_layout(std::string_view name, const std::vector<int>& stage_rank, int m) {
    const std::string who(name);
    if (stage_rank.empty()) {
        throw ScheduleError(who + " needs at least one stage; the pipeline has none");
    }
    if (m < 1) {
        throw ScheduleError(who + " needs at least one micro-batch (got " + std::to_string(m) +
                            "); set microbatches to 1 or more");
    }
    Layout layout;
    layout.stages = static_cast<int>(stage_rank.size());
    layout.microbatches = m;
    for (int s = 0; s < layout.stages; ++s) {
        const int r = stage_rank[idx(s)];
        if (r < 0) {
            throw ScheduleError("stage " + std::to_string(s) + " is placed on device " +
                                std::to_string(r) + ", but devices are numbered from 0");
        }
        layout.ranks = std::max(layout.ranks, r + 1);
    }
    layout.local_stages.resize(idx(layout.ranks));
    for (int s = 0; s < layout.stages; ++s) {
        layout.local_stages[idx(stage_rank[idx(s)])].push_back(s);
    }
    for (int r = 0; r < layout.ranks; ++r) {
        if (layout.local_stages[idx(r)].empty()) {
            throw ScheduleError("device " + std::to_string(r) + " runs no stage, but stages use " +
                                "devices up to " + std::to_string(layout.ranks - 1) +
                                "; number the devices 0 to " + std::to_string(layout.ranks - 1) +
                                " without gaps so that every device runs a stage");
        }
    }
    return layout;
}

Schedule empty_schedule(std::string_view name, const std::vector<int>& stage_rank,
                        const Layout& layout) {
    Schedule s;
    s.name = std::string(name);
    s.num_stages = layout.stages;
    s.num_microbatches = layout.microbatches;
    s.stage_rank = stage_rank;
    s.ranks.resize(idx(layout.ranks));
    return s;
}

void require_one_stage_per_device(std::string_view name, const std::vector<int>& stage_rank,
                                  const Layout& layout, std::string_view looped_alternative) {
    const std::string who(name);
    if (layout.stages != layout.ranks) {
        throw ScheduleError(
            who + " needs each device to hold exactly one stage, but " +
            stages_words(layout.stages) + " are placed on " + devices_words(layout.ranks) +
            "; use " + std::string(looped_alternative) + " or gpipe for several stages per device");
    }
    for (int s = 0; s < layout.stages; ++s) {
        if (stage_rank[idx(s)] != s) {
            throw ScheduleError(who +
                                " needs each device to hold exactly one stage, with stage s " +
                                "on device s, but stage " + std::to_string(s) + " is on device " +
                                std::to_string(stage_rank[idx(s)]) + "; place stage " +
                                std::to_string(s) + " on device " + std::to_string(s));
        }
    }
}

void require_microbatches_at_least_stages(std::string_view name, const Layout& layout) {
    if (layout.microbatches < layout.stages) {
        throw ScheduleError(
            std::string(name) + " needs at least as many micro-batches as stages (" +
            stages_words(layout.stages) + ", " + microbatches_words(layout.microbatches) +
            "); raise microbatches to " + std::to_string(layout.stages) + " or more, or use gpipe");
    }
}

int require_looped_placement(std::string_view name, const std::vector<int>& stage_rank,
                             const Layout& layout, int fewest, std::string_view alternative) {
    const std::string who(name);
    const int p = layout.ranks;
    if (layout.stages % p != 0 || layout.stages / p < fewest) {
        std::string counts;
        for (int k = std::max(fewest, 1); k < std::max(fewest, 1) + 2; ++k) {
            counts += std::to_string(k * p) + ", ";
        }
        throw ScheduleError(who + " needs the same number of stages on every device" +
                            (fewest > 1 ? ", at least " + std::to_string(fewest) + " each" : "") +
                            ", but " + stages_words(layout.stages) + " are placed on " +
                            devices_words(p) + "; use " + counts + "... stages, or use " +
                            std::string(alternative));
    }
    for (int st = 0; st < layout.stages; ++st) {
        if (stage_rank[idx(st)] != st % p) {
            throw ScheduleError(
                who + " places the stages in a loop around the devices (stage s on " +
                "device s mod " + std::to_string(p) + "), but stage " + std::to_string(st) +
                " is on device " + std::to_string(stage_rank[idx(st)]) + "; expected device " +
                std::to_string(st % p));
        }
    }
    return layout.stages / p;
}

}  // namespace pipewright::detail
