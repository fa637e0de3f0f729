#include "layers/tensor_parallel_layers.h"

#include <algorithm>
#include <map>

#include "layers/causal_attention.h"
#include "layers/decoder_parts.h"
#include "layers/fused_linear.h"
#include "pipewright/backend/backend_error.h"
#include "pipewright/backend/modules.h"
#include "pipewright/core/stage_boundary.h"

namespace pipewright::backend {

namespace {

constexpr std::int64_t kSequenceDim = 1;  // of a [batch, sequence, features] activation

// How the analysis split a linear layer, read from its share: `vocabulary`
// is the head before a cross-entropy loss, its output left split over the
// vocabulary (TensorSplit::vocabulary_output, for the executor's
// vocabulary-parallel loss).
enum class LinearSplit { column, row, gathered, vocabulary };

LinearSplit linear_split(const TensorShare& share) {
    if (share.split == TensorSplit::vocabulary_output) {
        return LinearSplit::vocabulary;
    }
    if (share.forward_reductions == 0) {
        return LinearSplit::column;
    }
    return share.backward_reductions == 0 ? LinearSplit::row : LinearSplit::gathered;
}

// Chunk `rank` of `size` of `t` along `dim`, as a tensor of its own.
torch::Tensor chunk_of(const torch::Tensor& t, std::int64_t dim, int rank, int size) {
    return t.chunk(size, dim)[static_cast<std::size_t>(rank)].contiguous().clone();
}

// The QKV projection's rows (or bias) of this member's heads: its share of
// the query heads, then of the key heads and of the value heads (the whole
// layer's rows are laid out as [query heads | key heads | value heads]).
torch::Tensor heads_of(const torch::Tensor& t, const TransformerDims& d, int rank, int size) {
    const auto q = static_cast<std::int64_t>(d.query_width());
    const auto kv = static_cast<std::int64_t>(d.key_value_width());
    return torch::cat({chunk_of(t.narrow(0, 0, q), 0, rank, size),
                       chunk_of(t.narrow(0, q, kv), 0, rank, size),
                       chunk_of(t.narrow(0, q + kv, kv), 0, rank, size)})
        .contiguous();
}

// fc1's rows (or bias) of this member: its share of the MLP's width, of the
// gate and of the up projection when gated.
torch::Tensor mlp_rows_of(const torch::Tensor& t, const TransformerDims& d, int rank, int size) {
    if (!d.gated()) {
        return chunk_of(t, 0, rank, size);
    }
    const auto halves = t.chunk(2, 0);
    return torch::cat({chunk_of(halves[0], 0, rank, size), chunk_of(halves[1], 0, rank, size)})
        .contiguous();
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
    // `shared`: the weight is another module's parameter (a head tied to
    // the embedding), used here but listed there.
    ColumnParallelLinearImpl(const torch::Tensor& w, const torch::Tensor& b, TensorGroup group,
                             bool gather, bool sequence, bool shared = false)
        : group_(std::move(group)), gather_(gather), sequence_(sequence) {
        weight = shared ? w : register_parameter("weight", w);
        if (b.defined()) {
            bias = register_parameter("bias", b);
        }
    }
    torch::Tensor forward(const torch::Tensor& x) {
        // Under sequence parallelism the input is this member's slice of the
        // sequence: the whole sequence first (its gradient reduce-scattered).
        // The copy comes after the gather, so that the backward sums the
        // members' gradients of the same tokens before each keeps its own.
        const auto input =
            copy_to_group(sequence_ ? gather_from_group(x, group_, kSequenceDim) : x, group_);
        auto y = fused_linear(input, weight, bias);
        return gather_ ? gather_from_group(y, group_) : y;
    }
    TensorGroup group_;
    bool gather_ = false;
    bool sequence_ = false;
    torch::Tensor weight, bias;
};
TORCH_MODULE(ColumnParallelLinear);

// Its input features split; the partial outputs summed over the group, then
// the (whole) bias added once.
struct RowParallelLinearImpl : torch::nn::Module {
    RowParallelLinearImpl(const torch::Tensor& w, const torch::Tensor& b, TensorGroup group,
                          bool sequence)
        : group_(std::move(group)), sequence_(sequence) {
        weight = register_parameter("weight", w);
        if (b.defined()) {
            bias = register_parameter("bias", b);
        }
    }
    torch::Tensor forward(const torch::Tensor& x) {
        auto y = reduce_from_group(fused_linear(x, weight, torch::Tensor()), group_);
        if (sequence_) {
            y = split_to_group(y, group_, kSequenceDim);  // a reduce-scatter
        }
        return bias.defined() ? y + bias : y;
    }
    TensorGroup group_;
    bool sequence_ = false;
    torch::Tensor weight, bias;
};
TORCH_MODULE(RowParallelLinear);

// The vocabulary split: a member looks up the ids in its rows, zeros for
// the others, and the group sums the embeddings. A position table (when
// defined) is whole on every member and added to the sum.
struct VocabParallelEmbeddingImpl : torch::nn::Module {
    VocabParallelEmbeddingImpl(const torch::Tensor& w, const torch::Tensor& p, TensorGroup group,
                               bool sequence)
        : group_(std::move(group)), rows_(w.size(0)), sequence_(sequence) {
        weight = register_parameter("weight", w);
        if (p.defined()) {
            positions = register_parameter("positions", p);
        }
    }
    torch::Tensor forward(const torch::Tensor& ids) {
        const std::int64_t first = rows_ * group_.rank;
        const auto local = ids - first;
        const auto outside = (local < 0).logical_or(local >= rows_);
        const auto looked_up = torch::embedding(weight, local.masked_fill(outside, 0)) *
                               outside.logical_not().unsqueeze(-1).to(weight.scalar_type());
        auto summed = reduce_from_group(looked_up, group_);
        if (positions.defined()) {
            summed = summed + positions.narrow(0, 0, ids.size(-1));
        }
        return sequence_ ? split_to_group(summed, group_, kSequenceDim) : summed;
    }
    TensorGroup group_;
    std::int64_t rows_;
    bool sequence_ = false;
    torch::Tensor weight, positions;
};
TORCH_MODULE(VocabParallelEmbedding);

// The pre-norm causal block of modules.cpp with its heads and MLP split:
// column-parallel QKV and fc1, row-parallel projection and fc2, norms whole.
struct TensorParallelBlockImpl : torch::nn::Module {
    // `mine`: the member's slices of the whole block's parameters.
    TensorParallelBlockImpl(const std::map<std::string, torch::Tensor>& mine,
                            const TransformerDims& d, const TensorGroup& group, bool sequence)
        : group_(group),
          heads_(static_cast<std::int64_t>(d.heads) / group.size),
          kv_heads_(static_cast<std::int64_t>(d.kv_heads) / group.size),
          head_dim_(static_cast<std::int64_t>(d.head_dim)),
          activation_(d.activation),
          rotary_(d.rotary) {
        const auto optional = [&mine](const std::string& name) {
            const auto it = mine.find(name);
            return it == mine.end() ? torch::Tensor() : it->second;
        };
        const auto hidden = static_cast<std::int64_t>(d.hidden);
        norm1 = norm(mine, "ln1", d.rms_norm, hidden);
        register_module("ln1", norm1.ptr());
        qkv =
            register_module("qkv", ColumnParallelLinear(mine.at("qkv.weight"), optional("qkv.bias"),
                                                        group, false, sequence));
        proj = register_module("proj", RowParallelLinear(mine.at("proj.weight"),
                                                         optional("proj.bias"), group, sequence));
        norm2 = norm(mine, "ln2", d.rms_norm, hidden);
        register_module("ln2", norm2.ptr());
        fc1 =
            register_module("fc1", ColumnParallelLinear(mine.at("fc1.weight"), optional("fc1.bias"),
                                                        group, false, sequence));
        fc2 = register_module(
            "fc2", RowParallelLinear(mine.at("fc2.weight"), optional("fc2.bias"), group, sequence));
    }

    // The whole norm `name`, with the whole block's weights.
    static torch::nn::AnyModule norm(const std::map<std::string, torch::Tensor>& mine,
                                     const std::string& name, bool rms, std::int64_t hidden) {
        torch::nn::AnyModule n = make_norm(rms, hidden);
        const torch::NoGradGuard no_grad;
        for (auto& p : n.ptr()->named_parameters()) {
            p.value().copy_(mine.at(name + "." + p.key()));
        }
        return n;
    }

    torch::Tensor forward(torch::Tensor x) {
        const torch::Tensor q = qkv(norm1.forward(x));
        x = x + proj(recompute_core
                         ? recomputed_causal_attention(q, heads_, kv_heads_, head_dim_, rotary_)
                         : causal_attention(q, heads_, kv_heads_, head_dim_, rotary_));
        return x + fc2(mlp_activation(fc1(norm2.forward(x)), activation_));
    }

    TensorGroup group_;
    std::int64_t heads_, kv_heads_, head_dim_;
    MlpActivation activation_;
    bool rotary_;
    // Selective recomputation (training.activation_checkpointing "selective").
    bool recompute_core = false;
    torch::nn::AnyModule norm1, norm2;
    ColumnParallelLinear qkv{nullptr}, fc1{nullptr};
    RowParallelLinear proj{nullptr}, fc2{nullptr};
};
TORCH_MODULE(TensorParallelBlock);

// How a member holds parameter `name` of layer `layer`: whole, a slice of
// its rows or columns, or the rows of its heads (QKV).
enum class ParameterSplit { whole, rows, columns, heads, mlp_rows };

ParameterSplit parameter_split(const AnalyzedProject& project, int layer, const std::string& name) {
    const LayerSpec& spec = project.project.model.layers.at(static_cast<std::size_t>(layer));
    const TensorShare& share = project.tensor_shares.at(static_cast<std::size_t>(layer));
    if (spec.type == "linear") {
        if (linear_split(share) == LinearSplit::row) {
            return name == "weight" ? ParameterSplit::columns : ParameterSplit::whole;
        }
        return ParameterSplit::rows;
    }
    if (spec.type == "embedding") {
        return name == "weight" ? ParameterSplit::rows : ParameterSplit::whole;
    }
    if (spec.type == "transformer_block") {
        if (name == "qkv.weight" || name == "qkv.bias") {
            return ParameterSplit::heads;
        }
        if (name == "fc1.weight" || name == "fc1.bias") {
            return ParameterSplit::mlp_rows;
        }
        if (name == "proj.weight" || name == "fc2.weight") {
            return ParameterSplit::columns;
        }
    }
    return ParameterSplit::whole;
}

// Member `rank` of `size`'s slice of a whole parameter of `spec`, a tensor
// of its own.
torch::Tensor slice_of(const torch::Tensor& whole, const LayerSpec& spec, ParameterSplit split,
                       int rank, int size) {
    switch (split) {
        case ParameterSplit::rows:
            return chunk_of(whole, 0, rank, size);
        case ParameterSplit::columns:
            return chunk_of(whole, 1, rank, size);
        case ParameterSplit::heads:
            return heads_of(whole, transformer_dims(spec), rank, size);
        case ParameterSplit::mlp_rows:
            return mlp_rows_of(whole, transformer_dims(spec), rank, size);
        case ParameterSplit::whole:
            break;
    }
    return whole.clone();
}

// Member `group.rank`'s module of layer `i`, cut from the whole one.
torch::nn::AnyModule cut_layer(const AnalyzedProject& project, int i,
                               const torch::nn::AnyModule& whole, const TensorGroup& group) {
    const LayerSpec& spec = project.project.model.layers[static_cast<std::size_t>(i)];
    const TensorShare& share = project.tensor_shares.at(static_cast<std::size_t>(i));
    const bool sequence = project.project.tensor_parallel.sequence_parallel;
    const torch::NoGradGuard no_grad;
    // This member's slice of every parameter, as parameter_split says.
    std::map<std::string, torch::Tensor> mine;
    for (const auto& [name, tensor] : parameters_of(whole)) {
        mine.emplace(name, slice_of(tensor, spec, parameter_split(project, i, name), group.rank,
                                    group.size));
    }
    const auto optional = [&mine](const std::string& name) {
        const auto it = mine.find(name);
        return it == mine.end() ? torch::Tensor() : it->second;
    };
    if (spec.type == "linear") {
        const LinearSplit split = linear_split(share);
        if (split == LinearSplit::row) {
            return torch::nn::AnyModule(
                RowParallelLinear(mine.at("weight"), optional("bias"), group, sequence));
        }
        return torch::nn::AnyModule(ColumnParallelLinear(mine.at("weight"), optional("bias"), group,
                                                         split == LinearSplit::gathered, sequence));
    }
    if (spec.type == "embedding") {
        return torch::nn::AnyModule(
            VocabParallelEmbedding(mine.at("weight"), optional("positions"), group, sequence));
    }
    if (spec.type == "transformer_block") {
        const TransformerDims dims = transformer_dims(spec);
        if (static_cast<int>(dims.kv_heads) % group.size != 0) {
            throw BackendError("layer \"" + spec.name + "\": its " +
                               std::to_string(static_cast<int>(dims.kv_heads)) +
                               " key/value heads do not split over a tensor-parallel group of " +
                               std::to_string(group.size) +
                               "; real runs do not replicate them yet (the simulator does): use "
                               "a tensor-parallel size that divides kv_heads");
        }
        TensorParallelBlock block(mine, dims, group, sequence);
        block->recompute_core = project.project.training.recompute == Recompute::selective;
        return torch::nn::AnyModule(block);
    }
    if (share.parameters < 1) {
        throw BackendError("layer \"" + spec.name + "\": the backend cannot split a " + spec.type +
                           " layer over a tensor-parallel group");
    }
    return whole;  // whole on every member (or elementwise on its slice)
}

// What a member holds of an activation between layers: the whole of it, its
// slice of the features (between a column- and a row-parallel linear, or
// the logits of its slice of the vocabulary after the head), or its slice of
// the sequence (sequence parallelism).
enum class Held { whole, features, sequence };

// What layer i takes and leaves (`replicated`: what the layers that run on
// every member hold, whole or the member's slice of the sequence).
std::pair<Held, Held> held_around(const AnalyzedProject& project, int i, Held now,
                                  Held replicated) {
    const LayerSpec& spec = project.project.model.layers[static_cast<std::size_t>(i)];
    const TensorShare& share = project.tensor_shares.at(static_cast<std::size_t>(i));
    if (spec.type == "embedding") {
        return {Held::whole, replicated};  // token ids in
    }
    if (spec.type == "transformer_block") {
        return {replicated, replicated};
    }
    if (spec.type == "linear") {
        switch (linear_split(share)) {
            case LinearSplit::column:
            case LinearSplit::vocabulary:
                return {replicated, Held::features};
            case LinearSplit::row:
                return {Held::features, replicated};
            case LinearSplit::gathered:
                return {replicated, Held::whole};
        }
    }
    if (spec.type == "layernorm" || spec.type == "rmsnorm") {
        // Its parameters' gradients are summed over the group under sequence
        // parallelism: it must run on the member's slice of the sequence.
        return {replicated, replicated};
    }
    return {now, now};  // activations run on what they are given
}

// A parameterless step between layers that turns what a member holds into
// what the next layer takes.
struct RedistributeImpl : torch::nn::Module {
    RedistributeImpl(TensorGroup group, std::int64_t gather_dim, std::int64_t split_dim)
        : group_(std::move(group)), gather_dim_(gather_dim), split_dim_(split_dim) {}
    torch::Tensor forward(torch::Tensor x) {
        if (gather_dim_ != 0) {
            x = gather_from_group(x, group_, gather_dim_);
        }
        if (split_dim_ != 0) {
            x = split_to_group(x, group_, split_dim_);
        }
        return x;
    }
    TensorGroup group_;
    std::int64_t gather_dim_;  // 0: none
    std::int64_t split_dim_;   // 0: none
};
TORCH_MODULE(Redistribute);

std::int64_t dim_of(Held held) {
    return held == Held::features ? -1 : held == Held::sequence ? kSequenceDim : 0;
}

}  // namespace

torch::nn::Sequential build_tensor_parallel_layers(const AnalyzedProject& project, int first,
                                                   int last, std::uint64_t seed, torch::Dtype dtype,
                                                   const TensorGroup& group) {
    // Whole layers first, in the dtype of the run, so that the slices hold
    // exactly the values a single process trains.
    const torch::nn::Sequential whole = build_layers(project, first, last, seed, dtype);
    torch::nn::Sequential out;
    const auto& layers = project.project.model.layers;
    const Held replicated =
        project.project.tensor_parallel.sequence_parallel ? Held::sequence : Held::whole;
    // What crosses a stage boundary: each member's slice of the sequence
    // under sequence parallelism, as Megatron-LM sends it, else the whole.
    const auto at_boundary = [&](int layer) {
        return boundary_slices(project, layer) > 1 ? Held::sequence : Held::whole;
    };
    Held held = first > 0 ? at_boundary(first - 1) : Held::whole;
    std::shared_ptr<torch::nn::Module> tied_embedding;  // its slice, when this stage holds it
    const auto redistribute = [&](Held want, const std::string& where) {
        if (want != held && !project.tensor_shares.empty()) {
            out->push_back("redistribute_" + where,
                           Redistribute(group, dim_of(held), dim_of(want)));
            held = want;
        }
    };
    int i = first;
    for (const torch::nn::AnyModule& module : *whole) {
        const std::string name = stage_module_name(layers[static_cast<std::size_t>(i)]);
        if (project.tensor_shares.empty()) {
            out->push_back(name, module);
        } else {
            const auto [takes, leaves] = held_around(project, i, held, replicated);
            redistribute(takes, name);
            if (project.tied && i == project.tied->head && tied_embedding) {
                // Tied to this stage's embedding: its slice of the vocabulary.
                out->push_back(name, torch::nn::AnyModule(ColumnParallelLinear(
                                         *tied_embedding->named_parameters(false).find("weight"),
                                         torch::Tensor(), group,
                                         linear_split(project.tensor_shares.at(
                                             static_cast<std::size_t>(i))) == LinearSplit::gathered,
                                         project.project.tensor_parallel.sequence_parallel, true)));
            } else {
                out->push_back(name, cut_layer(project, i, module, group));
                if (project.tied && i == project.tied->embedding) {
                    tied_embedding = out->ptr(out->size() - 1);
                }
            }
            held = leaves;
        }
        ++i;
    }
    if (last + 1 < static_cast<int>(layers.size())) {
        redistribute(at_boundary(last), "output");
    } else if (!vocabulary_split_output(project)) {
        // The model's output stays split over the vocabulary for the loss;
        // any other is whole.
        redistribute(Held::whole, "output");
    }
    out->to(dtype);
    return out;
}

bool vocabulary_split_output(const AnalyzedProject& project) {
    return !project.tensor_shares.empty() &&
           project.tensor_shares.back().split == TensorSplit::vocabulary_output;
}

std::vector<torch::Tensor> sequence_partial_parameters(const AnalyzedProject& project, int first,
                                                       int last,
                                                       const torch::nn::Sequential& stage) {
    std::vector<torch::Tensor> out;
    if (project.tensor_shares.empty() || !project.project.tensor_parallel.sequence_parallel) {
        return out;
    }
    std::map<std::string, int> layer_of;  // module name -> layer index
    for (int i = first; i <= last; ++i) {
        layer_of.emplace(
            stage_module_name(project.project.model.layers[static_cast<std::size_t>(i)]), i);
    }
    for (const auto& p : stage->named_parameters()) {
        const auto dot = p.key().find('.');
        const auto layer = layer_of.find(p.key().substr(0, dot));
        if (layer != layer_of.end() &&
            parameter_split(project, layer->second, p.key().substr(dot + 1)) ==
                ParameterSplit::whole) {
            // Whole on every member, but its layer ran on the member's slice
            // of the sequence. (A split parameter's layer gathered the whole
            // sequence first.)
            out.push_back(p.value());
        }
    }
    return out;
}

torch::Tensor tensor_parallel_slice(const AnalyzedProject& project, int layer,
                                    const std::string& name, const torch::Tensor& whole, int rank,
                                    int size) {
    if (project.tensor_shares.empty() || size <= 1) {
        return whole;
    }
    return slice_of(whole, project.project.model.layers.at(static_cast<std::size_t>(layer)),
                    parameter_split(project, layer, name), rank, size);
}

}  // namespace pipewright::backend
