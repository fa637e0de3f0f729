// Which blocks of a decoder attend through a sliding window. Newer configs
// (transformers 4.53 on) list each block's kind in layer_types; older ones
// leave it to the family: Mistral and Phi-3 slide on every block, Qwen where
// use_sliding_window says, Gemma 2 and gpt-oss on every other block from
// the first, Gemma 3 on five blocks of each six (sliding_window_pattern).
#include <algorithm>
#include <string>

#include "io/hf_config_internal.h"

namespace pipewright {

namespace {

// Block i's window under its family's pattern: true where it slides.
bool slides_by_family(const std::string& arch, std::int64_t i, std::int64_t gemma3_pattern) {
    if (arch == "Gemma2ForCausalLM" || arch == "GptOssForCausalLM") {
        return i % 2 == 0;
    }
    if (arch == "Gemma3ForCausalLM") {
        return (i + 1) % gemma3_pattern != 0;
    }
    return true;
}

}  // namespace

bool read_sliding_windows(const nlohmann::json& config, const HfModel& out, std::int64_t sequence,
                          std::int64_t layers, nlohmann::json& block, DecoderLayout& layout,
                          Diagnostics& d) {
    const std::size_t before = d.size();
    const JsonObject r(config, d);
    const std::string& arch = out.architecture;
    const auto window = optional_integer(r, config, "sliding_window", 1);
    std::vector<bool> slides;
    if (config_gives(config, "layer_types")) {
        const auto kinds = r.array("layer_types", Need::optional);
        if (!kinds) {
            return false;
        }
        if (static_cast<std::int64_t>(kinds->size()) != layers) {
            kinds->error("has " + std::to_string(kinds->size()) +
                         (kinds->size() == 1 ? " entry" : " entries") +
                         "; one a block is needed (num_hidden_layers = " + std::to_string(layers) +
                         ")");
            return false;
        }
        for (std::size_t i = 0; i < kinds->size() && !kinds->full(); ++i) {
            const auto local = kinds->element(i).one_of<bool>(
                {{"sliding_attention", true}, {"full_attention", false}});
            slides.push_back(local.value_or(false));
        }
    } else {
        const bool family_slides = arch == "MistralForCausalLM" || arch == "Phi3ForCausalLM" ||
                                   arch == "Gemma2ForCausalLM" || arch == "Gemma3ForCausalLM" ||
                                   arch == "GptOssForCausalLM";
        if (r.boolean("use_sliding_window", Need::optional).value_or(family_slides)) {
            const auto pattern =
                optional_integer(r, config, "sliding_window_pattern", 1).value_or(6);
            for (std::int64_t i = 0; i < layers; ++i) {
                slides.push_back(slides_by_family(arch, i, pattern));
            }
        }
    }
    if (d.size() != before) {
        return false;
    }
    // No window, or one no shorter than the sequence: every block sees it all.
    if (!window || *window >= sequence || slides.empty()) {
        return true;
    }
    if (std::find(slides.begin(), slides.end(), false) == slides.end()) {
        block["sliding_window"] = *window;
        return true;
    }
    for (const bool local : slides) {
        layout.block_updates.push_back(local ? nlohmann::json{{"sliding_window", *window}}
                                             : nlohmann::json::object());
    }
    return true;
}

}  // namespace pipewright
