// The mixture-of-experts and multi-head latent attention fields of the
// decoder families that have them: Mixtral, gpt-oss, Qwen3-MoE and DeepSeek
// V2/V3.
// Each family names the same things differently; this reads them into the
// transformer_block's parameters, and says which blocks stay dense.
#include <algorithm>
#include <string>

#include "io/hf_config_internal.h"

namespace pipewright {

namespace {

bool deepseek(const HfModel& out) {
    return out.architecture == "DeepseekV2ForCausalLM" ||
           out.architecture == "DeepseekV3ForCausalLM";
}

}  // namespace

bool read_experts(const nlohmann::json& config, HfModel& out, std::int64_t layers,
                  DecoderLayout& layout, Diagnostics& d) {
    const std::string& arch = out.architecture;
    // gpt-oss names its experts as Mixtral does, each as wide as
    // intermediate_size.
    const bool mixtral = arch == "MixtralForCausalLM" || arch == "GptOssForCausalLM";
    const bool qwen = arch == "Qwen3MoeForCausalLM";
    if (!mixtral && !qwen && !deepseek(out)) {
        return true;
    }
    const std::size_t before = d.size();
    const JsonObject r(config, d);
    const char* experts_key = mixtral ? "num_local_experts"
                              : qwen  ? "num_experts"
                                      : "n_routed_experts";
    const auto experts = r.integer(experts_key, Need::required, 1, kMaxWidth);
    const auto top_k = r.integer("num_experts_per_tok", Need::required, 1, kMaxWidth);
    const auto width =
        mixtral ? std::nullopt : r.integer("moe_intermediate_size", Need::required, 1, kMaxWidth);
    const std::int64_t shared =
        deepseek(out) ? optional_integer(r, config, "n_shared_experts", 0).value_or(0) : 0;
    if (experts && top_k && *top_k > *experts) {
        r.field("num_experts_per_tok", Need::required)
            ->error("must be at most " + std::string(experts_key) + " = " +
                    std::to_string(*experts));
    }
    // Which blocks keep a dense MLP: DeepSeek's first few (and all but every
    // moe_layer_freq-th), Qwen's mlp_only_layers and all but every
    // decoder_sparse_step-th.
    std::vector<bool> dense(static_cast<std::size_t>(layers), false);
    if (deepseek(out)) {
        const auto first = optional_integer(r, config, "first_k_dense_replace", 0).value_or(0);
        const auto every = optional_integer(r, config, "moe_layer_freq", 1).value_or(1);
        for (std::int64_t i = 0; i < layers; ++i) {
            dense[static_cast<std::size_t>(i)] = i < first || i % every != 0;
        }
    } else if (qwen) {
        const auto step = optional_integer(r, config, "decoder_sparse_step", 1).value_or(1);
        for (std::int64_t i = 0; i < layers; ++i) {
            dense[static_cast<std::size_t>(i)] = (i + 1) % step != 0;
        }
        if (config.contains("mlp_only_layers") && !config.at("mlp_only_layers").is_null()) {
            if (const auto only = r.array("mlp_only_layers", Need::optional)) {
                for (std::size_t k = 0; k < only->size(); ++k) {
                    if (const auto i = only->element(k).integer(0, layers - 1)) {
                        dense[static_cast<std::size_t>(*i)] = true;
                    }
                }
            }
        }
    }
    if (d.size() != before || !experts || !top_k) {
        return false;
    }
    layout.dense_block = layout.block;
    layout.dense = dense;
    nlohmann::json& block = layout.block;
    block["experts"] = *experts;
    block["top_k"] = *top_k;
    if (width) {
        block.erase("ffn_hidden");
        block["expert_ffn_hidden"] = *width;
    }
    if (shared > 0) {
        block["shared_experts"] = shared;
    }
    out.notes.push_back(
        "its routed tokens are priced as spread evenly over the experts; raise the blocks' "
        "capacity_factor to price a busiest expert");
    if (deepseek(out)) {
        out.notes.push_back("its router's group-limited sigmoid scores are priced as a plain top-" +
                            std::to_string(*top_k) + " router: the same experts' work, and " +
                            std::to_string(*experts) + " score-correction biases a block left out");
        if (optional_integer(r, config, "num_nextn_predict_layers", 0).value_or(0) > 0) {
            out.notes.push_back(
                "its multi-token prediction module (num_nextn_predict_layers) is left out, as "
                "in the published 671 B count");
        }
    }
    return true;
}

bool read_latent_attention(const nlohmann::json& config, const HfModel& out, DecoderLayout& layout,
                           Diagnostics& d) {
    if (!deepseek(out)) {
        return true;
    }
    const std::size_t before = d.size();
    const JsonObject r(config, d);
    const auto kv_rank = r.integer("kv_lora_rank", Need::required, 1, kMaxWidth);
    const auto q_rank = optional_integer(r, config, "q_lora_rank", 1);
    const auto nope = r.integer("qk_nope_head_dim", Need::required, 1, kMaxWidth);
    const auto rope = r.integer("qk_rope_head_dim", Need::required, 1, kMaxWidth);
    const auto v = r.integer("v_head_dim", Need::required, 1, kMaxWidth);
    if (d.size() != before || !kv_rank || !nope || !rope || !v) {
        return false;
    }
    for (nlohmann::json* block : {&layout.block, &layout.dense_block}) {
        if (!block->is_object()) {
            continue;
        }
        block->erase("kv_heads");
        (*block)["head_dim"] = *nope;
        (*block)["kv_lora_rank"] = *kv_rank;
        (*block)["rope_head_dim"] = *rope;
        (*block)["v_head_dim"] = *v;
        (*block)["qkv_bias"] = false;
        if (q_rank) {
            (*block)["q_lora_rank"] = *q_rank;
        }
    }
    return true;
}

}  // namespace pipewright
