#include "pipewright/core/hf_config.h"

#include <algorithm>
#include <limits>

#include "io/hf_config_internal.h"
#include "pipewright/core/json_reader.h"

namespace pipewright {

namespace {

constexpr Need kRequired = Need::required;
constexpr Need kOptional = Need::optional;

// The MLP activation a gated decoder's `hidden_act` names.
std::optional<std::string> gated_activation(const std::string& act) {
    if (act == "silu" || act == "swish") {
        return "swiglu";
    }
    if (act == "gelu" || act == "gelu_new" || act == "gelu_pytorch_tanh" || act == "gelu_fast") {
        return "geglu";
    }
    return std::nullopt;
}

}  // namespace

const std::vector<std::string>& supported_hf_architectures() {
    static const std::vector<std::string> all = {
        "LlamaForCausalLM",      "MistralForCausalLM", "MixtralForCausalLM",
        "Qwen2ForCausalLM",      "Qwen3ForCausalLM",   "Qwen3MoeForCausalLM",
        "Gemma2ForCausalLM",     "Gemma3ForCausalLM",  "Gemma3ForConditionalGeneration",
        "GptOssForCausalLM",     "Phi3ForCausalLM",    "DeepseekV2ForCausalLM",
        "DeepseekV3ForCausalLM", "GPT2LMHeadModel"};
    return all;
}

std::optional<HfModel> model_from_hf_config(const nlohmann::json& config, std::int64_t sequence,
                                            Diagnostics& d) {
    const std::size_t before = d.size();
    const JsonObject r(config, d);
    if (!r.ok()) {
        return std::nullopt;
    }
    std::string supported;
    for (const auto& a : supported_hf_architectures()) {
        supported += (supported.empty() ? "" : ", ") + a;
    }
    HfModel out;
    if (const auto list = r.array("architectures", kRequired)) {
        for (const nlohmann::json& name : list->json()) {
            const auto& known = supported_hf_architectures();
            if (name.is_string() &&
                std::find(known.begin(), known.end(), name.get<std::string>()) != known.end()) {
                out.architecture = name.get<std::string>();
            }
        }
        if (out.architecture.empty()) {
            list->error("no supported architecture in " + list->json().dump() +
                        " (supported: " + supported + ")");
        }
    }
    if (out.architecture.empty()) {
        return std::nullopt;
    }
    if (out.architecture == "GPT2LMHeadModel") {
        return gpt2_from_hf_config(config, sequence, std::move(out), d);
    }
    if (out.architecture == "Gemma3ForConditionalGeneration") {
        return gemma3_text_from_config(config, sequence, std::move(out), d);
    }
    // Configs write null for an unset optional field.
    const auto integer = [&r, &config](const char* key, Need need = kRequired) {
        return config_integer(r, config, key, need);
    };
    const auto hidden = integer("hidden_size");
    const auto heads = integer("num_attention_heads");
    const auto kv_heads = integer("num_key_value_heads", kOptional);
    const auto ffn = integer("intermediate_size");
    const auto layers = r.integer("num_hidden_layers", kRequired, 1, kMaxConfigBlocks);
    const auto vocabulary = integer("vocab_size");
    const auto head_dim = integer("head_dim", kOptional);
    const auto positions = integer("max_position_embeddings", kOptional);
    const bool gemma3 = out.architecture == "Gemma3ForCausalLM";
    // Gemma 3's block is Gemma 2's with a norm on each head's query and key.
    const bool gemma2 = out.architecture == "Gemma2ForCausalLM" || gemma3;
    const bool gpt_oss = out.architecture == "GptOssForCausalLM";
    // Gemma names its MLP's activation hidden_activation.
    const char* act_key =
        gemma2 && config_gives(config, "hidden_activation") ? "hidden_activation" : "hidden_act";
    const auto act = config_gives(config, act_key) ? r.string(act_key, kOptional).value_or("")
                                                   : (gemma2 ? "gelu_pytorch_tanh" : "silu");
    const bool qwen2 = out.architecture == "Qwen2ForCausalLM";
    const bool qk_norm = gemma3 || out.architecture == "Qwen3ForCausalLM" ||
                         out.architecture == "Qwen3MoeForCausalLM";
    // Qwen2 puts biases on q, k and v always; the others when attention_bias.
    const bool attention_bias = r.boolean("attention_bias", kOptional).value_or(false);
    const bool qkv_bias = qwen2 || attention_bias;
    const bool o_bias = !qwen2 && attention_bias;
    // gpt-oss's experts carry biases wherever its attention does.
    const bool mlp_bias = r.boolean("mlp_bias", kOptional).value_or(gpt_oss && attention_bias);
    if (o_bias != mlp_bias) {
        r.field(o_bias ? "attention_bias" : "mlp_bias", kOptional)
            ->error(
                "biases on the attention projection but not on the MLP (or the other way "
                "round) are not modelled: a block has one bias switch for both");
    }
    const auto activation = gated_activation(act);
    if (!activation) {
        r.field(act_key, kOptional)
            ->error("the activation \"" + act +
                    "\" is not one Pipewright models for a gated MLP (silu or gelu)");
    }
    if (kv_heads && heads && *heads % *kv_heads != 0) {
        r.field("num_key_value_heads", kOptional)
            ->error("must divide num_attention_heads = " + std::to_string(*heads));
    }
    // Their attention's dropout (0 in every released config); the residual
    // branches have none, except in Phi-3's config (resid_pdrop, 0 as released).
    const auto attention_dropout = config_probability(r, config, "attention_dropout", 0);
    const auto residual_dropout = config_probability(r, config, "resid_pdrop", 0);
    // Phi-4 mini's rotary embedding on part of each head.
    const auto partial_rotary = config_gives(config, "partial_rotary_factor")
                                    ? r.number("partial_rotary_factor", kOptional, {0, 1})
                                    : std::nullopt;
    if (d.size() != before || !hidden || !heads || !ffn || !layers || !vocabulary || !activation ||
        !attention_dropout || !residual_dropout) {
        return std::nullopt;
    }
    const std::int64_t length =
        sequence > 0 ? sequence : std::min(kDefaultSequence, positions.value_or(kDefaultSequence));

    Model& m = out.model;
    m.name = r.string("model_type", kOptional).value_or("model");
    // Llama's, Mistral's and Qwen's configs default to an output head of its
    // own, Gemma's to the embedding's.
    m.tie_word_embeddings = r.boolean("tie_word_embeddings", kOptional).value_or(gemma2);
    m.input = {{length}, DType::int64};
    m.loss = LossKind::cross_entropy;
    nlohmann::json block = {
        {"hidden", *hidden},  {"heads", *heads},           {"kv_heads", kv_heads.value_or(*heads)},
        {"ffn_hidden", *ffn}, {"activation", *activation}, {"norm", "rmsnorm"},
        {"bias", o_bias},     {"qkv_bias", qkv_bias},      {"rotary", true}};
    if (head_dim && *head_dim * *heads != *hidden) {
        block["head_dim"] = *head_dim;
    }
    if (*attention_dropout > 0) {
        block["attention_dropout"] = *attention_dropout;
    }
    if (*residual_dropout > 0) {
        block["hidden_dropout"] = *residual_dropout;
    }
    if (qk_norm) {
        block["qk_norm"] = true;
    }
    if (gemma2) {
        block["post_norms"] = true;
    }
    DecoderLayout layout;
    layout.blocks = *layers;
    if (!read_sliding_windows(config, out, length, *layers, block, layout, d)) {
        return std::nullopt;
    }
    if (gemma3) {
        out.notes.push_back(
            "Gemma 3's scaled embedding is priced as a plain lookup: it has no parameters");
    } else if (gemma2) {
        out.notes.push_back(
            "Gemma 2's soft-capping of attention and output logits (a tanh) and its scaled "
            "embedding are priced as plain attention and lookup: they have no parameters");
    }
    if (partial_rotary && *partial_rotary < 1) {
        out.notes.push_back(
            "its rotary embedding on part of each head (partial_rotary_factor) is priced as on "
            "the whole head: rotary has no parameters and a few memory-bound passes");
    }
    if (gpt_oss) {
        out.notes.push_back(
            "gpt-oss's attention sinks (a learned logit per head, a parameter each) and its "
            "clamped SwiGLU are priced as plain attention and SwiGLU; its router's bias is left "
            "out");
    }
    layout.block = block;
    if (!read_experts(config, out, *layers, layout, d) ||
        !read_latent_attention(config, out, layout, d)) {
        return std::nullopt;
    }
    layout.hidden = *hidden;
    layout.vocabulary = *vocabulary;
    append_decoder(m, layout);

    return out;
}

void append_decoder(Model& model, const DecoderLayout& layout) {
    LayerSpec embed;
    embed.name = layout.embedding;
    embed.type = "embedding";
    embed.params = {{"num_embeddings", layout.vocabulary}, {"embedding_dim", layout.hidden}};
    if (layout.embedding_params.is_object()) {
        embed.params.update(layout.embedding_params);
    }
    model.layers.push_back(std::move(embed));
    for (std::int64_t i = 0; i < layout.blocks; ++i) {
        LayerSpec l;
        l.name = layout.block_prefix + std::to_string(i);
        l.type = "transformer_block";
        const auto at = static_cast<std::size_t>(i);
        l.params = at < layout.dense.size() && layout.dense[at] ? layout.dense_block : layout.block;
        if (at < layout.block_updates.size()) {
            l.params.update(layout.block_updates[at]);
        }
        model.layers.push_back(std::move(l));
    }
    LayerSpec norm;
    norm.name = layout.norm;
    norm.type = layout.norm_type;
    norm.params = {{"features", layout.hidden}};
    model.layers.push_back(std::move(norm));
    LayerSpec head;
    head.name = "lm_head";
    head.type = "linear";
    head.params = {
        {"in_features", layout.hidden}, {"out_features", layout.vocabulary}, {"bias", false}};
    model.layers.push_back(std::move(head));
}

}  // namespace pipewright
