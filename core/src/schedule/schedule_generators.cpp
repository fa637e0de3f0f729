#include "pipewright/core/schedule_generators.h"

#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>

#include "pipewright/core/zero_bubble_auto.h"
#include "schedule/schedule_layout.h"
#include "schedule/v_shape_generators.h"
#include "schedule/zero_bubble_generators.h"

namespace pipewright {

namespace {

using detail::act;
using detail::devices_words;
using detail::idx;
using detail::Layout;
using detail::microbatches_words;

Schedule make_naive(std::string_view name, const std::vector<int>& stage_rank,
                    const Layout& layout) {
    if (layout.microbatches != 1) {
        throw ScheduleError("naive model parallelism runs the whole batch as one piece, but " +
                            microbatches_words(layout.microbatches) +
                            " were requested; set microbatches to 1 or choose gpipe");
    }
    Schedule s = detail::empty_schedule(name, stage_rank, layout);
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

// Every micro-batch through each local stage in turn, forwards in stage
// order and backwards in reverse stage order, the micro-batches of a
// backward in forward order or, with `latest_first`, reversed. Either order
// respects every dependency whatever the placement.
Schedule breadth_first(std::string_view name, const std::vector<int>& stage_rank,
                       const Layout& layout, bool latest_first) {
    Schedule s = detail::empty_schedule(name, stage_rank, layout);
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
            for (int k = 0; k < m; ++k) {
                out.push_back(act(*it, ActionType::backward, latest_first ? m - 1 - k : k));
            }
        }
    }
    return s;
}

// GPipe accepts any stage-to-device mapping, since its order does.
Schedule make_gpipe(std::string_view name, const std::vector<int>& stage_rank,
                    const Layout& layout) {
    return breadth_first(name, stage_rank, layout, false);
}

// torch's ScheduleLoopedBFS (Lamy-Poirier's breadth-first pipeline): each
// device runs every micro-batch through its first stage, then through its
// next, and walks back the same way, latest micro-batch first. Any placement
// would do for the order; the looped one is what torch runs and what lets
// the stages of one device share the work evenly.
Schedule make_looped_bfs(std::string_view name, const std::vector<int>& stage_rank,
                         const Layout& layout) {
    (void)detail::require_looped_placement(name, stage_rank, layout, 1, "gpipe");
    return breadth_first(name, stage_rank, layout, true);
}

Schedule make_1f1b(std::string_view name, const std::vector<int>& stage_rank,
                   const Layout& layout) {
    detail::require_one_stage_per_device(name, stage_rank, layout, "interleaved-1f1b");
    detail::require_microbatches_at_least_stages(name, layout);
    Schedule s = detail::empty_schedule(name, stage_rank, layout);
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
    const int v = detail::require_looped_placement(name, stage_rank, layout, 2, "1f1b");
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
    Schedule s = detail::empty_schedule(name, stage_rank, layout);
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

}  // namespace

namespace {

struct KindName {
    ScheduleKind kind;
    std::string_view name;
};

// The one mapping between kinds and the names files and users write.
constexpr KindName kKindNames[] = {
    {ScheduleKind::naive, "naive"},
    {ScheduleKind::gpipe, "gpipe"},
    {ScheduleKind::looped_bfs, "looped-bfs"},
    {ScheduleKind::one_f_one_b, "1f1b"},
    {ScheduleKind::interleaved_1f1b, "interleaved-1f1b"},
    {ScheduleKind::zb_h1, "zb-h1"},
    {ScheduleKind::zb_h2, "zb-h2"},
    {ScheduleKind::interleaved_zb, "interleaved-zb"},
    {ScheduleKind::zbv, "zbv"},
    {ScheduleKind::dualpipev, "dualpipev"},
    {ScheduleKind::zb_auto, "zb-auto"},
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
        info(ScheduleKind::looped_bfs,
             "Looped BFS: every micro-batch through each local stage in turn (breadth-first)",
             "the same number of stages on every device, stage s on device s mod devices", false,
             true, true),
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
        info(ScheduleKind::zb_h2,
             "Zero Bubble H2: more warm-up forwards fill the bubble (about twice ZB-H1's "
             "activations)",
             "microbatches >= stages; one stage per device, stage s on device s", true, false,
             true),
        info(ScheduleKind::interleaved_zb,
             "Interleaved zero bubble: interleaved 1F1B with the backward split",
             "at least 2 stages per device, stage s on device s mod devices; microbatches >= "
             "devices, in rounds of equal size",
             true, true, true),
        info(ScheduleKind::zbv, "ZB-V: zero bubble over a V (two stages per device, down and back)",
             "exactly 2 stages per device, stage s and stage 2p-1-s on device s (p devices)", true,
             true, true),
        info(ScheduleKind::dualpipev,
             "DualPipeV: DeepSeek's DualPipe folded into a V, each forward overlapped with the "
             "other stage's backward",
             "exactly 2 stages per device, stage s and stage 2p-1-s on device s (p devices); "
             "microbatches >= stages",
             true, true, true),
        info(ScheduleKind::zb_auto,
             "Automatic zero bubble: built for the project's F, I, W and transfer times under "
             "each device's memory",
             "one stage per device, stage s on device s; any number of microbatches", true, false,
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
    const Layout layout = detail::check_layout(name, stage_rank, microbatches);
    switch (kind) {
        case ScheduleKind::naive:
            return make_naive(name, stage_rank, layout);
        case ScheduleKind::gpipe:
            return make_gpipe(name, stage_rank, layout);
        case ScheduleKind::looped_bfs:
            return make_looped_bfs(name, stage_rank, layout);
        case ScheduleKind::one_f_one_b:
            return make_1f1b(name, stage_rank, layout);
        case ScheduleKind::interleaved_1f1b:
            return make_interleaved(name, stage_rank, layout);
        case ScheduleKind::zb_h1:
            return detail::make_zb_h1(name, stage_rank, layout);
        case ScheduleKind::zb_h2:
            return detail::make_zb_h2(name, stage_rank, layout);
        case ScheduleKind::interleaved_zb:
            return detail::make_interleaved_zb(name, stage_rank, layout);
        case ScheduleKind::zbv:
            return detail::make_zbv(name, stage_rank, layout);
        case ScheduleKind::dualpipev:
            return detail::make_dualpipev(name, stage_rank, layout);
        case ScheduleKind::zb_auto:
            // Without a cost model: unit costs (generate_zb_auto with the
            // project's costs is what the simulator and the runs use).
            return generate_zb_auto(stage_rank, microbatches, unit_auto_costs(layout.stages));
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
