#include "schedule/zero_bubble_generators.h"

#include <algorithm>
#include <string>

#include "pipewright/core/schedule_generators.h"

namespace pipewright::detail {

namespace {

// One rank's list as torch's _get_1f1b_rank_ops builds it with
// enable_zero_bubble: `warmup` forwards, then a forward and an input
// gradient in turn until the forwards run out, then the remaining input
// gradients. The rank holds back its first `held_back` weight gradients and
// afterwards runs one after each input gradient, oldest first; the held-back
// ones close the list, filling the bubble before the next iteration.
template <typename ForwardStage, typename BackwardStage>
std::vector<Action> zero_bubble_rank(int warmup, int computations, int held_back,
                                     ForwardStage forward_stage, BackwardStage backward_stage,
                                     int stages) {
    std::vector<Action> out;
    out.reserve(idx(computations) * 3);
    std::vector<int> next_forward(idx(stages), 0);
    std::vector<int> next_input(idx(stages), 0);
    std::vector<int> next_weight(idx(stages), 0);
    std::vector<int> input_stages;  // the stage of each input gradient, in order
    std::size_t weights = 0;
    const auto weight = [&] {
        const int st = input_stages[weights++];
        out.push_back(act(st, ActionType::backward_weight, next_weight[idx(st)]++));
    };
    for (int op = 0; op < computations + warmup; ++op) {
        if (op < computations) {
            const int st = forward_stage(op);
            out.push_back(act(st, ActionType::forward, next_forward[idx(st)]++));
        }
        if (op < warmup) {
            continue;
        }
        const int st = backward_stage(op);
        out.push_back(act(st, ActionType::backward_input, next_input[idx(st)]++));
        input_stages.push_back(st);
        if (op - warmup >= held_back) {
            weight();
        }
    }
    while (weights < input_stages.size()) {
        weight();
    }
    return out;
}

// The rules ZB-H1 and ZB-H2 share: stage s on device s, m >= p.
Schedule one_stage_per_device(std::string_view name, const std::vector<int>& stage_rank,
                              const Layout& layout) {
    require_one_stage_per_device(name, stage_rank, layout, "interleaved-zb");
    require_microbatches_at_least_stages(name, layout);
    return empty_schedule(name, stage_rank, layout);
}

}  // namespace

// torch's _get_1f1b_rank_ops with enable_zero_bubble and
// num_1f1b_microbatches = rank: rank r holds back its first r weight
// gradients, which fill the bubble that 1F1B leaves before the cooldown.
Schedule make_zb_h1(std::string_view name, const std::vector<int>& stage_rank,
                    const Layout& layout) {
    Schedule s = one_stage_per_device(name, stage_rank, layout);
    const int p = layout.ranks;
    const int m = layout.microbatches;
    for (int r = 0; r < p; ++r) {
        const auto stage = [r](int) { return r; };
        s.ranks[idx(r)] = zero_bubble_rank(std::min(p - 1 - r, m), m, r, stage, stage, p);
    }
    return s;
}

// The paper's handcrafted ZB-H2: twice 1F1B's warm-up forwards, so that the
// first input gradient reaches every stage while it still has forwards to
// run. In the steady state stage i runs F(x), I(x - 2(p-1-i)), W(x - 2(p-1)):
// every stage works from its first forward to its last weight gradient, the
// parallelogram of the paper's figure, at up to 2p-1 micro-batches of
// activations on the first stage.
Schedule make_zb_h2(std::string_view name, const std::vector<int>& stage_rank,
                    const Layout& layout) {
    Schedule s = one_stage_per_device(name, stage_rank, layout);
    const int p = layout.ranks;
    const int m = layout.microbatches;
    for (int r = 0; r < p; ++r) {
        auto& out = s.ranks[idx(r)];
        out.reserve(idx(m) * 3);
        const int input_lag = 2 * (p - 1 - r);
        const int weight_lag = 2 * (p - 1);
        for (int x = 0; x < m + weight_lag; ++x) {
            if (x < m) {
                out.push_back(act(r, ActionType::forward, x));
            }
            if (x >= input_lag && x - input_lag < m) {
                out.push_back(act(r, ActionType::backward_input, x - input_lag));
            }
            if (x >= weight_lag) {
                out.push_back(act(r, ActionType::backward_weight, x - weight_lag));
            }
        }
    }
    return s;
}

// torch's ScheduleInterleavedZeroBubble: interleaved 1F1B's order over the
// looped placement, with the backward split as in ZB-H1. The micro-batches
// go through each local stage in rounds of about one per device.
Schedule make_interleaved_zb(std::string_view name, const std::vector<int>& stage_rank,
                             const Layout& layout) {
    const std::string who(name);
    const int v = require_looped_placement(name, stage_rank, layout, 2, "zb-h1");
    const int p = layout.ranks;
    const int m = layout.microbatches;
    if (m < p) {
        throw ScheduleError(who + " needs at least as many micro-batches as devices (" +
                            devices_words(p) + ", " + microbatches_words(m) +
                            "); raise microbatches to " + std::to_string(p) + " or more");
    }
    const auto equal_rounds = [p](int count) { return count % std::max(1, count / p) == 0; };
    if (!equal_rounds(m)) {
        int lower = m - 1;
        while (!equal_rounds(lower)) {
            --lower;
        }
        int upper = m + 1;
        while (!equal_rounds(upper)) {
            ++upper;
        }
        throw ScheduleError(who + " runs the micro-batches in rounds of equal size, as torch's " +
                            "ScheduleInterleavedZeroBubble does: " + microbatches_words(m) +
                            " on " + devices_words(p) + " make " + std::to_string(m / p) +
                            " rounds, which do not split " + "them evenly; use " +
                            std::to_string(std::max(lower, p)) + " or " + std::to_string(upper) +
                            " micro-batches");
    }
    const int per_round = m / std::max(1, m / p);
    Schedule s = empty_schedule(name, stage_rank, layout);
    const int computations = m * v;  // forwards per device
    for (int r = 0; r < p; ++r) {
        // Multiply factor 1 where interleaved 1F1B uses 2: the split backward
        // lets the devices start the steady state sooner.
        const int warmup = std::min((v - 1) * per_round + (p - 1 - r), computations);
        const auto forward_stage = [=](int op) { return ((op / per_round) % v) * p + r; };
        const auto backward_stage = [=](int op) {
            return (v - 1 - ((op - warmup) / per_round) % v) * p + r;
        };
        s.ranks[idx(r)] =
            zero_bubble_rank(warmup, computations, r, forward_stage, backward_stage, layout.stages);
    }
    return s;
}

}  // namespace pipewright::detail
