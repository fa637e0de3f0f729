#pragma once
// How transfers between stages are named on the wire. A tag is unique per
// stage boundary, micro-batch and direction; a channel groups the tags of
// one boundary and direction, whose micro-batches every schedule sends and
// receives in one order. Gloo matches messages by tag; NCCL has no tags and
// matches them by order, so it gets one communicator per channel.
#include <string>
#include <vector>

#include "pipewright/core/schedule.h"

namespace pipewright::backend {

[[nodiscard]] constexpr int transfer_tag(int boundary, int microbatch, bool backward,
                                         int microbatches) {
    return (boundary * microbatches + microbatch) * 2 + (backward ? 1 : 0);
}

[[nodiscard]] constexpr int transfer_channel(int tag, int microbatches) {
    return tag / (2 * microbatches) * 2 + tag % 2;
}

// For each RECV action of one rank's list, the index of the next RECV on the
// same channel (same kind and stage), or -1: the receive worth posting once
// this one has arrived.
[[nodiscard]] std::vector<int> next_receive_on_channel(const std::vector<Action>& actions);

// One channel's two ends.
struct ChannelEnds {
    int channel = 0;
    int sender = 0;    // rank
    int receiver = 0;  // rank

    bool operator==(const ChannelEnds&) const = default;
};

// Every channel the schedule sends over (between two different ranks), in
// channel order.
[[nodiscard]] std::vector<ChannelEnds> channel_ends(const Schedule& schedule);

// "" when, on every channel between two ranks, the sender posts its sends in
// the order the receiver takes them (what a transport without tags needs);
// otherwise the first channel where they differ, in words.
[[nodiscard]] std::string channel_order_problem(const Schedule& schedule);

}  // namespace pipewright::backend
