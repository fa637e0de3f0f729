#include "transport/transfer_channels.h"

#include <map>
#include <utility>
#include <vector>

namespace pipewright::backend {

std::vector<int> next_receive_on_channel(const std::vector<Action>& actions) {
    std::vector<int> next(actions.size(), -1);
    std::map<std::pair<ActionType, int>, std::size_t> last;  // (kind, stage) -> index
    for (std::size_t i = 0; i < actions.size(); ++i) {
        const Action& a = actions[i];
        if (!is_recv(a.type)) {
            continue;
        }
        const auto key = std::make_pair(a.type, a.stage);
        if (const auto it = last.find(key); it != last.end()) {
            next[it->second] = static_cast<int>(i);
        }
        last[key] = i;
    }
    return next;
}

std::vector<ChannelEnds> channel_ends(const Schedule& schedule) {
    std::vector<ChannelEnds> out;
    const auto& ranks = schedule.stage_rank;
    for (std::size_t b = 0; b + 1 < ranks.size(); ++b) {
        if (ranks[b] == ranks[b + 1]) {
            continue;  // both stages on one rank: nothing crosses
        }
        const int boundary = static_cast<int>(b);
        out.push_back({boundary * 2, ranks[b], ranks[b + 1]});      // activations
        out.push_back({boundary * 2 + 1, ranks[b + 1], ranks[b]});  // gradients
    }
    return out;
}

std::string channel_order_problem(const Schedule& schedule) {
    const auto rank_of = [&](int stage) {
        return schedule.stage_rank.at(static_cast<std::size_t>(stage));
    };
    // (boundary, backward) -> micro-batches in the order they are sent / received.
    using Channel = std::pair<int, bool>;
    std::map<Channel, std::vector<int>> sent, received;
    for (const auto& actions : schedule.ranks) {
        for (const Action& a : actions) {
            const int s = a.stage;
            switch (a.type) {
                case ActionType::send_forward:
                    if (rank_of(s + 1) != rank_of(s)) {
                        sent[{s, false}].push_back(a.microbatch);
                    }
                    break;
                case ActionType::send_backward:
                    if (rank_of(s - 1) != rank_of(s)) {
                        sent[{s - 1, true}].push_back(a.microbatch);
                    }
                    break;
                case ActionType::recv_forward:
                    if (rank_of(s - 1) != rank_of(s)) {
                        received[{s - 1, false}].push_back(a.microbatch);
                    }
                    break;
                case ActionType::recv_backward:
                    if (rank_of(s + 1) != rank_of(s)) {
                        received[{s, true}].push_back(a.microbatch);
                    }
                    break;
                default:
                    break;
            }
        }
    }
    for (const auto& [channel, order] : sent) {
        if (received[channel] != order) {
            const auto [boundary, backward] = channel;
            return std::string(backward ? "gradients" : "activations") + " between stages " +
                   std::to_string(boundary) + " and " + std::to_string(boundary + 1) +
                   " are received in another order than they are sent";
        }
    }
    return "";
}

}  // namespace pipewright::backend
