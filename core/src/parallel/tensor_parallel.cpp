#include "pipewright/core/tensor_parallel.h"

#include "pipewright/core/transformer_dims.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace pipewright {

namespace {

bool is_elementwise(std::string_view type) {
    return type == "relu" || type == "gelu" || type == "dropout";
}

// A layer kept whole on every device: split along the sequence (its compute
// and activations) under sequence parallelism.
TensorShare whole(const TensorParallel& tp) {
    TensorShare s;
    if (tp.sequence_parallel) {
        s.split = TensorSplit::sequence;
        s.compute = s.stash = s.weight_stash = 1.0 / tp.size;
    }
    return s;
}

class Splitter {
  public:
    Splitter(const Model& model, const std::vector<LayerAnalysis>& layers, const TensorParallel& tp,
             Diagnostics& d)
        : model_(model), layers_(layers), tp_(tp), t_(tp.size), d_(d) {}

    std::vector<TensorShare> run() {
        const std::size_t n = model_.layers.size();
        std::vector<TensorShare> out(n);
        for (std::size_t i = 0; i < n; ++i) {
            const std::string& type = model_.layers[i].type;
            if (type == "transformer_block") {
                out[i] = transformer(i);
            } else if (type == "embedding") {
                out[i] = embedding(i);
            } else if (type == "linear") {
                const std::size_t partner = next_linear(i);
                if (partner == n) {
                    out[i] = i + 1 == n && model_.loss == LossKind::cross_entropy
                                 ? vocabulary_output(i)
                                 : gathered_column(i);
                    continue;
                }
                // A pair, with the activations between split too: done at once.
                out[i] = column_parallel(i);
                for (std::size_t k = i + 1; k < partner; ++k) {
                    out[k] = split_elementwise();
                }
                out[partner] = row_parallel(partner);
                i = partner;
            } else if (is_elementwise(type) || type == "layernorm" || type == "rmsnorm" ||
                       type == "flatten") {
                out[i] = whole(tp_);
            } else {
                refuse(i, type +
                              " layers cannot be split across a tensor-parallel group (only "
                              "transformer_block, linear, embedding, layernorm, rmsnorm and "
                              "activations can)");
            }
        }
        return out;
    }

  private:
    [[nodiscard]] std::string path(std::size_t i) const {
        return "model.layers[" + std::to_string(i) + "]";
    }
    void refuse(std::size_t i, const std::string& why) {
        d_.add(path(i), why + "; use tensor_parallel.size 1 for this model");
    }
    // t must divide `value` (the parameter `name` of layer i).
    bool divides(std::size_t i, double value, const std::string& name) {
        const auto v = static_cast<std::int64_t>(value);
        if (v % t_ == 0) {
            return true;
        }
        const std::int64_t padded = (v + t_ - 1) / t_ * t_;
        d_.add(path(i), "tensor_parallel.size " + std::to_string(t_) + " does not divide " + name +
                            " = " + std::to_string(v) + " of " + printable(model_.layers[i].name) +
                            "; use a size that divides it, or make it " + std::to_string(padded) +
                            (name == "num_embeddings" || name == "out_features"
                                 ? " (Megatron-LM pads a vocabulary so that it splits)"
                                 : ""));
        return false;
    }
    static std::string printable(const std::string& s) { return "\"" + s + "\""; }

    [[nodiscard]] double input_elements(std::size_t i) const {
        return static_cast<double>(
            numel(i == 0 ? model_.input.shape : layers_[i - 1].output_shape));
    }
    [[nodiscard]] double param(std::size_t i, std::string_view name) const {
        return layer_param(model_.layers[i], name);
    }

    // The next linear after i with only activations between, or size().
    [[nodiscard]] std::size_t next_linear(std::size_t i) const {
        for (std::size_t k = i + 1; k < model_.layers.size(); ++k) {
            const std::string& type = model_.layers[k].type;
            if (type == "linear") {
                return k;
            }
            if (!is_elementwise(type)) {
                break;
            }
        }
        return model_.layers.size();
    }

    [[nodiscard]] TensorShare split_elementwise() const {
        TensorShare s;
        s.split = TensorSplit::features;
        s.compute = s.stash = s.weight_stash = 1.0 / t_;
        return s;
    }

    // Column-parallel: the weight's output columns split; its input (kept
    // for the backward) whole; the input's gradient all-reduced.
    TensorShare column_parallel(std::size_t i) {
        TensorShare s;
        s.split = TensorSplit::column;
        (void)divides(i, param(i, "out_features"), "out_features");
        s.compute = s.parameters = 1.0 / t_;
        s.backward_reductions = 1;
        s.backward_elements = input_elements(i);
        return s;
    }
    // Row-parallel: the weight's input rows split, so its (split) input too;
    // the bias whole; the output all-reduced.
    TensorShare row_parallel(std::size_t i) {
        TensorShare s;
        s.split = TensorSplit::row;
        const double in = param(i, "in_features");
        const double out = param(i, "out_features");
        (void)divides(i, in, "in_features");
        const double bias = layer_param(model_.layers[i], "bias") != 0 ? out : 0;
        s.compute = 1.0 / t_;
        s.parameters = (in * out / t_ + bias) / (in * out + bias);
        s.stash = s.weight_stash = 1.0 / t_;
        s.forward_reductions = 1;
        s.forward_elements = layers_[i].output_elements;
        return s;
    }
    // A linear with no partner: column-parallel, its output all-gathered
    // (half an all-reduce's bytes on a ring).
    TensorShare gathered_column(std::size_t i) {
        TensorShare s = column_parallel(i);
        s.forward_reductions = 1;
        s.forward_elements = layers_[i].output_elements / 2;
        return s;
    }

    // The last layer before a cross-entropy loss, with no partner (the LM
    // head): column-parallel with its output kept split over the vocabulary
    // (Megatron-LM's parallel_output), and the loss computed
    // vocabulary-parallel. Its forward reductions are the loss's: the
    // maximum, the sum of the exponentials and the target's logit, each an
    // all-reduce of one value per token (float32 in Megatron-LM, priced here
    // as elements of the training dtype: they are latency-bound). Its
    // backward keeps the column-parallel all-reduce of the input gradient.
    TensorShare vocabulary_output(std::size_t i) {
        TensorShare s = column_parallel(i);
        s.split = TensorSplit::vocabulary_output;
        s.forward_reductions = 3;
        s.forward_elements = layers_[i].output_elements / param(i, "out_features");
        return s;
    }

    TensorShare embedding(std::size_t i) {
        TensorShare s;
        s.split = TensorSplit::vocabulary;
        const double vocabulary = param(i, "num_embeddings");
        (void)divides(i, vocabulary, "num_embeddings");
        s.compute = s.parameters = 1.0 / t_;
        if (const double positions = param(i, "positions"); positions > 0) {
            // A position table is whole on every member (as in Megatron-LM).
            s.parameters = (vocabulary / t_ + positions) / (vocabulary + positions);
        }
        s.forward_reductions = 1;
        s.forward_elements = layers_[i].output_elements;
        return s;
    }

    // Megatron-LM's split: the heads and every MLP's (or expert's) width,
    // with two all-reduces forward and two backward; what each member holds
    // and keeps is block_parameters_on and block_stash (transformer_dims.h).
    TensorShare transformer(std::size_t i) {
        TensorShare s;
        s.split = TensorSplit::block;
        const TransformerDims b = transformer_dims(model_.layers[i]);
        bool ok = divides(i, b.heads, "heads");
        if (b.moe()) {
            ok = divides(i, b.expert_ffn, "each expert's width (expert_ffn_hidden)") && ok;
        } else {
            ok = divides(i, b.ffn, "the MLP width (ffn_hidden, or mlp_ratio × hidden)") && ok;
        }
        const auto g = static_cast<std::int64_t>(b.kv_heads);
        if (!b.latent() && g % t_ != 0 && t_ % g != 0) {
            d_.add(path(i), "tensor_parallel.size " + std::to_string(t_) +
                                " neither divides kv_heads = " + std::to_string(g) + " of " +
                                printable(model_.layers[i].name) +
                                " nor is a multiple of it, so its key/value heads can be "
                                "neither split nor replicated evenly; use a size that divides "
                                "it or that it divides");
            ok = false;
        }
        if (!ok) {
            return s;
        }
        const double h = b.hidden;
        const double L = input_elements(i) / h;
        const BlockStash whole = block_stash(b, L, 1, false);
        const BlockStash local = block_stash(b, L, t_, tp_.sequence_parallel);
        s.stash = local.total / whole.total;
        s.weight_stash = local.weight / whole.weight;
        s.parameters = block_parameters_on(b, t_) / b.parameters();
        // The router and MLA's down projections run whole on every member;
        // the rest of the forward splits.
        const double core = 2 * L * b.heads * (b.qk_head_dim() + b.v_head_dim);
        const double whole_macs = b.matrix_macs_per_token() + core / 2;
        const double replicated = b.replicated_macs_per_token();
        s.compute = ((whole_macs - replicated) / t_ + replicated) / whole_macs;
        s.forward_reductions = 2;
        s.forward_elements = L * h;
        s.backward_reductions = 2;
        s.backward_elements = L * h;
        return s;
    }

    const Model& model_;
    const std::vector<LayerAnalysis>& layers_;
    const TensorParallel& tp_;
    int t_;
    Diagnostics& d_;
};

}  // namespace

std::vector<TensorShare> tensor_shares(const Model& model, const std::vector<LayerAnalysis>& layers,
                                       const TensorParallel& tp, Diagnostics& d) {
    if (tp.size <= 1 || layers.size() != model.layers.size()) {
        return {};
    }
    return Splitter(model, layers, tp, d).run();
}

}  // namespace pipewright
