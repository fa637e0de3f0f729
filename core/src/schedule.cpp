#include "pipewright/core/schedule.h"

#include <cctype>
#include <limits>

#include "schedule_internal.h"

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
    }
    return "?";
}

std::string to_string(const Action& a) {
    std::string out = std::to_string(a.stage);
    out += to_string(a.type);
    out += std::to_string(a.microbatch);
    return out;
}

namespace {

bool is_space(char c) {
    return std::isspace(static_cast<unsigned char>(c)) != 0;
}
bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

// Reads a non-empty run of digits that fits in an int; a stage or micro-batch
// index that overflows is malformed input, not a huge number.
std::optional<int> read_index(std::string_view s, std::size_t& pos) {
    const std::size_t start = pos;
    long long value = 0;
    while (pos < s.size() && is_digit(s[pos])) {
        value = value * 10 + (s[pos] - '0');
        if (value > std::numeric_limits<int>::max()) {
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

std::size_t Schedule::action_count() const {
    std::size_t n = 0;
    for (const auto& actions : ranks) {
        n += actions.size();
    }
    return n;
}

Dependencies dependencies_of(const Action& a, const Schedule& s, bool splits_backward) {
    Dependencies deps;
    const auto add = [&deps](int stage, ActionType type, int mb) {
        deps.items[static_cast<std::size_t>(deps.count++)] = Action{stage, type, mb};
    };
    const int st = a.stage;
    const int mb = a.microbatch;
    const int last = s.num_stages - 1;
    const int here = detail::rank_of_stage(s, st);
    // A neighbour outside the pipeline counts as another rank, which makes a
    // malformed action wait for a RECV that the checker reports as missing.
    const auto same_rank = [&](int other) {
        return here >= 0 && detail::rank_of_stage(s, other) == here;
    };
    switch (a.type) {
        case ActionType::forward:
            if (st > 0) {
                add(same_rank(st - 1) ? st - 1 : st,
                    same_rank(st - 1) ? ActionType::forward : ActionType::recv_forward, mb);
            }
            break;
        case ActionType::recv_forward:
            add(st - 1, ActionType::send_forward, mb);
            break;
        case ActionType::send_forward:
            add(st, ActionType::forward, mb);
            break;
        case ActionType::backward:
        case ActionType::backward_input:
            add(st, ActionType::forward, mb);
            if (st < last) {
                if (same_rank(st + 1)) {
                    add(st + 1, a.type, mb);
                } else {
                    add(st, ActionType::recv_backward, mb);
                }
            }
            break;
        case ActionType::recv_backward:
            add(st + 1, ActionType::send_backward, mb);
            break;
        case ActionType::send_backward:
            add(st, splits_backward ? ActionType::backward_input : ActionType::backward, mb);
            break;
        case ActionType::backward_weight:
            add(st, ActionType::backward_input, mb);
            break;
    }
    return deps;
}

Dependencies dependencies_of(const Action& a, const Schedule& s) {
    // Only SEND_B needs to know the backward kind, and finding out scans the
    // whole schedule, so the scan is skipped for every other action.
    const bool splits = a.type == ActionType::send_backward && s.splits_backward();
    return dependencies_of(a, s, splits);
}

}  // namespace pipewright
