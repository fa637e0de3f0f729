#include "layers/tensor_parallel_collectives.h"

namespace pipewright::backend {

void all_reduce_in_place(torch::Tensor& x, CollectiveGroup& group, c10d::ReduceOp op) {
    std::vector<at::Tensor> tensors{x};
    c10d::AllreduceOptions options;
    options.reduceOp = op;
    group.allreduce(tensors, options)->wait();
}

namespace {

// The members' copies of `x` (all of one shape), this member's own in its
// place.
std::vector<torch::Tensor> all_gather(const torch::Tensor& x, CollectiveGroup& group, int size) {
    std::vector<at::Tensor> input{x.contiguous()};
    std::vector<std::vector<at::Tensor>> output(1);
    for (int k = 0; k < size; ++k) {
        output[0].push_back(torch::empty_like(input[0]));
    }
    group.allgather(output, input)->wait();
    return output[0];
}

// Forward: the sum over the group; backward: the gradient as it came (each
// member's partial result contributed to the sum with weight one).
struct ReduceFromGroup : torch::autograd::Function<ReduceFromGroup> {
    static torch::Tensor forward(torch::autograd::AutogradContext* /*ctx*/, const torch::Tensor& x,
                                 CollectiveGroup* group) {
        torch::Tensor sum = x.contiguous().clone();
        all_reduce_in_place(sum, *group);
        return sum;
    }
    static torch::autograd::variable_list backward(torch::autograd::AutogradContext* /*ctx*/,
                                                   torch::autograd::variable_list grads) {
        return {grads[0], torch::Tensor()};
    }
};

// Forward: this member's slice along a dimension; backward: the slices of
// the gradient gathered, so that the whole gradient leaves on every member.
struct SplitToGroup : torch::autograd::Function<SplitToGroup> {
    static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                                 CollectiveGroup* group, std::int64_t rank, std::int64_t size,
                                 std::int64_t dim) {
        // The group outlives every graph built while the stage runs.
        ctx->saved_data["group"] = reinterpret_cast<std::int64_t>(group);
        ctx->saved_data["size"] = size;
        ctx->saved_data["dim"] = dim;
        return x.chunk(size, dim)[static_cast<std::size_t>(rank)].contiguous();
    }
    static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                   torch::autograd::variable_list grads) {
        auto* group = reinterpret_cast<CollectiveGroup*>(ctx->saved_data["group"].toInt());
        const auto size = static_cast<int>(ctx->saved_data["size"].toInt());
        const auto dim = ctx->saved_data["dim"].toInt();
        return {torch::cat(all_gather(grads[0], *group, size), dim), torch::Tensor(),
                torch::Tensor(), torch::Tensor(), torch::Tensor()};
    }
};

}  // namespace

TensorGroup make_tensor_group(c10::intrusive_ptr<c10d::Store> store, const std::string& master_host,
                              int leader, int slice, int size, const torch::Device& device,
                              std::chrono::milliseconds timeout) {
    const std::string prefix = "tensor-" + std::to_string(leader) + "/";
    TensorGroup g;
    g.rank = slice;
    g.size = size;
    // Between GPUs the all-reduces run on the devices.
    g.group =
        make_device_group(std::move(store), prefix, master_host, slice, size, device, timeout);
    return g;
}

torch::Tensor copy_to_group(const torch::Tensor& x, const TensorGroup& group) {
    if (group.size <= 1 || !torch::GradMode::is_enabled() || !x.requires_grad()) {
        return x;
    }
    // A view of its own, so that only this use of x gets the summed gradient.
    auto y = x.view_as(x);
    auto members = group.group;
    y.register_hook([members](const torch::Tensor& grad) {
        torch::Tensor sum = grad.contiguous().clone();
        all_reduce_in_place(sum, *members);
        return sum;
    });
    return y;
}

torch::Tensor reduce_from_group(const torch::Tensor& x, const TensorGroup& group) {
    if (group.size <= 1) {
        return x;
    }
    return ReduceFromGroup::apply(x, group.group.get());
}

torch::Tensor gather_from_group(const torch::Tensor& x, const TensorGroup& group,
                                std::int64_t dim) {
    if (group.size <= 1) {
        return x;
    }
    std::vector<torch::Tensor> pieces = all_gather(x.detach(), *group.group, group.size);
    // This member's own slice stays in the graph: the backward of the
    // concatenation hands it its slice of the gradient.
    pieces[static_cast<std::size_t>(group.rank)] = x;
    return torch::cat(pieces, dim);
}

torch::Tensor split_to_group(const torch::Tensor& x, const TensorGroup& group, std::int64_t dim) {
    if (group.size <= 1) {
        return x;
    }
    return SplitToGroup::apply(x, group.group.get(), static_cast<std::int64_t>(group.rank),
                               static_cast<std::int64_t>(group.size), dim);
}

void sum_gradients_over_group(const std::vector<torch::Tensor>& params, const TensorGroup& group) {
    std::vector<torch::Tensor> grads;
    for (const torch::Tensor& p : params) {
        if (p.grad().defined()) {
            grads.push_back(p.grad());
        }
    }
    if (group.size <= 1 || grads.empty()) {
        return;
    }
    const torch::NoGradGuard no_grad;
    std::vector<torch::Tensor> flat;
    for (const torch::Tensor& g : grads) {
        flat.push_back(g.reshape(-1));
    }
    torch::Tensor sum = torch::cat(flat);
    all_reduce_in_place(sum, *group.group);
    std::int64_t at = 0;
    for (torch::Tensor& g : grads) {
        g.copy_(sum.narrow(0, at, g.numel()).view_as(g));
        at += g.numel();
    }
}

}  // namespace pipewright::backend
