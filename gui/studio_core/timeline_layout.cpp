#include "studio_core/timeline_layout.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>
#include <vector>

namespace pipewright::gui {

BlockKind block_kind(ActionType type) {
    switch (type) {
        case ActionType::forward:
            return BlockKind::forward;
        case ActionType::backward:
            return BlockKind::backward;
        case ActionType::backward_input:
            return BlockKind::backward_input;
        case ActionType::backward_weight:
            return BlockKind::backward_weight;
        case ActionType::send_forward:
        case ActionType::send_backward:
            return BlockKind::send;
        case ActionType::recv_forward:
        case ActionType::recv_backward:
            return BlockKind::recv;
        case ActionType::unshard:
        case ActionType::reshard:
        case ActionType::reduce_grad:
            return BlockKind::collective;
    }
    return BlockKind::forward;
}

namespace {

// Pairs each send with the receive of the same data: SEND_F(s, m) is taken
// by RECV_F(s + 1, m) and SEND_B(s, m) by RECV_B(s - 1, m). Repeats of one
// transfer pair up first with first, as in the Chrome trace export.
// A receive's (kind, stage, micro-batch) in one number: sorting these is
// what a map of 2 M keys did, without a node and a vector per key (a
// 4.2 M-action timeline spent seconds there).
std::uint64_t transfer_key(const Action& a) {
    return (static_cast<std::uint64_t>(a.type) << 56) |
           (static_cast<std::uint64_t>(static_cast<std::uint32_t>(a.stage) & 0xFFFFFFu) << 32) |
           static_cast<std::uint32_t>(a.microbatch);
}

std::vector<Transfer> pair_transfers(const Timeline& timeline) {
    // Every receive by key, and within a key in timeline order.
    std::vector<std::pair<std::uint64_t, std::size_t>> receives;
    for (std::size_t i = 0; i < timeline.events.size(); ++i) {
        const Action& a = timeline.events[i].action;
        if (is_recv(a.type)) {
            receives.emplace_back(transfer_key(a), i);
        }
    }
    std::sort(receives.begin(), receives.end());
    // used[k]: receives of the key whose run starts at k already paired.
    std::vector<std::uint32_t> used(receives.size(), 0);
    std::vector<Transfer> out;
    for (std::size_t i = 0; i < timeline.events.size(); ++i) {
        const TimelineEvent& send = timeline.events[i];
        if (!is_send(send.action.type)) {
            continue;
        }
        const std::uint64_t key = transfer_key(matching_transfer(send.action));
        const auto first = std::lower_bound(receives.begin(), receives.end(), key,
                                            [](const std::pair<std::uint64_t, std::size_t>& r,
                                               std::uint64_t k) { return r.first < k; });
        if (first == receives.end() || first->first != key) {
            continue;
        }
        const auto run = static_cast<std::size_t>(first - receives.begin());
        const std::size_t next = run + used[run];
        if (next >= receives.size() || receives[next].first != key) {
            continue;  // every receive of this key already has its send
        }
        ++used[run];
        const std::size_t r = receives[next].second;
        const TimelineEvent& recv = timeline.events[r];
        out.push_back({send.start_s, std::max(send.end_s, recv.end_s), send.rank, recv.rank,
                       static_cast<int>(i), static_cast<int>(r)});
    }
    std::sort(out.begin(), out.end(),
              [](const Transfer& a, const Transfer& b) { return a.start < b.start; });
    return out;
}

// Each block of a row sorted by start into the first sub-row free by then:
// the fewest sub-rows in which nothing overlaps (interval partitioning), up
// to kMaxCommTracks.
void assign_tracks(std::vector<Block>& row, std::uint8_t& tracks) {
    std::array<double, kMaxCommTracks> free_from{};
    int used = 0;
    for (Block& b : row) {
        int track = -1;
        for (int k = 0; k < used; ++k) {
            if (free_from[static_cast<std::size_t>(k)] <= b.start) {
                track = k;
                break;
            }
        }
        if (track < 0) {
            track = used < kMaxCommTracks ? used++ : kMaxCommTracks - 1;
        }
        b.track = static_cast<std::uint8_t>(track);
        auto& end = free_from[static_cast<std::size_t>(track)];
        end = std::max(end, b.end);
    }
    tracks = static_cast<std::uint8_t>(std::max(used, 1));
}

}  // namespace

TimelineLayout::TimelineLayout(const Timeline& timeline) : transfers_(pair_transfers(timeline)) {
    const int ranks = timeline.num_ranks();
    rows_.resize(static_cast<std::size_t>(2 * ranks));
    longest_.assign(rows_.size(), 0);
    bubbles_.resize(static_cast<std::size_t>(ranks));
    double begin = 0;
    double end = 0;
    bool any = false;
    for (std::size_t i = 0; i < timeline.events.size(); ++i) {
        const auto& e = timeline.events[i];
        if (e.rank < 0 || e.rank >= ranks) {
            continue;
        }
        const int row = 2 * e.rank + (is_compute(e.action.type) ? 0 : 1);
        rows_[static_cast<std::size_t>(row)].push_back(
            {e.start_s, e.end_s, static_cast<int>(i), block_kind(e.action.type)});
        begin = any ? std::min(begin, e.start_s) : e.start_s;
        end = any ? std::max(end, e.end_s) : e.end_s;
        any = true;
    }
    makespan_ = any ? end - std::min(begin, 0.0) : 0;
    for (std::size_t r = 0; r < rows_.size(); ++r) {
        auto& row = rows_[r];
        // Rows come in the order each rank ran them, so mostly in time
        // order already: checked in one pass before sorting.
        const auto earlier = [](const Block& a, const Block& b) { return a.start < b.start; };
        if (!std::is_sorted(row.begin(), row.end(), earlier)) {
            std::sort(row.begin(), row.end(), earlier);
        }
        for (const auto& b : row) {
            longest_[r] = std::max(longest_[r], b.end - b.start);
        }
    }
    tracks_.assign(rows_.size(), 1);
    for (std::size_t r = 1; r < rows_.size(); r += 2) {
        assign_tracks(rows_[r], tracks_[r]);
        if (tracks_[r] > 1) {
            event_track_.resize(timeline.events.size(), 0);
            for (const Block& b : rows_[r]) {
                event_track_[static_cast<std::size_t>(b.event)] = b.track;
            }
        }
    }
    // A bubble is time inside the iteration when a device computes nothing.
    for (int r = 0; r < ranks; ++r) {
        double cursor = 0;
        for (const auto& b : rows_[static_cast<std::size_t>(2 * r)]) {
            if (b.start > cursor) {
                bubbles_[static_cast<std::size_t>(r)].emplace_back(cursor, b.start);
            }
            cursor = std::max(cursor, b.end);
        }
        if (any && cursor < end) {
            bubbles_[static_cast<std::size_t>(r)].emplace_back(cursor, end);
        }
    }
}

const std::vector<Block>& TimelineLayout::row(int index) const {
    return rows_.at(static_cast<std::size_t>(index));
}

const std::vector<std::pair<double, double>>& TimelineLayout::bubbles(int rank) const {
    return bubbles_.at(static_cast<std::size_t>(rank));
}

std::size_t TimelineLayout::blockCount() const {
    std::size_t n = 0;
    for (const auto& row : rows_) {
        n += row.size();
    }
    return n;
}

std::size_t TimelineLayout::firstVisible(int row, double t0) const {
    // Blocks may overlap (transfers on a link), so a block starting up to the
    // longest duration before t0 can still reach into view.
    const auto& blocks = rows_[static_cast<std::size_t>(row)];
    const double from = t0 - longest_[static_cast<std::size_t>(row)];
    auto it = std::lower_bound(blocks.begin(), blocks.end(), from,
                               [](const Block& b, double t) { return b.start < t; });
    return static_cast<std::size_t>(it - blocks.begin());
}

std::vector<Span> TimelineLayout::visible(int row, double t0, double t1, double min_width) const {
    std::vector<Span> out;
    const auto& blocks = rows_.at(static_cast<std::size_t>(row));
    for (std::size_t i = firstVisible(row, t0); i < blocks.size(); ++i) {
        const Block& b = blocks[i];
        if (b.start > t1) {
            break;
        }
        if (b.end < t0) {
            continue;
        }
        const bool narrow = b.end - b.start < min_width;
        if (narrow && !out.empty() && out.back().end - out.back().start < min_width &&
            b.start - out.back().end < min_width) {
            // Extend the current fold until it is wide enough to be seen.
            Span& fold = out.back();
            fold.end = std::max(fold.end, b.end);
            ++fold.folded;
            continue;
        }
        out.push_back({b.start, b.end, b.event, 1, b.kind});
    }
    return out;
}

int TimelineLayout::tracks(int row) const {
    return row >= 0 && row < rows() ? tracks_[static_cast<std::size_t>(row)] : 1;
}

int TimelineLayout::trackOf(int event) const {
    return event >= 0 && static_cast<std::size_t>(event) < event_track_.size()
               ? event_track_[static_cast<std::size_t>(event)]
               : 0;
}

int TimelineLayout::eventAt(int row, double t, double tolerance, int track) const {
    if (row < 0 || row >= rows()) {
        return -1;
    }
    const auto& blocks = rows_[static_cast<std::size_t>(row)];
    int best = -1;
    double best_distance = tolerance;
    for (std::size_t i = firstVisible(row, t - tolerance); i < blocks.size(); ++i) {
        const Block& b = blocks[i];
        if (b.start > t + tolerance) {
            break;
        }
        if (track >= 0 && b.track != track) {
            continue;
        }
        const double distance = t < b.start ? b.start - t : t > b.end ? t - b.end : 0;
        if (distance <= best_distance) {
            best_distance = distance;
            best = b.event;
            if (distance == 0) {
                break;
            }
        }
    }
    return best;
}

}  // namespace pipewright::gui
