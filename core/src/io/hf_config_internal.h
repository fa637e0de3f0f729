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
#include "pipewright/core/model.h"

namespace pipewright {

inline constexpr std::int64_t kMaxWidth = std::numeric_limits<std::int32_t>::max();
// Blocks a config may have: far above any model trained (Llama 3.1 405B has
// 126), and what keeps a mistyped count from building billions of layers.
inline constexpr std::int64_t kMaxConfigBlocks = 10'000;
// The sequence a config is read at when none is asked for: its positions,
// at most this many.
inline constexpr std::int64_t kDefaultSequence = 4096;

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
    std::int64_t blocks = 0;
    std::int64_t hidden = 0;
    std::int64_t vocabulary = 0;
};

// Appends the decoder every family is: the token embedding, the blocks, the
// final norm and the output head (a bias-free linear to the vocabulary).
void append_decoder(Model& model, const DecoderLayout& layout);

// Mixtral's, Qwen3-MoE's and DeepSeek's experts: the routed blocks'
// parameters in layout.block, the dense ones' in layout.dense_block; false
// (reported to `d`) when a field is missing or malformed. Other families
// are left as they are.
[[nodiscard]] bool read_experts(const nlohmann::json& config, HfModel& out, std::int64_t layers,
                                DecoderLayout& layout, Diagnostics& d);
// DeepSeek's multi-head latent attention, in every block's parameters.
[[nodiscard]] bool read_latent_attention(const nlohmann::json& config, const HfModel& out,
                                         DecoderLayout& layout, Diagnostics& d);

// A GPT2LMHeadModel config (`out` carries its architecture): learned
// positions, layer norms, biases, a GELU MLP and, by default, the head tied
// to the token embedding.
[[nodiscard]] std::optional<HfModel> gpt2_from_hf_config(const nlohmann::json& config,
                                                         std::int64_t sequence, HfModel out,
                                                         Diagnostics& d);

}  // namespace pipewright
