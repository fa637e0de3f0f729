#pragma once

// A layer imported from a TorchScript file (`pipewright import`): one
// submodule of the file, run as it is. The core cannot read the file (it
// links no Torch), so the import writes what the analysis needs into the
// layer: the shapes it was traced with, its parameters, FLOPs and stashed
// elements per sample. The analysis checks them and the chain of shapes.

#include <optional>
#include <string>

#include "pipewright/core/diagnostics.h"
#include "pipewright/core/layer.h"
#include "pipewright/core/layer_catalog.h"
#include "pipewright/core/tensor.h"

namespace pipewright {

inline constexpr const char* kTorchScriptLayerType = "torchscript";

[[nodiscard]] const LayerTypeInfo& torchscript_layer_info();

[[nodiscard]] std::optional<LayerAnalysis> analyze_torchscript_layer(const LayerSpec& layer,
                                                                     const Shape& input_shape,
                                                                     DType input_dtype,
                                                                     Diagnostics& diagnostics,
                                                                     const std::string& path);

}  // namespace pipewright
