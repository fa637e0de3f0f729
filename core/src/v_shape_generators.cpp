#include "v_shape_generators.h"

#include <algorithm>
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

}  // namespace

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
