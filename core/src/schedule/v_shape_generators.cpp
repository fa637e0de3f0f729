#include "schedule/v_shape_generators.h"

#include <algorithm>
#include <array>
#include <string>

#include "pipewright/core/schedule_generators.h"

namespace pipewright::detail {

namespace {

void require_v_placement(std::string_view name, const std::vector<int>& stage_rank,
                         const Layout& layout) {
    const std::string who(name);
    const int p = layout.ranks;
    if (layout.stages != 2 * p) {
        throw ScheduleError(who + " needs exactly two stages on every device (a V: stage s and " +
                            "stage 2p-1-s on device s), but " + stages_words(layout.stages) +
                            " are placed on " + devices_words(p) + "; use " +
                            std::to_string(2 * p) + " stages, or use zb-h1");
    }
    for (int s = 0; s < layout.stages; ++s) {
        const int expected = s < p ? s : 2 * p - 1 - s;
        if (stage_rank[idx(s)] != expected) {
            throw ScheduleError(who + " places the stages in a V (down the devices and back: " +
                                "stage s and stage " + std::to_string(2 * p - 1) +
                                "-s on device s), but stage " + std::to_string(s) +
                                " is on device " + std::to_string(stage_rank[idx(s)]) +
                                "; expected device " + std::to_string(expected));
        }
    }
}

// One device's list of ZB-V, for `m` micro-batches (at least 2p - 1: fewer
// are planned as 2p - 1 and the extra ones dropped afterwards). Chunk 0 is
// the device's stage on the way down, chunk 1 its stage on the way back.
std::vector<Action> zbv_rank(int rank, int p, int m) {
    const int down = rank;
    const int up = 2 * p - 1 - rank;
    int forward_down = 0;
    int forward_up = 0;
    int input_down = 0;
    int input_up = 0;
    std::vector<Action> out;
    out.reserve(idx(m) * 6);
    const auto forward = [&](int stage, int& count) {
        out.push_back(act(stage, ActionType::forward, count++));
    };
    const auto input_and_weight = [&](int stage, int& count) {
        out.push_back(act(stage, ActionType::backward_input, count));
        out.push_back(act(stage, ActionType::backward_weight, count++));
    };
    // Warm-up: fill the V down to this device and back.
    for (int k = 0; k < 2 * (p - rank) - 1; ++k) {
        forward(down, forward_down);
    }
    for (int k = 0; k < rank; ++k) {
        forward(up, forward_up);
        forward(down, forward_down);
    }
    for (int k = 0; k < p - rank; ++k) {
        forward(up, forward_up);
        input_and_weight(up, input_up);
    }
    // Steady state: each chunk a forward and a whole backward in turn.
    while (forward_up < forward_down || forward_down < m) {
        if (forward_down < m) {
            forward(down, forward_down);
        }
        input_and_weight(down, input_down);
        forward(up, forward_up);
        input_and_weight(up, input_up);
    }
    // Cool-down: the input gradients first, the weight gradients after.
    int weight_down = input_down;
    int weight_up = input_up;
    for (int k = 0; k < rank; ++k) {
        out.push_back(act(down, ActionType::backward_input, input_down++));
        out.push_back(act(up, ActionType::backward_input, input_up++));
    }
    for (int k = 0; k < p - rank; ++k) {
        out.push_back(act(down, ActionType::backward_input, input_down++));
        out.push_back(act(down, ActionType::backward_weight, weight_down++));
    }
    while (weight_up < input_up) {
        out.push_back(act(up, ActionType::backward_weight, weight_up++));
    }
    while (weight_down < input_down) {
        out.push_back(act(down, ActionType::backward_weight, weight_down++));
    }
    return out;
}

// One device's list of DualPipeV, as torch's ScheduleDualPipeV writes it
// after DeepSeek's dualpipev.py. Chunk 0 (`down`) is the device's stage on
// the way down, chunk 1 (`up`) its stage on the way back. A backward is a
// whole B or, where the schedule uses zero bubble, an I whose W waits in a
// first-in first-out queue until a W slot comes; a micro-batch's backward
// index counts both.
class DualPipeVRank {
  public:
    DualPipeVRank(int rank, int p) : rank_(rank), p_(p), down_(rank), up_(2 * p - 1 - rank) {}

    std::vector<Action> build(int m) {
        const int rank = rank_;
        const int p = p_;
        // 1: forwards of chunk 0 until the V is full down to this device.
        for (int k = 0; k < 2 * (p - rank - 1); ++k) {
            forward(down_);
        }
        // 2: the two chunks' forwards in turn.
        for (int k = 0; k < rank + 1; ++k) {
            forward(down_);
            forward(up_);
        }
        // 3: zero bubble on chunk 1 while the way back fills.
        for (int k = 0; k < p - rank - 1; ++k) {
            backward(up_, true);
            weight();
            forward(up_);
        }
        // 4 (main): each chunk's forward overlapped with the other's backward.
        for (int k = 0; k < m - 2 * p + rank + 1; ++k) {
            if (k == 0 && rank == p - 1) {
                // The turn of the V: not overlapped, which shortens the bubble.
                forward(down_);
                backward(up_, false);
            } else {
                overlapped(down_, up_);
            }
            overlapped(up_, down_);
        }
        // 5: chunk 1's backward, then chunk 1's forward with chunk 0's backward.
        for (int k = 0; k < p - rank - 1; ++k) {
            backward(up_, false);
            overlapped(up_, down_);
        }
        // 6: the last backwards; the second half split (zero bubble).
        const int drain = rank + 1;
        bool split = false;
        for (int k = 0; k < drain; ++k) {
            split = split || (k == drain / 2 && rank % 2 == 1);
            backward(up_, split);
            split = split || (k == drain / 2 && rank % 2 == 0);
            backward(down_, split);
        }
        // 7, 8: the held-back weight gradients fill the cool-down.
        for (int k = 0; k < p - rank - 1; ++k) {
            weight();
            backward(down_, split);
        }
        for (int k = 0; k < rank + 1; ++k) {
            weight();
        }
        return std::move(out_);
    }

  private:
    int& count(int stage, std::array<int, 2>& counts) const {
        return counts[stage == down_ ? 0 : 1];
    }
    void forward(int stage) {
        out_.push_back(act(stage, ActionType::forward, count(stage, forwards_)++));
    }
    void backward(int stage, bool split) {
        const int mb = count(stage, backwards_)++;
        out_.push_back(act(stage, split ? ActionType::backward_input : ActionType::backward, mb));
        if (split) {
            weights_.push_back(act(stage, ActionType::backward_weight, mb));
        }
    }
    void weight() {
        if (next_weight_ < weights_.size()) {
            out_.push_back(weights_[next_weight_++]);
        }
    }
    void overlapped(int forward_stage, int backward_stage) {
        forward(forward_stage);
        out_.back().overlaps_next = true;
        backward(backward_stage, false);
    }

    int rank_;
    int p_;
    int down_;
    int up_;
    std::array<int, 2> forwards_{};  // per chunk: down, up
    std::array<int, 2> backwards_{};
    std::vector<Action> weights_;
    std::size_t next_weight_ = 0;
    std::vector<Action> out_;
};

}  // namespace

// DeepSeek's DualPipeV (DualPipe folded into a V, as torch's
// ScheduleDualPipeV): the placement of ZB-V, but in the steady state each
// forward of one chunk runs overlapped with the backward of the other
// (OVERLAP_F_B), so that on a GPU one hides the other's communication; the
// warm-up and the cool-down split the backward as zero bubble does.
Schedule make_dualpipev(std::string_view name, const std::vector<int>& stage_rank,
                        const Layout& layout) {
    require_v_placement(name, stage_rank, layout);
    const int p = layout.ranks;
    const int m = layout.microbatches;
    if (m < 2 * p) {
        throw ScheduleError(std::string(name) +
                            " needs at least as many micro-batches as stages (" +
                            std::to_string(2 * p) + " for " + stages_words(2 * p) + " on " +
                            devices_words(p) + "), but has " + microbatches_words(m) + "; use " +
                            std::to_string(2 * p) + " or more micro-batches, or use zbv");
    }
    Schedule s = empty_schedule(name, stage_rank, layout);
    for (int r = 0; r < p; ++r) {
        s.ranks[idx(r)] = DualPipeVRank(r, p).build(m);
    }
    return s;
}

// torch's ScheduleZBVZeroBubble (section 6 of the zero-bubble paper): two
// stages per device in a V, so that the last stage sits on the first device
// and the loss's gradient starts back at once; the warm-up fills the V, then
// each chunk runs a forward and a whole backward in turn, and the weight
// gradients held back in the cool-down fill its bubble.
Schedule make_zbv(std::string_view name, const std::vector<int>& stage_rank, const Layout& layout) {
    require_v_placement(name, stage_rank, layout);
    Schedule s = empty_schedule(name, stage_rank, layout);
    const int p = layout.ranks;
    const int m = layout.microbatches;
    for (int r = 0; r < p; ++r) {
        for (const Action& a : zbv_rank(r, p, std::max(m, 2 * p - 1))) {
            if (a.microbatch < m) {
                s.ranks[idx(r)].push_back(a);
            }
        }
    }
    return s;
}

}  // namespace pipewright::detail
