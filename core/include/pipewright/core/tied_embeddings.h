#pragma once

#include <cstdint>
#include <optional>

#include "pipewright/core/diagnostics.h"
#include "pipewright/core/model.h"

namespace pipewright {

struct AnalyzedProject;

// Tied input and output embeddings (model.tie_word_embeddings, as Hugging
// Face's configs spell it): the output head multiplies by the token
// embedding's own matrix, so the model has one [vocabulary, hidden] weight
// where it seems to have two.
//
// Within one stage the two layers share that tensor. When the embedding and
// the head sit in different stages, each stage keeps a copy, and after every
// backward the two copies' gradients are summed between the stages (as
// Megatron-LM does with its embedding group), so that both take the same
// step and stay equal.
struct TiedEmbeddings {
    int embedding = 0;            // the model's first layer, an embedding
    int head = 0;                 // its last layer, a linear layer without bias
    std::int64_t parameters = 0;  // of the shared matrix
};

// The tie `model` asks for, checked against its layers, or nullopt when it
// does not tie (or the tie cannot hold: each problem then goes to `d`, at
// "model.tie_word_embeddings" or the layer concerned).
[[nodiscard]] std::optional<TiedEmbeddings> tied_embeddings(const Model& model, Diagnostics& d);

// The model's parameters, a tied matrix counted once.
[[nodiscard]] std::int64_t model_parameters(const AnalyzedProject& project);
// Those one token uses: a mixture of experts' routed experts it is not
// sent to left out (model_parameters for a dense model).
[[nodiscard]] std::int64_t model_active_parameters(const AnalyzedProject& project);

// The embedding's and the head's stages when they differ (each then keeps a
// copy, and the copies' gradients are summed), or nullopt.
struct TiedStages {
    int embedding = 0;
    int head = 0;
};
[[nodiscard]] std::optional<TiedStages> tied_stages(const AnalyzedProject& project);

// Whether stage [first, last] (layer indices) holds both tied layers, so that
// its head reuses the embedding's tensor instead of keeping a copy.
[[nodiscard]] bool stage_shares_tied_weight(const std::optional<TiedEmbeddings>& tied, int first,
                                            int last);

}  // namespace pipewright
