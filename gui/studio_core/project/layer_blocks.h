#pragma once

#include <string>
#include <vector>

#include "pipewright/core/layer.h"
#include "pipewright/core/tensor.h"

namespace pipewright::gui {

struct BlockInfo {
    std::string name;  // "mlp"
    std::string title;
    std::string description;
};

// Ready-made groups of layers offered by the palette next to single layers.
[[nodiscard]] const std::vector<BlockInfo>& layer_blocks();

// The layers of a palette entry ("layer:linear" or "block:mlp") sized to fit
// after a layer producing `input` (e.g. a linear takes the input's last
// dimension). Names are the types; the caller makes them unique. Empty for an
// unknown entry.
[[nodiscard]] std::vector<LayerSpec> make_palette_entry(const std::string& entry,
                                                        const Shape& input);

}  // namespace pipewright::gui
