#include "layers/context_exchange.h"

#include <vector>

#include "layers/context_chunks.h"

namespace pipewright::backend {
namespace {

// One tag for every message: between two members, messages of one tag
// arrive in the order they were sent, and every member sends in the same
// order.
constexpr int kTag = 0;

// The group travels through autograd's saved data as an address, as the
// tensor-parallel collectives' does: the module that holds it outlives
// every graph built while its stage runs.
std::int64_t address_of(const ContextGroup& group) {
    return reinterpret_cast<std::int64_t>(&group);
}
const ContextGroup& group_at(torch::autograd::AutogradContext* ctx) {
    return *reinterpret_cast<const ContextGroup*>(ctx->saved_data["group"].toInt());
}

// Sends `out` to member `to` while receiving a tensor shaped like it from
// member `from`. NCCL runs a pair's send and receive on one stream, in
// order: were both members of a pair to send first, each would wait for the
// other's receive. Even members therefore send first and odd ones receive
// first (Megatron-LM's order); Gloo posts both without waiting, in either.
torch::Tensor send_receive(const torch::Tensor& out, int to, int from, const ContextGroup& g) {
    std::vector<at::Tensor> sent{g.host_copies ? out.to(torch::kCPU) : out.contiguous()};
    std::vector<at::Tensor> received{torch::empty_like(sent[0])};
    c10::intrusive_ptr<c10d::Work> sending, receiving;
    if (g.rank % 2 == 0) {
        sending = g.group->send(sent, to, kTag);
        receiving = g.group->recv(received, from, kTag);
    } else {
        receiving = g.group->recv(received, from, kTag);
        sending = g.group->send(sent, to, kTag);
    }
    receiving->wait(g.timeout);
    sending->wait(g.timeout);
    return g.host_copies ? received[0].to(out.device()) : received[0];
}

int next_of(const ContextGroup& g) {
    return (g.rank + 1) % g.size;
}
int previous_of(const ContextGroup& g) {
    return (g.rank + g.size - 1) % g.size;
}

// One step of the ring. Forward: the block in hand goes to the next member,
// the previous member's arrives. Backward: the gradient of the block that
// arrived goes back to the member that sent it (the previous), and the
// gradient of the block this member sent comes back from the next.
struct RingStep : torch::autograd::Function<RingStep> {
    static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& block,
                                 std::int64_t group) {
        ctx->saved_data["group"] = group;
        const ContextGroup& g = group_at(ctx);
        return send_receive(block, next_of(g), previous_of(g), g);
    }
    static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                   torch::autograd::variable_list grads) {
        // Autograd hands zeros for an unused output, so every member sends
        // and receives here, whatever its queries made of the block.
        const ContextGroup& g = group_at(ctx);
        return {send_receive(grads[0], previous_of(g), next_of(g), g), torch::Tensor()};
    }
};

// Forward: every member's block, stacked in member order. Backward: each
// member's queries made a gradient for every block; summed over the group,
// block r's sum is member r's gradient (an all-reduce and this member's
// slice: LibTorch 1.13's Gloo has no reduce-scatter).
struct GatherBlocks : torch::autograd::Function<GatherBlocks> {
    static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& block,
                                 std::int64_t group) {
        ctx->saved_data["group"] = group;
        const ContextGroup& g = group_at(ctx);
        std::vector<at::Tensor> input{block.contiguous()};
        std::vector<std::vector<at::Tensor>> output(1);
        for (int r = 0; r < g.size; ++r) {
            output[0].push_back(torch::empty_like(input[0]));
        }
        g.group->allgather(output, input)->wait(g.timeout);
        return torch::stack(output[0]);
    }
    static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                   torch::autograd::variable_list grads) {
        const ContextGroup& g = group_at(ctx);
        std::vector<at::Tensor> sum{grads[0].contiguous().clone()};
        g.group->allreduce(sum)->wait(g.timeout);
        return {sum[0][g.rank], torch::Tensor()};
    }
};

}  // namespace

ContextGroup make_context_group(c10::intrusive_ptr<c10d::Store> store,
                                const std::string& master_host, int in_pipeline, int group,
                                int member, int size, ContextExchange exchange,
                                const torch::Device& device, std::chrono::milliseconds timeout) {
    const std::string prefix =
        "context-" + std::to_string(in_pipeline) + "-" + std::to_string(group) + "/";
    ContextGroup g;
    g.rank = member;
    g.size = size;
    g.exchange = exchange;
    g.timeout = timeout;
#ifndef PIPEWRIGHT_WITH_NCCL
    // Gloo's point-to-point takes host tensors; NCCL moves the blocks device
    // to device.
    g.host_copies = device.is_cuda();
#endif
    g.group =
        make_device_group(std::move(store), prefix, master_host, member, size, device, timeout);
    return g;
}

GroupKeys exchange_keys_values(const torch::Tensor& keys, const torch::Tensor& values,
                               const ContextGroup& group) {
    const std::int64_t length = keys.size(2);
    // Keys and values travel together: one message a step.
    const torch::Tensor mine = torch::stack({keys, values});  // [2, batch, heads, len, dim]
    std::vector<torch::Tensor> blocks;
    std::vector<torch::Tensor> positions;
    if (group.exchange == ContextExchange::ring) {
        // After step s the block in hand is member (rank − s)'s.
        torch::Tensor in_hand = mine;
        blocks.push_back(mine);
        positions.push_back(context_positions(length, group.rank, group.size));
        for (int step = 1; step < group.size; ++step) {
            in_hand = RingStep::apply(in_hand, address_of(group));
            blocks.push_back(in_hand);
            const int owner = (group.rank - step + group.size) % group.size;
            positions.push_back(context_positions(length, owner, group.size));
        }
    } else {
        const torch::Tensor all = GatherBlocks::apply(mine, address_of(group));
        for (int r = 0; r < group.size; ++r) {
            blocks.push_back(all[r]);
            positions.push_back(context_positions(length, r, group.size));
        }
    }
    // One softmax over the concatenated blocks is the attention over the
    // whole sequence, exactly: only the order of the keys differs, and the
    // mask comes from their true positions.
    const torch::Tensor both = torch::cat(blocks, 3);
    return {both[0], both[1], torch::cat(positions).to(keys.device())};
}

}  // namespace pipewright::backend
