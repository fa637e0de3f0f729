#include "tensor_parallel_layers.h"

#include <algorithm>
#include <map>

#include "causal_attention.h"
#include "fused_linear.h"
#include "pipewright/backend/backend_error.h"
#include "pipewright/backend/modules.h"
#ifdef PIPEWRIGHT_WITH_NCCL
#include "transport_nccl.h"
#endif

namespace pipewright::backend {

namespace {

void all_reduce(torch::Tensor& sum, CollectiveGroup& group) {
    std::vector<at::Tensor> tensors{sum};
    group.allreduce(tensors)->wait();
}

// Forward: the sum over the group; backward: the gradient as it came (each
// member's partial result contributed to the sum with weight one).
struct ReduceFromGroup : torch::autograd::Function<ReduceFromGroup> {
    static torch::Tensor forward(torch::autograd::AutogradContext* /*ctx*/, const torch::Tensor& x,
                                 CollectiveGroup* group) {
        torch::Tensor sum = x.contiguous().clone();
        all_reduce(sum, *group);
        return sum;
    }
    static torch::autograd::variable_list backward(torch::autograd::AutogradContext* /*ctx*/,
                                                   torch::autograd::variable_list grads) {
        return {grads[0], torch::Tensor()};
    }
};

// How the analysis split a linear layer, read from its share.
enum class LinearSplit { column, row, gathered };

LinearSplit linear_split(const TensorShare& share) {
    if (share.forward_reductions == 0) {
        return LinearSplit::column;
    }
    return share.backward_reductions == 0 ? LinearSplit::row : LinearSplit::gathered;
}

// Chunk `rank` of `size` of `t` along `dim`, as a tensor of its own.
torch::Tensor chunk_of(const torch::Tensor& t, std::int64_t dim, int rank, int size) {
    return t.chunk(size, dim)[static_cast<std::size_t>(rank)].contiguous().clone();
}

// The QKV projection's rows (or bias) of this member's heads: the same
// heads of each of Q, K and V (the whole layer's rows are laid out as
// [3, heads, head_dim]).
torch::Tensor heads_of(const torch::Tensor& t, int rank, int size) {
    const std::int64_t rows = t.size(0);
    std::vector<std::int64_t> shape{3, size, rows / 3 / size};
    for (std::int64_t d = 1; d < t.dim(); ++d) {
        shape.push_back(t.size(d));
    }
    auto mine = t.reshape(shape).select(1, rank);  // [3, rows / 3 / size, ...]
    std::vector<std::int64_t> out{rows / size};
    for (std::int64_t d = 1; d < t.dim(); ++d) {
        out.push_back(t.size(d));
    }
    return mine.reshape(out).contiguous().clone();
}

std::map<std::string, torch::Tensor> parameters_of(const torch::nn::AnyModule& module) {
    std::map<std::string, torch::Tensor> out;
    for (const auto& p : module.ptr()->named_parameters()) {
        out.emplace(p.key(), p.value());
    }
    return out;
}

// A linear that keeps a slice of a whole one's weight (and bias), under the
// whole one's parameter names.
struct ColumnParallelLinearImpl : torch::nn::Module {
    ColumnParallelLinearImpl(const torch::Tensor& w, const torch::Tensor& b, TensorGroup group,
                             bool gather)
        : group_(std::move(group)), gather_(gather) {
        weight = register_parameter("weight", w);
        if (b.defined()) {
            bias = register_parameter("bias", b);
        }
    }
    torch::Tensor forward(const torch::Tensor& x) {
        auto y = fused_linear(copy_to_group(x, group_), weight, bias);
        return gather_ ? gather_from_group(y, group_) : y;
    }
    TensorGroup group_;
    bool gather_ = false;
    torch::Tensor weight, bias;
};
TORCH_MODULE(ColumnParallelLinear);

// Its input features split; the partial outputs summed over the group, then
// the (whole) bias added once.
struct RowParallelLinearImpl : torch::nn::Module {
    RowParallelLinearImpl(const torch::Tensor& w, const torch::Tensor& b, TensorGroup group)
        : group_(std::move(group)) {
        weight = register_parameter("weight", w);
        if (b.defined()) {
            bias = register_parameter("bias", b);
        }
    }
    torch::Tensor forward(const torch::Tensor& x) {
        auto y = reduce_from_group(fused_linear(x, weight, torch::Tensor()), group_);
        return bias.defined() ? y + bias : y;
    }
    TensorGroup group_;
    torch::Tensor weight, bias;
};
TORCH_MODULE(RowParallelLinear);

// The vocabulary split: a member looks up the ids in its rows, zeros for
// the others, and the group sums the embeddings.
struct VocabParallelEmbeddingImpl : torch::nn::Module {
    VocabParallelEmbeddingImpl(const torch::Tensor& w, TensorGroup group)
        : group_(std::move(group)), rows_(w.size(0)) {
        weight = register_parameter("weight", w);
    }
    torch::Tensor forward(const torch::Tensor& ids) {
        const std::int64_t first = rows_ * group_.rank;
        const auto local = ids - first;
        const auto outside = (local < 0).logical_or(local >= rows_);
        const auto looked_up = torch::embedding(weight, local.masked_fill(outside, 0)) *
                               outside.logical_not().unsqueeze(-1).to(weight.scalar_type());
        return reduce_from_group(looked_up, group_);
    }
    TensorGroup group_;
    std::int64_t rows_;
    torch::Tensor weight;
};
TORCH_MODULE(VocabParallelEmbedding);

// The pre-LN causal block of modules.cpp with its heads and MLP split:
// column-parallel QKV and fc1, row-parallel projection and fc2, layer norms
// whole.
struct TensorParallelBlockImpl : torch::nn::Module {
    TensorParallelBlockImpl(const std::map<std::string, torch::Tensor>& whole, std::int64_t hidden,
                            std::int64_t heads, const TensorGroup& group)
        : group_(group), heads_(heads / group.size), head_dim_(hidden / heads) {
        const int r = group.rank;
        const int t = group.size;
        ln1 = register_module("ln1", layer_norm(whole, "ln1", hidden));
        qkv = register_module(
            "qkv", ColumnParallelLinear(heads_of(whole.at("qkv.weight"), r, t),
                                        heads_of(whole.at("qkv.bias"), r, t), group, false));
        proj = register_module("proj", RowParallelLinear(chunk_of(whole.at("proj.weight"), 1, r, t),
                                                         whole.at("proj.bias").clone(), group));
        ln2 = register_module("ln2", layer_norm(whole, "ln2", hidden));
        fc1 = register_module(
            "fc1", ColumnParallelLinear(chunk_of(whole.at("fc1.weight"), 0, r, t),
                                        chunk_of(whole.at("fc1.bias"), 0, r, t), group, false));
        fc2 = register_module("fc2", RowParallelLinear(chunk_of(whole.at("fc2.weight"), 1, r, t),
                                                       whole.at("fc2.bias").clone(), group));
    }

    static torch::nn::LayerNorm layer_norm(const std::map<std::string, torch::Tensor>& whole,
                                           const std::string& name, std::int64_t hidden) {
        torch::nn::LayerNorm ln(torch::nn::LayerNormOptions({hidden}));
        const torch::NoGradGuard no_grad;
        ln->weight.copy_(whole.at(name + ".weight"));
        ln->bias.copy_(whole.at(name + ".bias"));
        return ln;
    }

    torch::Tensor forward(torch::Tensor x) {
        x = x + proj(causal_attention(qkv(ln1(x)), heads_, head_dim_));
        return x + fc2(torch::gelu(fc1(ln2(x))));
    }

    TensorGroup group_;
    std::int64_t heads_, head_dim_;
    torch::nn::LayerNorm ln1{nullptr}, ln2{nullptr};
    ColumnParallelLinear qkv{nullptr}, fc1{nullptr};
    RowParallelLinear proj{nullptr}, fc2{nullptr};
};
TORCH_MODULE(TensorParallelBlock);

torch::Tensor optional_param(const std::map<std::string, torch::Tensor>& params,
                             const std::string& name) {
    const auto it = params.find(name);
    return it == params.end() ? torch::Tensor() : it->second;
}

// Member `group.rank`'s module of layer `i`, cut from the whole one.
torch::nn::AnyModule cut_layer(const AnalyzedProject& project, int i,
                               const torch::nn::AnyModule& whole, const TensorGroup& group) {
    const LayerSpec& spec = project.project.model.layers[static_cast<std::size_t>(i)];
    const TensorShare& share = project.tensor_shares.at(static_cast<std::size_t>(i));
    const auto params = parameters_of(whole);
    const int r = group.rank;
    const int t = group.size;
    const torch::NoGradGuard no_grad;
    if (spec.type == "linear") {
        const torch::Tensor weight = params.at("weight");
        const torch::Tensor bias = optional_param(params, "bias");
        switch (linear_split(share)) {
            case LinearSplit::column:
            case LinearSplit::gathered:
                return torch::nn::AnyModule(ColumnParallelLinear(
                    chunk_of(weight, 0, r, t), bias.defined() ? chunk_of(bias, 0, r, t) : bias,
                    group, linear_split(share) == LinearSplit::gathered));
            case LinearSplit::row:
                return torch::nn::AnyModule(RowParallelLinear(
                    chunk_of(weight, 1, r, t), bias.defined() ? bias.clone() : bias, group));
        }
    }
    if (spec.type == "embedding") {
        return torch::nn::AnyModule(
            VocabParallelEmbedding(chunk_of(params.at("weight"), 0, r, t), group));
    }
    if (spec.type == "transformer_block") {
        return torch::nn::AnyModule(
            TensorParallelBlock(params, static_cast<std::int64_t>(layer_param(spec, "hidden")),
                                static_cast<std::int64_t>(layer_param(spec, "heads")), group));
    }
    if (share.parameters < 1) {
        throw BackendError("layer \"" + spec.name + "\": the backend cannot split a " + spec.type +
                           " layer over a tensor-parallel group");
    }
    return whole;  // whole on every member (or elementwise on its slice)
}

}  // namespace

TensorGroup make_tensor_group(c10::intrusive_ptr<c10d::Store> store, const std::string& master_host,
                              int leader, int slice, int size, const torch::Device& device,
                              std::chrono::milliseconds timeout) {
    const std::string prefix = "tensor-" + std::to_string(leader) + "/";
    TensorGroup g;
    g.rank = slice;
    g.size = size;
#ifdef PIPEWRIGHT_WITH_NCCL
    // Between GPUs the all-reduces run on the devices.
    if (device.is_cuda()) {
        g.group = make_nccl_group(std::move(store), prefix + "nccl", slice, size, timeout);
        return g;
    }
#else
    (void)device;
#endif
    g.group = make_gloo_group(std::move(store), prefix + "gloo", master_host, slice, size, timeout);
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
        all_reduce(sum, *members);
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

torch::Tensor gather_from_group(const torch::Tensor& x, const TensorGroup& group) {
    if (group.size <= 1) {
        return x;
    }
    std::vector<at::Tensor> input{x.detach().contiguous()};
    std::vector<std::vector<at::Tensor>> output(1);
    for (int k = 0; k < group.size; ++k) {
        output[0].push_back(torch::empty_like(input[0]));
    }
    group.group->allgather(output, input)->wait();
    // This member's own slice stays in the graph: the backward of the
    // concatenation hands it its slice of the gradient.
    output[0][static_cast<std::size_t>(group.rank)] = x;
    return torch::cat(output[0], -1);
}

torch::nn::Sequential build_tensor_parallel_layers(const AnalyzedProject& project, int first,
                                                   int last, std::uint64_t seed, torch::Dtype dtype,
                                                   const TensorGroup& group) {
    // Whole layers first, in the dtype of the run, so that the slices hold
    // exactly the values a single process trains.
    const torch::nn::Sequential whole = build_layers(project, first, last, seed, dtype);
    torch::nn::Sequential out;
    const auto& layers = project.project.model.layers;
    int i = first;
    for (const torch::nn::AnyModule& module : *whole) {
        std::string name = layers[static_cast<std::size_t>(i)].name;
        std::replace(name.begin(), name.end(), '.', '_');
        out->push_back(
            name, project.tensor_shares.empty() ? module : cut_layer(project, i, module, group));
        ++i;
    }
    out->to(dtype);
    return out;
}

torch::Tensor tensor_parallel_slice(const AnalyzedProject& project, int layer,
                                    const std::string& name, const torch::Tensor& whole, int rank,
                                    int size) {
    if (project.tensor_shares.empty() || size <= 1) {
        return whole;
    }
    const LayerSpec& spec = project.project.model.layers.at(static_cast<std::size_t>(layer));
    const TensorShare& share = project.tensor_shares.at(static_cast<std::size_t>(layer));
    if (spec.type == "linear") {
        const LinearSplit split = linear_split(share);
        if (split == LinearSplit::row) {
            return name == "weight" ? chunk_of(whole, 1, rank, size) : whole;
        }
        return chunk_of(whole, 0, rank, size);
    }
    if (spec.type == "embedding") {
        return chunk_of(whole, 0, rank, size);
    }
    if (spec.type == "transformer_block") {
        if (name == "qkv.weight" || name == "qkv.bias") {
            return heads_of(whole, rank, size);
        }
        if (name == "fc1.weight" || name == "fc1.bias") {
            return chunk_of(whole, 0, rank, size);
        }
        if (name == "proj.weight" || name == "fc2.weight") {
            return chunk_of(whole, 1, rank, size);
        }
    }
    return whole;
}

}  // namespace pipewright::backend
