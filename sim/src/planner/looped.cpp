// Looped placements for interleaved 1F1B, interleaved zero bubble and looped
// BFS: the device sequence of a kept candidate carries v stages per device
// (stage s on device s mod p), which divides the pipeline bubble by v at the
// price of v times as many transfers; and ZB-V's V, two stages per device
// down the sequence and back. See docs/planner.md, section 4.

#include <algorithm>
#include <limits>
#include <set>
#include <tuple>

#include "planner/internal.h"

namespace pipewright::planner {

namespace {

std::size_t at(int i) {
    return static_cast<std::size_t>(i);
}

// Chunk-micro-batches whose activations chunk `chunk` of rank `rank` holds at
// the end of Megatron-LM's warm-up (the interleaved generator's order: groups
// of p forwards visit the chunks in turn), plus the steady state's first
// forward: the peak of that chunk, within one micro-batch.
int interleaved_in_flight(int rank, int chunk, int devices, int chunks, int microbatches) {
    const int total = microbatches * chunks;
    const int warmup = std::min((devices - rank - 1) * 2 + (chunks - 1) * devices, total);
    int held = 0;
    for (int k = 0; k <= std::min(warmup, total - 1); ++k) {
        if ((k / devices) % chunks == chunk) {
            ++held;
        }
    }
    return std::clamp(held, 1, microbatches);
}

// ZB-V and DualPipeV: two stages per device, down the devices and back.
bool v_shaped(ScheduleKind schedule) {
    return schedule == ScheduleKind::zbv || schedule == ScheduleKind::dualpipev;
}

// Whether `schedule` runs m micro-batches on p devices (the generators'
// rules: interleaved 1F1B a multiple of p, interleaved zero bubble rounds of
// equal size, looped BFS any count).
bool accepts(ScheduleKind schedule, int m, int p) {
    switch (schedule) {
        case ScheduleKind::looped_bfs:
        case ScheduleKind::zbv:  // fewer than 2p - 1 leave a bubble, not an error
            return m >= 1;
        case ScheduleKind::dualpipev:
            return m >= 2 * p;
        case ScheduleKind::interleaved_zb:
            return m >= p && m % std::max(1, m / p) == 0;
        default:
            return m >= p && m % p == 0;
    }
}

// Stage k's device among the first p of a looped order: around the loop, or
// down and back for ZB-V's V.
int slot_rank(ScheduleKind schedule, int k, int p) {
    if (v_shaped(schedule)) {
        return k < p ? k : 2 * p - 1 - k;
    }
    return k % p;
}

}  // namespace

bool is_looped(ScheduleKind schedule) {
    return schedule == ScheduleKind::interleaved_1f1b || schedule == ScheduleKind::interleaved_zb ||
           schedule == ScheduleKind::looped_bfs || v_shaped(schedule);
}

// A looped schedule needs p >= 2 devices, two layers per device at least (two
// stages each) and a micro-batch count it accepts.
void check_looped_possible(const Context& context, const std::vector<int>& microbatches,
                           ScheduleKind schedule) {
    const int most = std::min(context.devices(), context.layers() / 2);
    for (int p = 2; p <= most; ++p) {
        for (int m : microbatches) {
            if (accepts(schedule, m, p)) {
                return;
            }
        }
    }
    std::string why;
    if (context.devices() < 2) {
        why = "the cluster has one device";
    } else if (context.layers() < 4) {
        why = "the model has " + std::to_string(context.layers()) +
              " layers, and two stages on each of two devices take at least 4";
    } else {
        why = std::string(schedule == ScheduleKind::interleaved_1f1b
                              ? "no allowed micro-batch count is a multiple of a device count"
                              : "no allowed micro-batch count suits a device count") +
              " from 2 to " + std::to_string(most) + " (the batch is " +
              std::to_string(context.batch()) + " samples)";
    }
    const std::string counts = schedule == ScheduleKind::interleaved_1f1b
                                   ? ", with a multiple of the device count as micro-batches"
                               : schedule == ScheduleKind::interleaved_zb
                                   ? ", with at least as many micro-batches as devices, in "
                                     "rounds of equal size"
                               : schedule == ScheduleKind::dualpipev
                                   ? ", with at least twice as many micro-batches as devices"
                                   : "";
    const std::string shape = v_shaped(schedule)
                                  ? " places two stages on each of at least two devices, in a V"
                                  : " loops at least two stages over each of at least two devices";
    throw InputError("--schedule",
                     std::string(to_string(schedule)) + shape + counts + "; here " + why);
}

SplitProblem Context::looped_problem(const LayerTable& table, std::size_t order, int devices,
                                     int chunks, ScheduleKind schedule) const {
    SplitProblem p;
    p.table = &table;
    p.checkpointing = checkpointing_;
    p.split_backward = schedule_info(schedule).splits_backward;
    p.bytes_per_param = bytes_per_param_;
    const int stages = devices * chunks;
    for (int k = 0; k < stages; ++k) {
        Slot slot;
        const int rank = slot_rank(schedule, k, devices);
        slot.device = orders_[order][at(rank)];
        slot.cls = cluster_.device_class[at(slot.device)];
        // The DP bounds each stage alone; a device's chunks share its memory,
        // so each gets an equal share here and the simulator checks the sum.
        slot.capacity = static_cast<double>(cluster_.specs[at(slot.device)].memory_bytes) / chunks;
        const int next_rank = slot_rank(schedule, k + 1, devices);
        if (k + 1 < stages && next_rank != rank) {
            slot.next = link(slot.device, orders_[order][at(next_rank)]);
        } else if (k + 1 < stages) {
            slot.next = {LinkSpec{std::numeric_limits<double>::infinity(), 0}};  // the V's turn
        }
        // Looped BFS runs every forward before any backward, as GPipe; the
        // interleaved zero-bubble warm-up is no longer than interleaved 1F1B's.
        // ZB-V's warm-up leaves 2p - r micro-batches on the way down and
        // r + 1 on the way back in flight on device r.
        const int m = table.microbatches;
        if (schedule == ScheduleKind::looped_bfs) {
            slot.full = m;
        } else if (v_shaped(schedule)) {
            // DualPipeV's warm-up fills the V as ZB-V's does.
            slot.full = std::min(k < devices ? 2 * devices - rank : rank + 1, m);
        } else {
            slot.full = interleaved_in_flight(rank, k / devices, devices, chunks, m);
        }
        p.slots.push_back(slot);
    }
    return p;
}

std::vector<LoopedCandidate> search_looped(Context& context, const std::vector<Candidate>& seeds,
                                           const std::vector<int>& allowed_microbatches,
                                           std::size_t keep, ScheduleKind schedule,
                                           PlanStatistics& statistics) {
    // Micro-batch counts to try with p devices: the seed's own when the
    // schedule accepts it, else the nearest allowed counts it accepts on
    // either side.
    const auto counts_for = [&](int seed_m, int p) {
        std::set<int> out;
        int below = 0;
        int above = 0;
        for (int m : allowed_microbatches) {
            if (!accepts(schedule, m, p)) {
                continue;
            }
            if (m == seed_m) {
                return std::set<int>{m};
            }
            if (m < seed_m) {
                below = std::max(below, m);
            } else if (above == 0 || m < above) {
                above = m;
            }
        }
        for (int m : {below, above}) {
            if (m > 0) {
                out.insert(m);
            }
        }
        return out;
    };

    std::set<std::tuple<std::size_t, int, int, int>> tried;  // order, devices, m, chunks
    std::vector<LoopedCandidate> kept;
    for (const Candidate& seed : seeds) {
        const int p = static_cast<int>(seed.devices.size());
        if (p < 2) {
            continue;  // one device: nothing to interleave with
        }
        // ZB-V and DualPipeV run exactly two stages on each device.
        const int most_chunks = v_shaped(schedule) ? 2 : kMaxLoopedChunks;
        for (int m : counts_for(seed.microbatches, p)) {
            for (int v = 2; v <= most_chunks && v * p <= context.layers(); ++v) {
                context.throw_if_stopped();
                if (!tried.insert({seed.order, p, m, v}).second) {
                    continue;
                }
                const SplitProblem problem =
                    context.looped_problem(context.table(m), seed.order, p, v, schedule);
                const Split split = min_bottleneck_split(problem);
                ++statistics.split_searches;
                if (!split.feasible) {
                    continue;
                }
                // Megatron's (m·v + p − 1) chunk times: one micro-batch through
                // the first loop of p chunks fills the pipeline, then each
                // device runs m·v − 1 more chunks at the slowest pace. With
                // v = 1 it is the flat candidates' estimate.
                double through = 0;
                for (std::size_t k = 0; k < static_cast<std::size_t>(p); ++k) {
                    through += stage_time(problem, k, split.first[k], split.first[k + 1]);
                }
                LoopedCandidate c;
                c.order = seed.order;
                for (int k = 0; k < p * v; ++k) {
                    c.devices.push_back(seed.devices[at(slot_rank(schedule, k, p))]);
                }
                c.first = split.first;
                c.microbatches = m;
                c.chunks = v;
                c.bottleneck_s = split.value;
                c.estimate_s = through + static_cast<double>(m * v - 1) * split.value;
                kept.push_back(std::move(c));
            }
        }
    }
    std::stable_sort(kept.begin(), kept.end(),
                     [](const auto& a, const auto& b) { return a.estimate_s < b.estimate_s; });
    if (kept.size() > keep) {
        kept.resize(keep);
    }
    return kept;
}

}  // namespace pipewright::planner
