#pragma once

// `pipewright import`: a TorchScript file as a project. The module is split
// into layers where its forward is a chain of children (torchscript_chain.h
// in src/), each layer is run once on an example batch to find its output
// shape, parameters, FLOPs and the activations it keeps. The project has
// the devices asked for, its layers on the first of them and its schedule
// and micro-batches chosen for that many stages: the command line splits
// the layers over the devices with the planner (pipewright::best_split).

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "pipewright/core/model.h"
#include "pipewright/core/project.h"
#include "pipewright/core/tensor.h"

namespace pipewright::backend {

struct ImportOptions {
    std::filesystem::path module_file;
    Shape input_shape;  // of one sample
    DType input_dtype = DType::float32;
    LossKind loss = LossKind::cross_entropy;
    int depth = 0;  // levels to descend below the module's children
    int devices = 1;
    std::string device_spec = "cpu";  // device catalog name
    int batch_size = 32;
    int microbatches = 0;                    // 0: chosen from the devices
    std::optional<std::int64_t> vocabulary;  // token ids below it (int64 input)
    // Train from PyTorch's default initialisation drawn from the project
    // seed ("weights": "seed") instead of the file's weights.
    bool reinitialise = false;
    // Bound on measuring one layer: a forward that never returns ends the
    // import with the layer's name instead of hanging it.
    double layer_timeout_s = 600;
};

struct ImportedLayer {
    std::string path;               // submodule path, also the layer's name
    std::string module_type;        // "Bottleneck"
    std::vector<std::string> glue;  // operations run after it ("flatten")
    Shape output_shape;
    std::int64_t parameters = 0;
    double forward_flops = 0;  // per sample
    double stashed_elements = 0;
};

struct ImportResult {
    Project project;
    std::vector<ImportedLayer> layers;
    // Children left whole at this depth because their forward does not split.
    std::vector<std::string> kept_whole;
    // With reinitialise: parameters of classes whose initialisation is not
    // known, which keep the file's values.
    std::vector<std::string> kept_from_file;
};

// Throws BackendError with a message for people (a file that is not
// TorchScript, a forward that does not split, a shape the module refuses).
[[nodiscard]] ImportResult import_torchscript(const ImportOptions& options);

}  // namespace pipewright::backend
