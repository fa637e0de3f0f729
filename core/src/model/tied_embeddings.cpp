#include "pipewright/core/tied_embeddings.h"

#include <string>

#include "pipewright/core/analysis.h"
#include "pipewright/core/layer_catalog.h"

namespace pipewright {

namespace {

constexpr const char* kField = "model.tie_word_embeddings";

std::string layer_path(std::size_t i) {
    return "model.layers[" + std::to_string(i) + "]";
}

std::string whole(double v) {
    return std::to_string(static_cast<std::int64_t>(v));
}

}  // namespace

std::optional<TiedEmbeddings> tied_embeddings(const Model& model, Diagnostics& d) {
    if (!model.tie_word_embeddings || model.layers.empty()) {
        return std::nullopt;
    }
    const std::size_t last = model.layers.size() - 1;
    const LayerSpec& embedding = model.layers.front();
    const LayerSpec& head = model.layers[last];
    const std::size_t before = d.size();
    if (embedding.type != "embedding") {
        d.add(kField, "tied embeddings need the first layer to be an embedding, but " +
                          layer_path(0) + " (\"" + embedding.name + "\") is a " + embedding.type +
                          " layer");
    }
    if (head.type != "linear") {
        d.add(kField, "tied embeddings need the last layer to be the linear output head, but " +
                          layer_path(last) + " (\"" + head.name + "\") is a " + head.type +
                          " layer");
    }
    if (d.size() != before) {
        return std::nullopt;
    }
    // Unusable values are reported by the layers' own analysis.
    try {
        const double vocabulary = layer_param(embedding, "num_embeddings");
        const double hidden = layer_param(embedding, "embedding_dim");
        if (layer_param(head, "bias") != 0) {
            d.add(layer_path(last) + ".bias",
                  "a head tied to the embedding has no bias: set \"bias\": false");
        }
        if (layer_param(head, "in_features") != hidden ||
            layer_param(head, "out_features") != vocabulary) {
            d.add(kField,
                  "the head \"" + head.name + "\" maps " + whole(layer_param(head, "in_features")) +
                      " to " + whole(layer_param(head, "out_features")) +
                      " features, but a head tied to the embedding maps its " + whole(hidden) +
                      " to its " + whole(vocabulary) + " (embedding_dim to num_embeddings)");
        }
        if (d.size() != before) {
            return std::nullopt;
        }
        return TiedEmbeddings{0, static_cast<int>(last),
                              static_cast<std::int64_t>(vocabulary * hidden)};
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

std::int64_t model_parameters(const AnalyzedProject& project) {
    std::int64_t total = 0;
    for (const LayerAnalysis& l : project.layers) {
        total += l.parameters;
    }
    return project.tied ? total - project.tied->parameters : total;
}

std::int64_t model_active_parameters(const AnalyzedProject& project) {
    std::int64_t inactive = 0;
    for (const LayerAnalysis& l : project.layers) {
        inactive += l.inactive_parameters;
    }
    return model_parameters(project) - inactive;
}

std::optional<TiedStages> tied_stages(const AnalyzedProject& project) {
    if (!project.tied) {
        return std::nullopt;
    }
    const auto stage_of = [&project](int layer) {
        for (const PipelineStage& s : project.stages) {
            if (s.first_layer <= layer && layer <= s.last_layer) {
                return s.index;
            }
        }
        return -1;
    };
    const TiedStages stages{stage_of(project.tied->embedding), stage_of(project.tied->head)};
    if (stages.embedding < 0 || stages.head < 0 || stages.embedding == stages.head) {
        return std::nullopt;
    }
    return stages;
}

bool stage_shares_tied_weight(const std::optional<TiedEmbeddings>& tied, int first, int last) {
    return tied && first <= tied->embedding && tied->head <= last;
}

}  // namespace pipewright
