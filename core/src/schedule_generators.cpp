#include "pipewright/core/schedule_generators.h"

#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>

#include "schedule_internal.h"

namespace pipewright {

namespace {

using detail::count_of;

std::string stages_words(long long n) {
    return count_of(n, "stage", "stages");
}
std::string devices_words(long long n) {
    return count_of(n, "device", "devices");
}
std::string microbatches_words(long long n) {
    return count_of(n, "micro-batch", "micro-batches");
}

std::size_t idx(int i) {
    return static_cast<std::size_t>(i);
}

// What every generator needs from the placement, checked once so that each
// generator only adds its own rules.
struct Layout {
    int stages = 0;
    int ranks = 0;
    int microbatches = 0;
    std::vector<std::vector<int>> local_stages;  // per rank, ascending
};

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

// 1f1b and zb-h1 assume the pipeline runs straight down the devices.
void require_one_stage_per_device(std::string_view name, const std::vector<int>& stage_rank,
                                  const Layout& layout) {
    const std::string who(name);
    if (layout.stages != layout.ranks) {
        throw ScheduleError(who + " needs each device to hold exactly one stage, but " +
                            stages_words(layout.stages) + " are placed on " +
                            devices_words(layout.ranks) +
                            "; use interleaved-1f1b or gpipe for several stages per device");
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

Action act(int stage, ActionType type, int mb) {
    return Action{stage, type, mb};
}

Schedule make_naive(std::string_view name, const std::vector<int>& stage_rank,
                    const Layout& layout) {
    if (layout.microbatches != 1) {
        throw ScheduleError("naive model parallelism runs the whole batch as one piece, but " +
                            microbatches_words(layout.microbatches) +
                            " were requested; set microbatches to 1 or choose gpipe");
    }
    Schedule s = empty_schedule(name, stage_rank, layout);
    for (int r = 0; r < layout.ranks; ++r) {
        const auto& local = layout.local_stages[idx(r)];
        auto& out = s.ranks[idx(r)];
        for (const int st : local) {
            out.push_back(act(st, ActionType::forward, 0));
        }
        for (auto it = local.rbegin(); it != local.rend(); ++it) {
            out.push_back(act(*it, ActionType::backward, 0));
        }
    }
    return s;
}

// Forwards in (stage, micro-batch) order and backwards in (reverse stage,
// micro-batch) order respect every dependency whatever the placement, which is
// why gpipe accepts any stage-to-device mapping.
Schedule make_gpipe(std::string_view name, const std::vector<int>& stage_rank,
                    const Layout& layout) {
    Schedule s = empty_schedule(name, stage_rank, layout);
    const int m = layout.microbatches;
    for (int r = 0; r < layout.ranks; ++r) {
        const auto& local = layout.local_stages[idx(r)];
        auto& out = s.ranks[idx(r)];
        out.reserve(local.size() * idx(m) * 2);
        for (const int st : local) {
            for (int mb = 0; mb < m; ++mb) {
                out.push_back(act(st, ActionType::forward, mb));
            }
        }
        for (auto it = local.rbegin(); it != local.rend(); ++it) {
            for (int mb = 0; mb < m; ++mb) {
                out.push_back(act(*it, ActionType::backward, mb));
            }
        }
    }
    return s;
}

Schedule make_1f1b(std::string_view name, const std::vector<int>& stage_rank,
                   const Layout& layout) {
    require_one_stage_per_device(name, stage_rank, layout);
    require_microbatches_at_least_stages(name, layout);
    Schedule s = empty_schedule(name, stage_rank, layout);
    const int p = layout.ranks;
    const int m = layout.microbatches;
    for (int r = 0; r < p; ++r) {
        auto& out = s.ranks[idx(r)];
        out.reserve(idx(m) * 2);
        // Later stages need fewer forwards in flight before their first
        // backward arrives: the last stage starts backward right away.
        const int warmup = std::min(p - 1 - r, m);
        for (int mb = 0; mb < warmup; ++mb) {
            out.push_back(act(r, ActionType::forward, mb));
        }
        for (int k = 0; warmup + k < m; ++k) {
            out.push_back(act(r, ActionType::forward, warmup + k));
            out.push_back(act(r, ActionType::backward, k));
        }
        for (int mb = m - warmup; mb < m; ++mb) {
            out.push_back(act(r, ActionType::backward, mb));
        }
    }
    return s;
}

Schedule make_interleaved(std::string_view name, const std::vector<int>& stage_rank,
                          const Layout& layout) {
    const std::string who(name);
    const int p = layout.ranks;
    const int m = layout.microbatches;
    if (layout.stages % p != 0 || layout.stages / p < 2) {
        throw ScheduleError(who + " needs the same number of stages on every device, at least 2 " +
                            "each, but " + stages_words(layout.stages) + " are placed on " +
                            devices_words(p) + "; use " + std::to_string(2 * p) + ", " +
                            std::to_string(3 * p) + ", ... stages, or use 1f1b");
    }
    const int v = layout.stages / p;
    for (int st = 0; st < layout.stages; ++st) {
        if (stage_rank[idx(st)] != st % p) {
            throw ScheduleError(
                who + " places the stages in a loop around the devices (stage s on " +
                "device s mod " + std::to_string(p) + "), but stage " + std::to_string(st) +
                " is on device " + std::to_string(stage_rank[idx(st)]) + "; expected device " +
                std::to_string(st % p));
        }
    }
    if (m < p || m % p != 0) {
        const int lower = std::max(p, m / p * p);
        const int upper = std::max(p, (m / p + 1) * p);
        throw ScheduleError(who + " needs the number of micro-batches to be a multiple of the " +
                            "number of devices, as in Megatron-LM (" + devices_words(p) + ", " +
                            microbatches_words(m) + "); use " +
                            (lower == upper
                                 ? std::to_string(upper)
                                 : std::to_string(lower) + " or " + std::to_string(upper)) +
                            " micro-batches");
    }
    Schedule s = empty_schedule(name, stage_rank, layout);
    const int total = m * v;  // virtual micro-batches per device
    // Megatron-LM walks groups of p micro-batches through each local chunk in
    // turn; backwards visit the chunks in reverse.
    const auto microbatch_of = [p, v](int k) { return (k / (p * v)) * p + k % p; };
    for (int r = 0; r < p; ++r) {
        const auto forward = [&](int k) {
            return act(((k / p) % v) * p + r, ActionType::forward, microbatch_of(k));
        };
        const auto backward = [&](int k) {
            return act((v - 1 - (k / p) % v) * p + r, ActionType::backward, microbatch_of(k));
        };
        auto& out = s.ranks[idx(r)];
        out.reserve(idx(total) * 2);
        const int warmup = std::min((p - r - 1) * 2 + (v - 1) * p, total);
        for (int k = 0; k < warmup; ++k) {
            out.push_back(forward(k));
        }
        for (int k = 0; warmup + k < total; ++k) {
            out.push_back(forward(warmup + k));
            out.push_back(backward(k));
        }
        for (int k = total - warmup; k < total; ++k) {
            out.push_back(backward(k));
        }
    }
    return s;
}

// Follows torch's _get_1f1b_rank_ops with enable_zero_bubble and
// num_1f1b_microbatches = rank: rank r holds back its first r weight
// gradients, which fill the bubble that 1F1B leaves before the cooldown.
Schedule make_zb_h1(std::string_view name, const std::vector<int>& stage_rank,
                    const Layout& layout) {
    require_one_stage_per_device(name, stage_rank, layout);
    require_microbatches_at_least_stages(name, layout);
    Schedule s = empty_schedule(name, stage_rank, layout);
    const int p = layout.ranks;
    const int m = layout.microbatches;
    for (int r = 0; r < p; ++r) {
        auto& out = s.ranks[idx(r)];
        out.reserve(idx(m) * 3);
        const int warmup = std::min(p - 1 - r, m);
        int next_weight = 0;
        for (int mb = 0; mb < warmup; ++mb) {
            out.push_back(act(r, ActionType::forward, mb));
        }
        for (int op = warmup; op < m + warmup; ++op) {
            if (op < m) {
                out.push_back(act(r, ActionType::forward, op));
            }
            out.push_back(act(r, ActionType::backward_input, op - warmup));
            if (op - warmup >= r) {
                out.push_back(act(r, ActionType::backward_weight, next_weight++));
            }
        }
        while (next_weight < m) {
            out.push_back(act(r, ActionType::backward_weight, next_weight++));
        }
    }
    return s;
}

}  // namespace

namespace {

struct KindName {
    ScheduleKind kind;
    std::string_view name;
};

// The one mapping between kinds and the names files and users write.
constexpr KindName kKindNames[] = {
    {ScheduleKind::naive, "naive"},      {ScheduleKind::gpipe, "gpipe"},
    {ScheduleKind::one_f_one_b, "1f1b"}, {ScheduleKind::interleaved_1f1b, "interleaved-1f1b"},
    {ScheduleKind::zb_h1, "zb-h1"},
};

ScheduleInfo info(ScheduleKind kind, std::string title, std::string constraints,
                  bool splits_backward, bool multiple_stages_per_rank, bool microbatching) {
    return {kind,
            std::string(to_string(kind)),
            std::move(title),
            std::move(constraints),
            splits_backward,
            multiple_stages_per_rank,
            microbatching};
}

}  // namespace

std::string_view to_string(ScheduleKind kind) {
    for (const auto& k : kKindNames) {
        if (k.kind == kind) {
            return k.name;
        }
    }
    return "?";
}

std::optional<ScheduleKind> schedule_kind(std::string_view name) {
    for (const auto& k : kKindNames) {
        if (k.name == name) {
            return k.kind;
        }
    }
    return std::nullopt;
}

const std::vector<ScheduleInfo>& schedule_catalog() {
    // In the order of kKindNames, which schedule_info relies on.
    static const std::vector<ScheduleInfo> catalog = {
        info(ScheduleKind::naive, "Naive model parallelism (no micro-batching)",
             "microbatches = 1; any stage placement", false, true, false),
        info(ScheduleKind::gpipe, "GPipe: all forwards, then all backwards", "any stage placement",
             false, true, true),
        info(ScheduleKind::one_f_one_b, "One forward, one backward (PipeDream-Flush)",
             "microbatches >= stages; one stage per device, stage s on device s", false, false,
             true),
        info(ScheduleKind::interleaved_1f1b, "Interleaved 1F1B with virtual stages (Megatron-LM)",
             "at least 2 stages per device, stage s on device s mod devices; microbatches a "
             "multiple of devices",
             false, true, true),
        info(ScheduleKind::zb_h1, "Zero Bubble H1: backward split into input and weight gradients",
             "microbatches >= stages; one stage per device, stage s on device s", true, false,
             true),
    };
    return catalog;
}

const ScheduleInfo* find_schedule(std::string_view name) {
    const auto kind = schedule_kind(name);
    return kind ? &schedule_info(*kind) : nullptr;
}

const ScheduleInfo& schedule_info(ScheduleKind kind) {
    return schedule_catalog()[static_cast<std::size_t>(kind)];
}

Schedule generate_schedule(ScheduleKind kind, const std::vector<int>& stage_rank,
                           int microbatches) {
    const std::string_view name = to_string(kind);
    const Layout layout = check_layout(name, stage_rank, microbatches);
    switch (kind) {
        case ScheduleKind::naive:
            return make_naive(name, stage_rank, layout);
        case ScheduleKind::gpipe:
            return make_gpipe(name, stage_rank, layout);
        case ScheduleKind::one_f_one_b:
            return make_1f1b(name, stage_rank, layout);
        case ScheduleKind::interleaved_1f1b:
            return make_interleaved(name, stage_rank, layout);
        case ScheduleKind::zb_h1:
            return make_zb_h1(name, stage_rank, layout);
    }
    throw ScheduleError("unknown schedule kind");
}

Schedule generate_schedule(std::string_view name, const std::vector<int>& stage_rank,
                           int microbatches) {
    const auto kind = schedule_kind(name);
    if (!kind) {
        std::string known;
        for (const auto& i : schedule_catalog()) {
            known += (known.empty() ? "" : ", ") + i.name;
        }
        throw ScheduleError("unknown schedule \"" + std::string(name) + "\"; choose one of " +
                            known);
    }
    return generate_schedule(*kind, stage_rank, microbatches);
}

}  // namespace pipewright
