#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipewright/core/diagnostics.h"
#include "pipewright/core/model.h"

namespace pipewright {

// The decoder architectures whose Hugging Face `config.json` Pipewright
// reads (their `architectures` entry).
[[nodiscard]] const std::vector<std::string>& supported_hf_architectures();

// What a config describes, ready for a project.
struct HfModel {
    Model model;
    std::string architecture;        // "LlamaForCausalLM"
    std::vector<std::string> notes;  // what the model leaves out, in words
};

// The model a Hugging Face `transformers` config describes, at a sequence
// of `sequence` tokens (0: the config's max_position_embeddings, at most
// 4,096): an embedding, its decoder blocks, a final norm and the output
// head. An unknown architecture, a missing or malformed field, or what the
// model cannot describe exactly (tied embeddings) is reported to `d` with
// its field name and nothing is returned.
[[nodiscard]] std::optional<HfModel> model_from_hf_config(const nlohmann::json& config,
                                                          std::int64_t sequence, Diagnostics& d);

}  // namespace pipewright
