#include "pipewright/core/tensor_parallel.h"

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
                    out[i] = gathered_column(i);
                    continue;
                }
                // A pair, with the activations between split too: done at once.
                out[i] = column_parallel(i);
                for (std::size_t k = i + 1; k < partner; ++k) {
                    out[k] = split_elementwise();
                }
                out[partner] = row_parallel(partner);
                i = partner;
            } else if (is_elementwise(type) || type == "layernorm" || type == "flatten") {
                out[i] = whole(tp_);
            } else {
                refuse(i, type +
                              " layers cannot be split across a tensor-parallel group (only "
                              "transformer_block, linear, embedding, layernorm and "
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

    TensorShare embedding(std::size_t i) {
        TensorShare s;
        s.split = TensorSplit::vocabulary;
        (void)divides(i, param(i, "num_embeddings"), "num_embeddings");
        s.compute = s.parameters = 1.0 / t_;
        s.forward_reductions = 1;
        s.forward_elements = layers_[i].output_elements;
        return s;
    }

    // Korthikanti et al. 2022, per layer and sample at 2 bytes an element:
    // s·h·(34 + 5·a·s/h) whole; s·h·(10 + 24/t + 5·a·s/(h·t)) with tensor
    // parallelism; s·h·(34/t + 5·a·s/(h·t)) with sequence parallelism too
    // (for an MLP ratio r, 34 = 18 + 4r and 24 = 8 + 4r).
    TensorShare transformer(std::size_t i) {
        TensorShare s;
        s.split = TensorSplit::block;
        const double h = param(i, "hidden");
        const double a = param(i, "heads");
        const double r = param(i, "mlp_ratio");
        bool ok = divides(i, a, "heads");
        ok = divides(i, r * h, "the MLP width (mlp_ratio × hidden)") && ok;
        if (!ok) {
            return s;
        }
        const double L = input_elements(i) / h;
        const double t = t_;
        const double attention =
            attention_stash_elements(a, L, layer_param(model_.layers[i], "flash_attention") != 0);
        const double whole_stash = L * h * (9 + 2 * r) + attention;
        const double split_stash = tp_.sequence_parallel
                                       ? whole_stash / t
                                       : 5 * L * h + (4 + 2 * r) * L * h / t + attention / t;
        s.stash = split_stash / whole_stash;
        // W needs the inputs of QKV and fc1 (whole, split along the sequence
        // under sequence parallelism) and of the projection and fc2 (split).
        const double whole_w = L * h * (3 + r);
        const double kept_whole = tp_.sequence_parallel ? 2 * L * h / t : 2 * L * h;
        s.weight_stash = (kept_whole + (1 + r) * L * h / t) / whole_w;
        // The matrices and the biases of QKV and fc1 split; the projection's
        // and fc2's biases and the layer norms whole.
        const double split_params = 4 * h * h + 2 * r * h * h + 3 * h + r * h;
        const double all_params = split_params + 6 * h;
        s.parameters = (split_params / t + 6 * h) / all_params;
        s.compute = 1.0 / t;
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
