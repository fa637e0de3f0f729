#pragma once
// Shared by the readers of Hugging Face configs: the decoder families
// (hf_config.cpp) and GPT-2 (hf_config_gpt2.cpp).
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipewright/core/diagnostics.h"
#include "pipewright/core/hf_config.h"
#include "pipewright/core/json_reader.h"
#include "pipewright/core/model.h"

namespace pipewright {

inline constexpr std::int64_t kMaxWidth = std::numeric_limits<std::int32_t>::max();
// Blocks a config may have: far above any model trained (Llama 3.1 405B has
// 126), and what keeps a mistyped count from building billions of layers.
inline constexpr std::int64_t kMaxConfigBlocks = 10'000;
// The sequence a config is read at when none is asked for: its positions,
// at most this many.
inline constexpr std::int64_t kDefaultSequence = 4096;

// Whether a config gives `key`: configs write null for an unset optional field.
[[nodiscard]] inline bool config_gives(const nlohmann::json& config, const char* key) {
    return config.contains(key) && !config.at(key).is_null();
}

// An optional whole-number field of at least `min` (at most kMaxWidth),
// absent when the config does not give it; a bad value is reported to `r`'s
// diagnostics.
[[nodiscard]] inline std::optional<std::int64_t> optional_integer(const JsonObject& r,
                                                                  const nlohmann::json& config,
                                                                  const char* key,
                                                                  std::int64_t min) {
    return config_gives(config, key) ? r.integer(key, Need::optional, min, kMaxWidth)
                                     : std::nullopt;
}

// A whole-number field of 1 to kMaxWidth: a required one is reported when
// missing, an optional one is absent when the config does not give it.
[[nodiscard]] inline std::optional<std::int64_t> config_integer(const JsonObject& r,
                                                                const nlohmann::json& config,
                                                                const char* key, Need need) {
    return need == Need::optional ? optional_integer(r, config, key, 1)
                                  : r.integer(key, need, 1, kMaxWidth);
}

// A dropout probability the config gives (0 to 0.999), or `fallback` when it
// does not (null included); a bad value is reported to `r`'s diagnostics.
[[nodiscard]] inline std::optional<double> config_probability(const JsonObject& r,
                                                              const nlohmann::json& config,
                                                              const char* key, double fallback) {
    return config_gives(config, key) ? r.number(key, Need::optional, {0, 0.999})
                                     : std::optional<double>(fallback);
}

// How a family names and builds the parts of its decoder.
struct DecoderLayout {
    const char* embedding = "embed_tokens";
    const char* block_prefix = "layers.";  // + the block's index
    const char* norm = "norm";
    const char* norm_type = "rmsnorm";
    nlohmann::json embedding_params;  // besides num_embeddings and embedding_dim
    nlohmann::json block;             // every transformer block's parameters
    // A mixture of experts' blocks that keep a dense MLP (true at their
    // index), with these parameters instead; empty when all are alike.
    nlohmann::json dense_block;
    std::vector<bool> dense;
    // Parameters that differ block by block (Gemma 2's sliding window on
    // every other layer), merged into block i's; empty when none do.
    std::vector<nlohmann::json> block_updates;
    std::int64_t blocks = 0;
    std::int64_t hidden = 0;
    std::int64_t vocabulary = 0;
};

// Appends the decoder every family is: the token embedding, the blocks, the
// final norm and the output head (a bias-free linear to the vocabulary).
void append_decoder(Model& model, const DecoderLayout& layout);

// The blocks' sliding attention windows: the config's layer_types where it
// lists them, else its family's pattern (every block for Mistral and
// Qwen's use_sliding_window, every other from the first for Gemma 2 and
// gpt-oss, five local to one global for Gemma 3). A window no shorter than
// the sequence is none. False (reported to `d`) for a malformed field.
[[nodiscard]] bool read_sliding_windows(const nlohmann::json& config, const HfModel& out,
                                        std::int64_t sequence, std::int64_t layers,
                                        nlohmann::json& block, DecoderLayout& layout,
                                        Diagnostics& d);
// Mixtral's, gpt-oss's, Qwen3-MoE's and DeepSeek's experts: the routed blocks'
// parameters in layout.block, the dense ones' in layout.dense_block; false
// (reported to `d`) when a field is missing or malformed. Other families
// are left as they are.
[[nodiscard]] bool read_experts(const nlohmann::json& config, HfModel& out, std::int64_t layers,
                                DecoderLayout& layout, Diagnostics& d);
// DeepSeek's multi-head latent attention, in every block's parameters.
[[nodiscard]] bool read_latent_attention(const nlohmann::json& config, const HfModel& out,
                                         DecoderLayout& layout, Diagnostics& d);

// Gemma3ForConditionalGeneration's text_config, Gemma3TextConfig's defaults
// for what it leaves out, read as Gemma3ForCausalLM; its problems are
// reported under "text_config.".
[[nodiscard]] std::optional<HfModel> gemma3_text_from_config(const nlohmann::json& config,
                                                             std::int64_t sequence, HfModel out,
                                                             Diagnostics& d);

// A GPT2LMHeadModel config (`out` carries its architecture): learned
// positions, layer norms, biases, a GELU MLP and, by default, the head tied
// to the token embedding.
[[nodiscard]] std::optional<HfModel> gpt2_from_hf_config(const nlohmann::json& config,
                                                         std::int64_t sequence, HfModel out,
                                                         Diagnostics& d);

}  // namespace pipewright
