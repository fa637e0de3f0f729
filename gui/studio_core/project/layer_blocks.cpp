#include "studio_core/project/layer_blocks.h"

#include <algorithm>

#include "pipewright/core/layer_catalog.h"

namespace pipewright::gui {

namespace {

std::int64_t last_dim(const Shape& s) {
    return s.empty() ? 512 : std::max<std::int64_t>(1, s.back());
}

std::int64_t channels(const Shape& s) {
    return s.size() == 3 ? std::max<std::int64_t>(1, s.front()) : 64;
}

// A value for a required hyper-parameter that makes the layer accept `input`
// and keep its size, which the user then edits in the inspector.
nlohmann::json fitting_value(const ParamSpec& p, const Shape& input) {
    const std::string& n = p.name;
    if (n == "in_features" || n == "out_features" || n == "features" || n == "hidden" ||
        n == "embedding_dim") {
        return last_dim(input);
    }
    if (n == "in_channels" || n == "out_channels" || n == "num_features") {
        return channels(input);
    }
    if (n == "mid_channels") {
        return std::max<std::int64_t>(1, channels(input) / 4);
    }
    if (n == "kernel_size") {
        return 3;
    }
    if (n == "heads") {
        const std::int64_t h = last_dim(input);
        for (std::int64_t candidate : {16, 8, 4, 2}) {
            if (h % candidate == 0 && h / candidate >= 32) {
                return candidate;
            }
        }
        return 1;
    }
    if (n == "num_embeddings") {
        return 32000;
    }
    if (p.kind == ParamKind::boolean) {
        return p.default_value != 0;
    }
    if (p.kind == ParamKind::choice) {
        return p.default_text();
    }
    if (p.kind == ParamKind::integer) {
        return static_cast<std::int64_t>(p.default_value > 0 ? p.default_value : 1);
    }
    return p.default_value;
}

LayerSpec fitted(const std::string& type, const Shape& input) {
    LayerSpec layer;
    layer.type = type;
    layer.name = type;
    if (const LayerTypeInfo* info = find_layer_type(type)) {
        for (const ParamSpec& p : info->params) {
            if (p.required) {
                layer.params[p.name] = fitting_value(p, input);
            }
        }
    }
    return layer;
}

}  // namespace

const std::vector<BlockInfo>& layer_blocks() {
    static const std::vector<BlockInfo> blocks = {
        {"mlp", "MLP", "linear (4× wider), GELU, linear back to the input width"},
        {"transformer", "Transformer block", "one GPT-style pre-LN block at the input width"},
        {"resnet_stage", "ResNet-50 stage",
         "three bottleneck blocks keeping the channels (like layer1 of ResNet-50)"},
    };
    return blocks;
}

std::vector<LayerSpec> make_palette_entry(const std::string& entry, const Shape& input) {
    const auto colon = entry.find(':');
    if (colon == std::string::npos) {
        return {};
    }
    const std::string kind = entry.substr(0, colon);
    const std::string name = entry.substr(colon + 1);
    if (kind == "layer") {
        if (find_layer_type(name) == nullptr) {
            return {};
        }
        return {fitted(name, input)};
    }
    if (kind != "block") {
        return {};
    }
    if (name == "mlp") {
        const std::int64_t width = last_dim(input);
        LayerSpec up = fitted("linear", input);
        up.name = "mlp_up";
        up.params["out_features"] = 4 * width;
        LayerSpec act = fitted("gelu", input);
        act.name = "mlp_act";
        LayerSpec down = fitted("linear", input);
        down.name = "mlp_down";
        down.params["in_features"] = 4 * width;
        return {up, act, down};
    }
    if (name == "transformer") {
        LayerSpec block = fitted("transformer_block", input);
        block.name = "block";
        return {block};
    }
    if (name == "resnet_stage") {
        const std::int64_t c = channels(input);
        std::vector<LayerSpec> out;
        for (int i = 0; i < 3; ++i) {
            LayerSpec b = fitted("resnet_bottleneck", input);
            b.name = "bottleneck";
            b.params["in_channels"] = c;
            b.params["mid_channels"] = std::max<std::int64_t>(1, c / 4);
            b.params["out_channels"] = c;
            out.push_back(std::move(b));
        }
        return out;
    }
    return {};
}

}  // namespace pipewright::gui
