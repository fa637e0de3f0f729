#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pipewright {

// Action types in PyTorch's pipelining notation: F, B, I, W and the sends and
// receives between stages. SEND_F on stage s sends its output to stage s+1;
// RECV_F on stage s receives its input from stage s-1; SEND_B on stage s sends
// the gradient of its input to s-1; RECV_B on stage s receives the gradient of
// its output from s+1.
enum class ActionType : std::uint8_t {
    forward,          // F
    backward,         // B  (input and weight gradient together)
    backward_input,   // I
    backward_weight,  // W
    send_forward,     // SEND_F
    recv_forward,     // RECV_F
    send_backward,    // SEND_B
    recv_backward,    // RECV_B
    // Data-parallel collectives, once per stage and iteration, among the
    // stage's replicas (PyTorch writes them without a micro-batch: "2UNSHARD").
    unshard,      // UNSHARD: all-gather the stage's sharded parameters (ZeRO-3)
    reshard,      // RESHARD: free the gathered parameters again (ZeRO-3)
    reduce_grad,  // REDUCE_GRAD: average the stage's gradients (all-reduce or reduce-scatter)
};

[[nodiscard]] std::string_view to_string(ActionType t);
[[nodiscard]] constexpr bool is_compute(ActionType t) {
    return t == ActionType::forward || t == ActionType::backward ||
           t == ActionType::backward_input || t == ActionType::backward_weight;
}
[[nodiscard]] constexpr bool is_send(ActionType t) {
    return t == ActionType::send_forward || t == ActionType::send_backward;
}
[[nodiscard]] constexpr bool is_recv(ActionType t) {
    return t == ActionType::recv_forward || t == ActionType::recv_backward;
}
// An action of the whole stage rather than of one micro-batch; its
// `microbatch` is 0 and its string has none.
[[nodiscard]] constexpr bool is_collective(ActionType t) {
    return t == ActionType::unshard || t == ActionType::reshard || t == ActionType::reduce_grad;
}

struct Action {
    int stage = 0;
    ActionType type = ActionType::forward;
    // A forward that runs overlapped with the next compute action of its
    // rank's list, a backward of another stage: PyTorch's OVERLAP_F_B, which
    // DualPipeV writes "(0F3;5B1)OVERLAP_F_B". Sends and receives may stand
    // between the two. (Kept in the padding: an action stays 12 bytes.)
    bool overlaps_next = false;
    int microbatch = 0;

    constexpr Action() = default;
    constexpr Action(int stage_index, ActionType action_type, int microbatch_index,
                     bool overlapped_with_next = false)
        : stage(stage_index),
          type(action_type),
          overlaps_next(overlapped_with_next),
          microbatch(microbatch_index) {}

    // The same work: stage, type and micro-batch. Whether it overlaps the
    // next action is where it stands in a list, compared by Schedule's ==.
    constexpr bool operator==(const Action& o) const {
        return stage == o.stage && type == o.type && microbatch == o.microbatch;
    }
};

// The other end of a transfer (a send or a receive; other actions are
// returned as they are): SEND_F(s, m) pairs with RECV_F(s+1, m) and SEND_B(s,
// m) with RECV_B(s-1, m), in both directions. The one place that says so: the
// simulator, the executor, the traces and the studio all ask here.
[[nodiscard]] constexpr Action matching_transfer(const Action& a) {
    switch (a.type) {
        case ActionType::send_forward:
            return {a.stage + 1, ActionType::recv_forward, a.microbatch};
        case ActionType::recv_forward:
            return {a.stage - 1, ActionType::send_forward, a.microbatch};
        case ActionType::send_backward:
            return {a.stage - 1, ActionType::recv_backward, a.microbatch};
        case ActionType::recv_backward:
            return {a.stage + 1, ActionType::send_backward, a.microbatch};
        default:
            return a;
    }
}
// The stage that a send goes to or a receive comes from.
[[nodiscard]] constexpr int peer_stage(const Action& a) {
    return matching_transfer(a).stage;
}

// Largest stage or micro-batch index an action string may carry.
inline constexpr int kMaxActionIndex = 100'000'000;

// "2F0", "1SEND_B3", "0REDUCE_GRAD"
[[nodiscard]] std::string to_string(const Action& a);
// Parses PyTorch's action strings; nullopt when malformed.
[[nodiscard]] std::optional<Action> parse_action(std::string_view s);

// For every rank, the ordered list of actions it executes in one iteration.
struct Schedule {
    std::string name;
    int num_stages = 0;
    int num_microbatches = 0;
    std::vector<int> stage_rank;  // stage -> rank that runs it
    std::vector<std::vector<Action>> ranks;

    [[nodiscard]] int num_ranks() const { return static_cast<int>(ranks.size()); }
    [[nodiscard]] bool has_communication() const;
    [[nodiscard]] bool splits_backward() const;  // uses I/W instead of B
    [[nodiscard]] bool has_collectives() const;  // UNSHARD, RESHARD or REDUCE_GRAD
    [[nodiscard]] std::size_t action_count() const;

    // The same lists, overlapped pairs included.
    bool operator==(const Schedule& o) const;
};

// The actions that must have completed before `a` may start; at most two.
// Actions of the same rank are also ordered by the list itself. In a
// schedule that splits the backward, a gradient flows on from a stage once
// its I has run; a micro-batch that stage runs as a whole B instead
// (DualPipeV mixes the two) counts as having run its I when its B has: the
// simulator, the checker and the executor mark both.
struct Dependencies {
    std::array<Action, 2> items{};
    int count = 0;
};
// `splits_backward` is s.splits_backward(), which scans the whole schedule:
// callers that walk every action pass it once instead of per action.
// Inline: the simulator calls it once per action of multi-million-action schedules.
[[nodiscard]] inline Dependencies dependencies_of(const Action& a, const Schedule& s,
                                                  bool splits_backward) {
    Dependencies deps;
    const auto add = [&deps](int stage, ActionType type, int mb) {
        deps.items[static_cast<std::size_t>(deps.count++)] = Action{stage, type, mb};
    };
    const auto rank_of = [&s](int stage) {
        return stage < 0 || static_cast<std::size_t>(stage) >= s.stage_rank.size()
                   ? -1
                   : s.stage_rank[static_cast<std::size_t>(stage)];
    };
    const int st = a.stage;
    const int mb = a.microbatch;
    const int here = rank_of(st);
    // A neighbour outside the pipeline counts as another rank, which makes a
    // malformed action wait for a RECV that the checker reports as missing.
    const auto same_rank = [&](int other) { return here >= 0 && rank_of(other) == here; };
    switch (a.type) {
        case ActionType::forward:
            if (st > 0) {
                const bool local = same_rank(st - 1);
                add(local ? st - 1 : st, local ? ActionType::forward : ActionType::recv_forward,
                    mb);
            }
            break;
        case ActionType::recv_forward:
        case ActionType::recv_backward: {
            const Action send = matching_transfer(a);
            add(send.stage, send.type, mb);
            break;
        }
        case ActionType::send_forward:
            add(st, ActionType::forward, mb);
            break;
        case ActionType::backward:
        case ActionType::backward_input:
            add(st, ActionType::forward, mb);
            if (st < s.num_stages - 1) {
                if (same_rank(st + 1)) {
                    add(st + 1, splits_backward ? ActionType::backward_input : ActionType::backward,
                        mb);
                } else {
                    add(st, ActionType::recv_backward, mb);
                }
            }
            break;
        case ActionType::send_backward:
            add(st, splits_backward ? ActionType::backward_input : ActionType::backward, mb);
            break;
        case ActionType::backward_weight:
            add(st, ActionType::backward_input, mb);
            break;
        case ActionType::unshard:
        case ActionType::reshard:
        case ActionType::reduce_grad:
            // Once per stage, ordered by the rank's own list against the
            // stage's compute (check_schedule makes sure).
            break;
    }
    return deps;
}
[[nodiscard]] Dependencies dependencies_of(const Action& a, const Schedule& s);

}  // namespace pipewright
