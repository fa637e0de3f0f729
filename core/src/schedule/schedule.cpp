#include "pipewright/core/schedule.h"

#include <cctype>
#include <limits>

#include "schedule/schedule_internal.h"

namespace pipewright {

std::string_view to_string(ActionType t) {
    switch (t) {
        case ActionType::forward:
            return "F";
        case ActionType::backward:
            return "B";
        case ActionType::backward_input:
            return "I";
        case ActionType::backward_weight:
            return "W";
        case ActionType::send_forward:
            return "SEND_F";
        case ActionType::recv_forward:
            return "RECV_F";
        case ActionType::send_backward:
            return "SEND_B";
        case ActionType::recv_backward:
            return "RECV_B";
        case ActionType::unshard:
            return "UNSHARD";
        case ActionType::reshard:
            return "RESHARD";
        case ActionType::reduce_grad:
            return "REDUCE_GRAD";
    }
    return "?";
}

std::string to_string(const Action& a) {
    std::string out = std::to_string(a.stage);
    out += to_string(a.type);
    if (!is_collective(a.type)) {
        out += std::to_string(a.microbatch);
    }
    return out;
}

namespace {

bool is_space(char c) {
    return std::isspace(static_cast<unsigned char>(c)) != 0;
}
bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

// Reads a non-empty run of digits up to kMaxActionIndex; a larger stage or
// micro-batch index is malformed input, not a huge number (and index + 1
// must still fit in an int).
std::optional<int> read_index(std::string_view s, std::size_t& pos) {
    const std::size_t start = pos;
    long long value = 0;
    while (pos < s.size() && is_digit(s[pos])) {
        value = value * 10 + (s[pos] - '0');
        if (value > kMaxActionIndex) {
            return std::nullopt;
        }
        ++pos;
    }
    if (pos == start) {
        return std::nullopt;
    }
    return static_cast<int>(value);
}

}  // namespace

std::optional<Action> parse_action(std::string_view s) {
    while (!s.empty() && is_space(s.front())) {
        s.remove_prefix(1);
    }
    while (!s.empty() && is_space(s.back())) {
        s.remove_suffix(1);
    }
    std::size_t pos = 0;
    const auto stage = read_index(s, pos);
    if (!stage) {
        return std::nullopt;
    }
    // Longest names first so that "SEND_F" is not read as something shorter.
    static constexpr ActionType kTypes[] = {
        ActionType::reduce_grad,    ActionType::unshard,         ActionType::reshard,
        ActionType::send_forward,   ActionType::recv_forward,    ActionType::send_backward,
        ActionType::recv_backward,  ActionType::forward,         ActionType::backward,
        ActionType::backward_input, ActionType::backward_weight,
    };
    std::optional<ActionType> type;
    for (const ActionType t : kTypes) {
        const std::string_view name = to_string(t);
        if (s.substr(pos, name.size()) == name) {
            type = t;
            pos += name.size();
            break;
        }
    }
    if (!type) {
        return std::nullopt;
    }
    if (is_collective(*type)) {
        // PyTorch also writes "2REDUCE_GRAD" with no micro-batch.
        return pos == s.size() ? std::optional<Action>(Action{*stage, *type, 0}) : std::nullopt;
    }
    const auto microbatch = read_index(s, pos);
    if (!microbatch || pos != s.size()) {
        return std::nullopt;
    }
    return Action{*stage, *type, *microbatch};
}

bool Schedule::has_communication() const {
    for (const auto& actions : ranks) {
        for (const auto& a : actions) {
            if (is_send(a.type) || is_recv(a.type)) {
                return true;
            }
        }
    }
    return false;
}

bool Schedule::splits_backward() const {
    for (const auto& actions : ranks) {
        for (const auto& a : actions) {
            if (a.type == ActionType::backward_input || a.type == ActionType::backward_weight) {
                return true;
            }
        }
    }
    return false;
}

bool Schedule::has_collectives() const {
    for (const auto& actions : ranks) {
        for (const auto& a : actions) {
            if (is_collective(a.type)) {
                return true;
            }
        }
    }
    return false;
}

std::size_t Schedule::action_count() const {
    std::size_t n = 0;
    for (const auto& actions : ranks) {
        n += actions.size();
    }
    return n;
}

bool Schedule::operator==(const Schedule& o) const {
    if (name != o.name || num_stages != o.num_stages || num_microbatches != o.num_microbatches ||
        stage_rank != o.stage_rank || ranks != o.ranks) {
        return false;
    }
    for (std::size_t r = 0; r < ranks.size(); ++r) {
        for (std::size_t i = 0; i < ranks[r].size(); ++i) {
            if (ranks[r][i].overlaps_next != o.ranks[r][i].overlaps_next) {
                return false;
            }
        }
    }
    return true;
}

Dependencies dependencies_of(const Action& a, const Schedule& s) {
    // Only the backward and SEND_B need to know the backward kind, and
    // finding out scans the whole schedule, so the scan is skipped for every
    // other action.
    const bool needs = a.type == ActionType::send_backward || a.type == ActionType::backward ||
                       a.type == ActionType::backward_input;
    return dependencies_of(a, s, needs && s.splits_backward());
}

}  // namespace pipewright
