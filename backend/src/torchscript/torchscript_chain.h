#pragma once

// How a TorchScript module splits into layers. A module splits where its
// forward is a chain: each child called once, with one tensor, the previous
// child's output (after "glue": functional operations on that output alone,
// such as torch.flatten). Glue runs with the child before it (or, before the
// first child, with the first). Anything else (a value used across a child,
// several inputs, control flow between children, the module's own
// parameters used in forward) is refused with the reason in words, so a
// model is never split where its forward does not split.

#include <memory>
#include <string>
#include <variant>
#include <vector>

#include <torch/csrc/jit/runtime/interpreter.h>
#include <torch/script.h>

namespace pipewright::backend {

// Operations that run on one tensor and return one, cut from a forward.
struct Glue {
    std::shared_ptr<torch::jit::Graph> graph;  // one tensor input, one tensor output
    std::shared_ptr<torch::jit::Code> code;    // the graph, compiled
    std::vector<std::string> ops;              // "flatten", for people to read
};

// One layer of an imported module: a submodule and the glue around it.
struct ChainStep {
    std::string path;         // dotted path from the root module ("layer1.0")
    std::string module_type;  // the submodule's class ("Bottleneck")
    std::vector<Glue> before;
    std::vector<Glue> after;

    [[nodiscard]] std::vector<std::string> glue_ops() const;
};

// Why a module does not split, and where.
struct ChainRefusal {
    std::string reason;
};

// The children of `module` as its forward calls them, or why not.
[[nodiscard]] std::variant<std::vector<ChainStep>, ChainRefusal> forward_chain(
    const torch::jit::Module& module, const std::string& path);

// A module's class name without its TorchScript namespace ("Conv2d").
[[nodiscard]] std::string module_type_name(const torch::jit::Module& module);

// The submodule at a dotted path ("" is the module itself); throws
// BackendError naming the part that is missing.
[[nodiscard]] torch::jit::Module submodule_at(const torch::jit::Module& root,
                                              const std::string& path);

// Runs the glue on x, in order.
[[nodiscard]] torch::Tensor run_glue(const std::vector<Glue>& glue, torch::Tensor x);

}  // namespace pipewright::backend
