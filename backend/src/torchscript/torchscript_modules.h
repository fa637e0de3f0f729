#pragma once

// Layers of type "torchscript" as Torch modules: submodules of a TorchScript
// file, trained as they are, with the file's weights. (The core's
// model/torchscript_layer.h analyses the same layers without Torch, from the
// figures the import wrote into them.)

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <torch/script.h>
#include <torch/torch.h>

#include "pipewright/core/model.h"
#include "torchscript/torchscript_chain.h"

namespace pipewright::backend {

// What Torch says went wrong, in one line: without the C++ backtrace, and
// of the interpreter's report only its last line ("RuntimeError: ...").
[[nodiscard]] std::string torch_error_reason(const std::exception& e);

// Loads a TorchScript file; throws BackendError saying why it cannot.
[[nodiscard]] torch::jit::Module load_torchscript(const std::filesystem::path& file);

// The chain of a module split `depth` levels below its children: a child
// whose forward is itself a chain is replaced by its children. `kept_whole`
// gets "path (Type): reason" for children with children that do not split.
// Throws BackendError when the module itself does not split.
[[nodiscard]] std::vector<ChainStep> split_module(const torch::jit::Module& root, int depth,
                                                  std::vector<std::string>* kept_whole);

// The chain that has exactly these paths as its steps, in this order;
// throws BackendError when the paths are not a chain of the module.
[[nodiscard]] std::vector<ChainStep> chain_of_paths(const torch::jit::Module& root,
                                                    const std::vector<std::string>& paths);

// One imported submodule with its glue, as a Torch module whose parameters
// and buffers are the submodule's own tensors (an optimizer step on them is
// a step on the TorchScript module).
class TorchScriptLayerImpl : public torch::nn::Module {
  public:
    TorchScriptLayerImpl(torch::jit::Module module, ChainStep step);
    torch::Tensor forward(torch::Tensor x);
    void train(bool on = true) override;

  private:
    torch::jit::Module module_;
    ChainStep step_;
};
TORCH_MODULE(TorchScriptLayer);

// The torchscript layers of a model, built from their files: each file is
// loaded once, and its layers must be its chain.
class TorchScriptLayers {
  public:
    explicit TorchScriptLayers(const Model& model) : model_(&model) {}
    // With the file's weights, or, for a layer with "weights": "seed" or
    // when `from_seed` asks, PyTorch's default initialisation drawn from
    // `seed` (layer_seed of the project seed and the layer's index).
    [[nodiscard]] TorchScriptLayer build(int layer, std::uint64_t seed, bool from_seed = false);

  private:
    struct File {
        torch::jit::Module root;
        std::map<std::string, ChainStep> steps;  // by path
    };
    const Model* model_;
    std::map<std::string, File> files_;
};

// Throws BackendError, naming the file, when the module file of `model`'s
// torchscript layers is not the one they were imported from (its digest,
// recorded as "module_digest", differs).
void check_unchanged(const Model& model, const std::string& file);

// The file and submodule path of a torchscript layer.
[[nodiscard]] std::string torchscript_file(const LayerSpec& layer);
[[nodiscard]] std::string torchscript_path(const LayerSpec& layer);
// Whether the layer asks for fresh weights ("weights": "seed").
[[nodiscard]] bool torchscript_reinitialised(const LayerSpec& layer);

}  // namespace pipewright::backend
