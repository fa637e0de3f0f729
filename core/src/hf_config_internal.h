#pragma once
// Shared by the readers of Hugging Face configs: the decoder families
// (hf_config.cpp) and GPT-2 (hf_config_gpt2.cpp).
#include <cstdint>
#include <limits>
#include <optional>

#include <nlohmann/json.hpp>

#include "pipewright/core/diagnostics.h"
#include "pipewright/core/hf_config.h"

namespace pipewright {

inline constexpr std::int64_t kMaxWidth = std::numeric_limits<std::int32_t>::max();
// Blocks a config may have: far above any model trained (Llama 3.1 405B has
// 126), and what keeps a mistyped count from building billions of layers.
inline constexpr std::int64_t kMaxConfigBlocks = 10'000;
// The sequence a config is read at when none is asked for: its positions,
// at most this many.
inline constexpr std::int64_t kDefaultSequence = 4096;

// A GPT2LMHeadModel config (`out` carries its architecture): learned
// positions, layer norms, biases, a GELU MLP and, by default, the head tied
// to the token embedding.
[[nodiscard]] std::optional<HfModel> gpt2_from_hf_config(const nlohmann::json& config,
                                                         std::int64_t sequence, HfModel out,
                                                         Diagnostics& d);

}  // namespace pipewright
