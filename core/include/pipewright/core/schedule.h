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

struct Action {
    int stage = 0;
    ActionType type = ActionType::forward;
    int microbatch = 0;

    bool operator==(const Action&) const = default;
};

// "2F0", "1SEND_B3"
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
    [[nodiscard]] std::size_t action_count() const;

    bool operator==(const Schedule&) const = default;
};

// The actions that must have completed before `a` may start; at most two.
// Actions of the same rank are also ordered by the list itself.
struct Dependencies {
    std::array<Action, 2> items{};
    int count = 0;
};
// `splits_backward` is s.splits_backward(), which scans the whole schedule:
// callers that walk every action pass it once instead of per action.
[[nodiscard]] Dependencies dependencies_of(const Action& a, const Schedule& s,
                                           bool splits_backward);
[[nodiscard]] Dependencies dependencies_of(const Action& a, const Schedule& s);

}  // namespace pipewright
