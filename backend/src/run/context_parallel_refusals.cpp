#include "run/context_parallel_refusals.h"

#include <algorithm>
#include <array>
#include <string>
#include <string_view>

#include "pipewright/backend/modules.h"
#include "pipewright/core/layer_catalog.h"

namespace pipewright::backend {
namespace {

// The layers that act on each token alone (or, for a block, exchange keys
// and values with the group): a member runs them on its chunks and gets
// its tokens' rows of what one process gets.
constexpr std::array<std::string_view, 7> kTokenWise = {
    "transformer_block", "layernorm", "rmsnorm", "linear", "relu", "gelu", "dropout"};

}  // namespace

bool refuse_unsupported_context_parallel(const AnalyzedProject& project, Diagnostics& problems) {
    const int size = project.project.context_parallel.size;
    if (size <= 1) {
        return false;
    }
    const std::size_t before = problems.size();
    const std::string c = std::to_string(size);
    if (const int tensor = project.project.tensor_parallel.size; tensor > 1) {
        problems.add("context_parallel.size",
                     c + " with tensor_parallel.size " + std::to_string(tensor) +
                         ": real runs do not combine context and tensor parallelism yet "
                         "(`simulate` prices both); set one of the two to 1 to run");
    }
    // The members split a sequence of tokens and the loss must be a mean
    // over its tokens: an embedding of a 1-D token input first, and every
    // later layer keeping one row per token.
    const Model& model = project.project.model;
    if (model.input.shape.size() != 1 || model.input.dtype != DType::int64 ||
        model.layers.empty() || model.layers.front().type != "embedding") {
        problems.add("model.input",
                     "context parallelism splits a sequence of tokens, and real runs need a model "
                     "that starts with an embedding of a 1-D int64 token input (whose loss is a "
                     "mean over its tokens); set context_parallel.size to 1 to run this one");
        return true;
    }
    const std::int64_t sequence = model.input.shape.front();
    for (std::size_t i = 1; i < model.layers.size(); ++i) {
        const LayerSpec& layer = model.layers[i];
        const std::string path = "model.layers[" + std::to_string(i) + "]";
        const Shape& out = project.layers[i].output_shape;
        const bool token_wise =
            std::find(kTokenWise.begin(), kTokenWise.end(), layer.type) != kTokenWise.end();
        if (!token_wise || out.empty() || out.front() != sequence) {
            problems.add(path, "a " + layer.type + " layer (output " + to_string(out) +
                                   ") with context parallelism: real runs cut every sequence "
                                   "over the group, so every layer must keep one row per token "
                                   "and only a transformer_block may look at other tokens, "
                                   "exchanging its keys and values; set context_parallel.size "
                                   "to 1 to run this model");
            break;
        }
        if (layer.type == "dropout" && layer_param(layer, "p") > 0) {
            problems.add(path,
                         "dropout with context parallelism: the group's members draw their "
                         "masks from the same random stream, so every chunk of a sequence "
                         "would get the same pattern; set its p to 0, or "
                         "context_parallel.size to 1, to run");
        }
        if (const std::string_view field = block_dropout_field(layer); !field.empty()) {
            problems.add(path + "." + std::string(field),
                         "dropout in a block with context parallelism: the group's members "
                         "draw their masks from the same random stream, so every chunk of a "
                         "sequence would get the same pattern; set the block's dropouts to 0, "
                         "or context_parallel.size to 1, to run");
        }
    }
    return problems.size() > before;
}

}  // namespace pipewright::backend
