#pragma once

#include <cstdint>
#include <vector>

#include "pipewright/core/timeline.h"

namespace pipewright::gui {

// Colour class of a block: one per compute kind, one per transfer direction.
enum class BlockKind : std::uint8_t {
    forward,
    backward,
    backward_input,
    backward_weight,
    send,
    recv,
    collective  // data-parallel: REDUCE_GRAD, UNSHARD, RESHARD
};

[[nodiscard]] BlockKind block_kind(ActionType type);

struct Block {
    double start = 0;
    double end = 0;
    int event = 0;  // index into Timeline::events
    BlockKind kind = BlockKind::forward;
    // Communication rows: the sub-row it is drawn in, so that a send under
    // a receive's wait stays visible (TimelineLayout::tracks).
    std::uint8_t track = 0;
};

// Most sub-rows a communication row is split into; further overlaps share
// the last (a lane is a few tens of pixels high).
inline constexpr int kMaxCommTracks = 3;

// What to draw for one row at one zoom: a block, or a run of blocks each too
// narrow to see, folded into one span (folded > 1).
struct Span {
    double start = 0;
    double end = 0;
    int event = 0;   // the first block of a fold
    int folded = 1;  // how many blocks it stands for
    BlockKind kind = BlockKind::forward;
};

// One send paired with the receive that takes its data: an arrow from the
// sender's communication row when the transfer starts to the receiver's when
// the receive ends.
struct Transfer {
    double start = 0;
    double end = 0;
    int from_rank = 0;
    int to_rank = 0;
    int send_event = 0;
    int recv_event = 0;
};

// A timeline arranged for drawing: per rank a compute row and a
// communication row, each sorted by start so that the visible part of a row
// is found by binary search (Tracy's approach), and the idle gaps (bubbles)
// of every compute row.
class TimelineLayout {
  public:
    explicit TimelineLayout(const Timeline& timeline);

    [[nodiscard]] int rows() const { return static_cast<int>(rows_.size()); }
    [[nodiscard]] int ranks() const { return rows() / 2; }
    // Row 2r is rank r's compute row, 2r + 1 its communication row.
    [[nodiscard]] const std::vector<Block>& row(int index) const;
    [[nodiscard]] const std::vector<std::pair<double, double>>& bubbles(int rank) const;
    [[nodiscard]] double makespan() const { return makespan_; }
    [[nodiscard]] std::size_t blockCount() const;
    // Every send with its receive, sorted by start.
    [[nodiscard]] const std::vector<Transfer>& transfers() const { return transfers_; }

    // Blocks of `row` overlapping [t0, t1], with runs of blocks narrower than
    // `min_width` (seconds, i.e. a few pixels at the current zoom) folded.
    [[nodiscard]] std::vector<Span> visible(int row, double t0, double t1, double min_width) const;
    // The block under time `t` in `row`, or -1 (an event index otherwise);
    // with `track` >= 0, only a block of that sub-row.
    [[nodiscard]] int eventAt(int row, double t, double tolerance, int track = -1) const;
    // Sub-rows of `row`: 1 for a compute row and for a communication row
    // whose blocks never overlap; otherwise as many as overlap at once (at
    // most kMaxCommTracks), each block in the first that is free.
    [[nodiscard]] int tracks(int row) const;
    // The sub-row of an event's block (0 for events not drawn).
    [[nodiscard]] int trackOf(int event) const;
    // Index of the first block of `row` that can reach time t0 or later.
    [[nodiscard]] std::size_t firstVisible(int row, double t0) const;

  private:
    std::vector<std::vector<Block>> rows_;
    std::vector<double> longest_;            // per row: the longest block, bounds the search
    std::vector<std::uint8_t> tracks_;       // per row
    std::vector<std::uint8_t> event_track_;  // per event, where some row has several
    std::vector<std::vector<std::pair<double, double>>> bubbles_;
    std::vector<Transfer> transfers_;
    double makespan_ = 0;
};

}  // namespace pipewright::gui
