#include "studio_core/timeline/timeline_layout.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
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
//
// The receives of a key form a queue in timeline order: `head` holds each
// key's first untaken receive and `next` links a receive to the following
// one of its key. Keys are (direction, stage, micro-batch), so they index a
// dense table when the stages and micro-batches are numbered compactly, as
// every schedule numbers them; a sparse numbering (an edited trace) falls
// back to a sorted list. A 4.2 M-action timeline spent seconds in a map,
// then ~1 s in the sorted list alone.
class ReceiveQueues {
  public:
    explicit ReceiveQueues(const Timeline& timeline) : next_(timeline.events.size(), kNone) {
        int stages = 0;
        int microbatches = 0;
        std::size_t receives = 0;
        bool compact = true;
        for (const TimelineEvent& e : timeline.events) {
            if (is_recv(e.action.type)) {
                ++receives;
                compact = compact && e.action.stage >= 0 && e.action.microbatch >= 0;
                stages = std::max(stages, e.action.stage + 1);
                microbatches = std::max(microbatches, e.action.microbatch + 1);
            }
        }
        const auto cells =
            2 * static_cast<std::uint64_t>(stages) * static_cast<std::uint64_t>(microbatches);
        dense_ = compact && cells <= 4 * receives + 1024;
        if (dense_) {
            microbatches_ = microbatches;
            stages_ = stages;
            head_.assign(static_cast<std::size_t>(cells), kNone);
        }
        // Linked back to front, so that each queue starts with its earliest.
        for (std::size_t i = timeline.events.size(); i-- > 0;) {
            const Action& a = timeline.events[i].action;
            if (!is_recv(a.type)) {
                continue;
            }
            if (dense_) {
                std::uint32_t& head = head_[cell(a)];
                next_[i] = head;
                head = static_cast<std::uint32_t>(i);
            } else {
                sorted_.emplace_back(sparse_key(a), static_cast<std::uint32_t>(i));
            }
        }
        if (!dense_) {
            std::sort(sorted_.begin(), sorted_.end());  // within a key, by event: timeline order
            taken_.assign(sorted_.size(), 0);
        }
    }

    // The earliest receive of `wanted` (a receive action) not yet taken,
    // taken now; kNone when there is none.
    std::uint32_t take(const Action& wanted) {
        if (dense_) {
            if (wanted.stage < 0 || wanted.stage >= stages_ || wanted.microbatch < 0 ||
                wanted.microbatch >= microbatches_) {
                return kNone;
            }
            std::uint32_t& head = head_[cell(wanted)];
            const std::uint32_t r = head;
            if (r != kNone) {
                head = next_[r];
            }
            return r;
        }
        const std::uint64_t key = sparse_key(wanted);
        const auto first = std::lower_bound(sorted_.begin(), sorted_.end(), key,
                                            [](const std::pair<std::uint64_t, std::uint32_t>& r,
                                               std::uint64_t k) { return r.first < k; });
        if (first == sorted_.end() || first->first != key) {
            return kNone;
        }
        const auto run = static_cast<std::size_t>(first - sorted_.begin());
        const std::size_t at = run + taken_[run];
        if (at >= sorted_.size() || sorted_[at].first != key) {
            return kNone;  // every receive of this key already has its send
        }
        ++taken_[run];
        return sorted_[at].second;
    }

    static constexpr std::uint32_t kNone = 0xFFFFFFFFu;

  private:
    [[nodiscard]] std::size_t cell(const Action& a) const {
        const std::size_t backward = a.type == ActionType::recv_backward ? 1 : 0;
        return (backward * static_cast<std::size_t>(stages_) + static_cast<std::size_t>(a.stage)) *
                   static_cast<std::size_t>(microbatches_) +
               static_cast<std::size_t>(a.microbatch);
    }
    static std::uint64_t sparse_key(const Action& a) {
        return (static_cast<std::uint64_t>(a.type) << 56) |
               (static_cast<std::uint64_t>(static_cast<std::uint32_t>(a.stage) & 0xFFFFFFu) << 32) |
               static_cast<std::uint32_t>(a.microbatch);
    }

    bool dense_ = false;
    int stages_ = 0;
    int microbatches_ = 0;
    std::vector<std::uint32_t> head_;  // dense: per key, its first untaken receive
    std::vector<std::uint32_t> next_;  // per event: the next receive of its key
    std::vector<std::pair<std::uint64_t, std::uint32_t>> sorted_;  // sparse: (key, event)
    std::vector<std::uint32_t> taken_;  // sparse: per key's first entry, how many are taken
};

// A double's bits as an unsigned number in the same order (negatives flipped
// whole, positives by their sign bit), so that doubles sort as integers.
std::uint64_t ordered_bits(double x) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &x, sizeof bits);
    return (bits >> 63) != 0 ? ~bits : bits | (std::uint64_t{1} << 63);
}

// Sorts (key, index) pairs by key, least significant byte first (LSD radix
// sort), skipping the bytes every key shares. On 2 M transfers std::sort
// took a third of a second; this reads the keys once and moves them a few
// times.
void radix_sort(std::vector<std::pair<std::uint64_t, std::uint32_t>>& items) {
    std::array<std::array<std::size_t, 256>, 8> counts{};
    for (const auto& item : items) {
        for (std::size_t byte = 0; byte < 8; ++byte) {
            ++counts[byte][(item.first >> (8 * byte)) & 0xFFu];
        }
    }
    std::vector<std::pair<std::uint64_t, std::uint32_t>> buffer(items.size());
    for (std::size_t byte = 0; byte < 8; ++byte) {
        auto& count = counts[byte];
        if (std::find(count.begin(), count.end(), items.size()) != count.end()) {
            continue;  // one value for every key: this byte orders nothing
        }
        std::size_t offset = 0;
        for (std::size_t& c : count) {
            offset += std::exchange(c, offset);
        }
        for (const auto& item : items) {
            buffer[count[(item.first >> (8 * byte)) & 0xFFu]++] = item;
        }
        items.swap(buffer);
    }
}

std::vector<Transfer> pair_transfers(const Timeline& timeline) {
    ReceiveQueues receives(timeline);
    std::vector<Transfer> paired;
    paired.reserve(timeline.events.size() / 2);
    for (std::size_t i = 0; i < timeline.events.size(); ++i) {
        const TimelineEvent& send = timeline.events[i];
        if (!is_send(send.action.type)) {
            continue;
        }
        const std::uint32_t r = receives.take(matching_transfer(send.action));
        if (r == ReceiveQueues::kNone) {
            continue;
        }
        const TimelineEvent& recv = timeline.events[r];
        paired.push_back({send.start_s, std::max(send.end_s, recv.end_s), send.rank, recv.rank,
                          static_cast<int>(i), static_cast<int>(r)});
    }
    // By start, through (start, index) pairs: fewer bytes to move than whole
    // transfers.
    std::vector<std::pair<std::uint64_t, std::uint32_t>> order(paired.size());
    for (std::size_t i = 0; i < paired.size(); ++i) {
        order[i] = {ordered_bits(paired[i].start), static_cast<std::uint32_t>(i)};
    }
    radix_sort(order);  // stable: equal starts keep the timeline's order
    std::vector<Transfer> out;
    out.reserve(paired.size());
    for (const auto& [start, i] : order) {
        out.push_back(paired[i]);
    }
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
    // Sized first: growing 2,048 rows block by block copied each several times.
    std::vector<std::size_t> sizes(rows_.size(), 0);
    for (const auto& e : timeline.events) {
        if (e.rank >= 0 && e.rank < ranks) {
            ++sizes[static_cast<std::size_t>(2 * e.rank + (is_compute(e.action.type) ? 0 : 1))];
        }
    }
    for (std::size_t r = 0; r < rows_.size(); ++r) {
        rows_[r].reserve(sizes[r]);
    }
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
