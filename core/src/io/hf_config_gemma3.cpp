// Gemma 3 as Google publishes its 4B, 12B and 27B models: a
// Gemma3ForConditionalGeneration whose text_config gives the decoder and
// leaves out whatever equals transformers' Gemma3TextConfig defaults. The
// decoder is what a language model trains; the vision encoder is left out.
#include <string>

#include "io/hf_config_internal.h"

namespace pipewright {

namespace {

// transformers' Gemma3TextConfig defaults, for what a text_config leaves out.
nlohmann::json gemma3_text_defaults() {
    return {{"architectures", {"Gemma3ForCausalLM"}},
            {"model_type", "gemma3_text"},
            {"vocab_size", 262'208},
            {"hidden_size", 2304},
            {"intermediate_size", 9216},
            {"num_hidden_layers", 26},
            {"num_attention_heads", 8},
            {"num_key_value_heads", 4},
            {"head_dim", 256},
            {"hidden_activation", "gelu_pytorch_tanh"},
            {"max_position_embeddings", 131'072},
            {"tie_word_embeddings", true},
            {"attention_bias", false},
            {"attention_dropout", 0.0},
            {"sliding_window", 4096},
            {"sliding_window_pattern", 6}};
}

}  // namespace

std::optional<HfModel> gemma3_text_from_config(const nlohmann::json& config, std::int64_t sequence,
                                               HfModel out, Diagnostics& d) {
    const JsonObject r(config, d);
    const auto text = r.object("text_config", Need::required);
    if (!text || !text->ok()) {
        return std::nullopt;
    }
    nlohmann::json decoder = gemma3_text_defaults();
    for (const auto& [key, value] : text->value().json().items()) {
        if (!value.is_null() && key != "architectures") {
            decoder[key] = value;
        }
    }
    Diagnostics inner;
    auto model = model_from_hf_config(decoder, sequence, inner);
    for (const Diagnostic& problem : inner.items()) {
        d.add(problem.path.empty() ? "text_config" : "text_config." + problem.path,
              problem.message);
    }
    if (!model) {
        return std::nullopt;
    }
    model->architecture = out.architecture;
    if (const auto name = r.string("model_type", Need::optional)) {
        model->model.name = *name;
    }
    model->notes.insert(model->notes.begin(),
                        "its vision encoder and projector are left out: the project trains the "
                        "text decoder");
    return model;
}

}  // namespace pipewright
