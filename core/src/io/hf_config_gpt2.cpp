#include <algorithm>
#include <string>

#include "io/hf_config_internal.h"
#include "pipewright/core/json_reader.h"

namespace pipewright {

namespace {

constexpr Need kRequired = Need::required;
constexpr Need kOptional = Need::optional;

// The MLP activation GPT-2's `activation_function` names.
std::optional<std::string> plain_activation(const std::string& act) {
    if (act == "gelu" || act == "gelu_new" || act == "gelu_pytorch_tanh" || act == "gelu_fast") {
        return "gelu";
    }
    if (act == "relu") {
        return "relu";
    }
    return std::nullopt;
}

}  // namespace

std::optional<HfModel> gpt2_from_hf_config(const nlohmann::json& config, std::int64_t sequence,
                                           HfModel out, Diagnostics& d) {
    const std::size_t before = d.size();
    const JsonObject r(config, d);
    const auto given = [&config](const char* key) { return config_gives(config, key); };
    const auto integer = [&r, &config](const char* key, Need need = kRequired) {
        return config_integer(r, config, key, need);
    };
    const auto hidden = integer("n_embd");
    const auto heads = integer("n_head");
    const auto layers = r.integer("n_layer", kRequired, 1, kMaxConfigBlocks);
    const auto vocabulary = integer("vocab_size");
    // Older configs name the context n_ctx.
    const auto positions = integer(given("n_positions") ? "n_positions" : "n_ctx");
    const auto inner = integer("n_inner", kOptional);
    const std::string act = given("activation_function")
                                ? r.string("activation_function", kOptional).value_or("")
                                : "gelu_new";
    const auto activation = plain_activation(act);
    if (!activation) {
        r.field("activation_function", kOptional)
            ->error("the activation \"" + act +
                    "\" is not one Pipewright models for GPT-2's MLP (gelu or relu)");
    }
    if (hidden && heads && *hidden % *heads != 0) {
        r.field("n_head", kRequired)->error("must divide n_embd = " + std::to_string(*hidden));
    }
    // GPT2Config's defaults: 0.1 on the attention and on the residual branches.
    const auto attention_dropout = config_probability(r, config, "attn_pdrop", 0.1);
    const auto hidden_dropout = config_probability(r, config, "resid_pdrop", 0.1);
    if (d.size() != before || !hidden || !heads || !layers || !vocabulary || !positions ||
        !activation || !attention_dropout || !hidden_dropout) {
        return std::nullopt;
    }
    const std::int64_t length = sequence > 0 ? sequence : std::min(kDefaultSequence, *positions);
    if (length > *positions) {
        r.field(given("n_positions") ? "n_positions" : "n_ctx", kRequired)
            ->error("GPT-2's learned positions cover " + std::to_string(*positions) +
                    " tokens, fewer than the sequence of " + std::to_string(length) + " asked for");
        return std::nullopt;
    }

    Model& m = out.model;
    m.name = r.string("model_type", kOptional).value_or("gpt2");
    m.input = {{length}, DType::int64};
    m.loss = LossKind::cross_entropy;
    // PretrainedConfig's default, which GPT-2 keeps.
    m.tie_word_embeddings = r.boolean("tie_word_embeddings", kOptional).value_or(true);
    DecoderLayout layout;
    layout.embedding = "wte";
    layout.block_prefix = "h.";
    layout.norm = "ln_f";
    layout.norm_type = "layernorm";
    layout.embedding_params = {{"positions", *positions}};
    layout.block = {{"hidden", *hidden},
                    {"heads", *heads},
                    {"ffn_hidden", inner.value_or(4 * *hidden)},
                    {"activation", *activation},
                    {"norm", "layernorm"},
                    {"bias", true},
                    {"qkv_bias", true}};
    if (*attention_dropout > 0) {
        layout.block["attention_dropout"] = *attention_dropout;
    }
    if (*hidden_dropout > 0) {
        layout.block["hidden_dropout"] = *hidden_dropout;
    }
    layout.blocks = *layers;
    layout.hidden = *hidden;
    layout.vocabulary = *vocabulary;
    append_decoder(m, layout);
    return out;
}

}  // namespace pipewright
