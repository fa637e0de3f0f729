#include "torchscript_layer.h"

#include <algorithm>
#include <fstream>

#include <torch/csrc/jit/runtime/graph_executor.h>

#include "pipewright/backend/backend_error.h"
#include "pipewright/backend/modules.h"
#include "torchscript_init.h"

namespace pipewright::backend {
namespace {

bool has_children(const torch::jit::Module& m) {
    return m.named_children().size() > 0;
}

// Replaces steps[i] by its own chain, carrying its glue to the first and
// last of the new steps.
void expand(std::vector<ChainStep>& steps, std::size_t i, std::vector<ChainStep> inner) {
    ChainStep outer = std::move(steps[i]);
    inner.front().before.insert(inner.front().before.begin(), outer.before.begin(),
                                outer.before.end());
    inner.back().after.insert(inner.back().after.end(), outer.after.begin(), outer.after.end());
    steps.erase(steps.begin() + static_cast<std::ptrdiff_t>(i));
    steps.insert(steps.begin() + static_cast<std::ptrdiff_t>(i), inner.begin(), inner.end());
}

std::vector<ChainStep> root_chain(const torch::jit::Module& root) {
    auto chain = forward_chain(root, "");
    if (auto* refused = std::get_if<ChainRefusal>(&chain)) {
        throw BackendError("cannot split " + module_type_name(root) +
                           " into layers: " + refused->reason);
    }
    return std::get<std::vector<ChainStep>>(std::move(chain));
}

std::string list(const std::vector<std::string>& names) {
    std::string out;
    for (std::size_t i = 0; i < names.size() && i < 12; ++i) {
        out += (i > 0 ? ", " : "") + names[i];
    }
    return names.size() > 12 ? out + ", …" : out;
}

}  // namespace

torch::jit::Module load_torchscript(const std::filesystem::path& file) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(file, ec)) {
        throw BackendError("cannot read the TorchScript file " + file.string() + ": no such file");
    }
    try {
        return torch::jit::load(file.string());
    } catch (const c10::Error& e) {
        std::string why = e.what_without_backtrace();
        why = why.substr(0, why.find('\n'));
        throw BackendError(file.string() + " is not a TorchScript file that LibTorch can load (" +
                           why +
                           "); write one with torch.jit.script(model).save(path) or "
                           "torch.jit.trace(model, example).save(path)");
    }
}

std::vector<ChainStep> split_module(const torch::jit::Module& root, int depth,
                                    std::vector<std::string>* kept_whole) {
    std::vector<ChainStep> steps = root_chain(root);
    std::vector<int> level(steps.size(), 0);
    for (std::size_t i = 0; i < steps.size();) {
        const auto sub = submodule_at(root, steps[i].path);
        if (level[i] >= depth || !has_children(sub)) {
            ++i;
            continue;
        }
        auto inner = forward_chain(sub, steps[i].path);
        if (auto* refused = std::get_if<ChainRefusal>(&inner)) {
            if (kept_whole != nullptr) {
                kept_whole->push_back(steps[i].path + " (" + steps[i].module_type +
                                      "): " + refused->reason);
            }
            ++i;
            continue;
        }
        auto& chain = std::get<std::vector<ChainStep>>(inner);
        const int next = level[i] + 1;
        const std::size_t n = chain.size();
        expand(steps, i, std::move(chain));
        level.erase(level.begin() + static_cast<std::ptrdiff_t>(i));
        level.insert(level.begin() + static_cast<std::ptrdiff_t>(i), n, next);
    }
    return steps;
}

std::vector<ChainStep> chain_of_paths(const torch::jit::Module& root,
                                      const std::vector<std::string>& paths) {
    std::vector<ChainStep> steps = root_chain(root);
    for (std::size_t i = 0; i < steps.size();) {
        const std::string prefix = steps[i].path + ".";
        const bool inside = std::any_of(paths.begin(), paths.end(), [&](const std::string& p) {
            return p.starts_with(prefix);
        });
        if (!inside) {
            ++i;
            continue;
        }
        auto inner = forward_chain(submodule_at(root, steps[i].path), steps[i].path);
        if (auto* refused = std::get_if<ChainRefusal>(&inner)) {
            throw BackendError("the layers name parts of \"" + steps[i].path +
                               "\", which does not split: " + refused->reason);
        }
        expand(steps, i, std::get<std::vector<ChainStep>>(std::move(inner)));
    }
    std::vector<std::string> found;
    for (const auto& s : steps) {
        found.push_back(s.path);
    }
    if (found != paths) {
        throw BackendError(
            "the torchscript layers of this file must be its submodules in the "
            "order its forward runs them, each once: the file runs " +
            list(found) + "; the project has " + list(paths));
    }
    return steps;
}

TorchScriptLayerImpl::TorchScriptLayerImpl(torch::jit::Module module, ChainStep step)
    : module_(std::move(module)), step_(std::move(step)) {
    // Torch module names may not contain dots.
    auto flat = [](std::string name) {
        std::replace(name.begin(), name.end(), '.', '_');
        return name;
    };
    for (const auto& p : module_.named_parameters(/*recurse=*/true)) {
        if (p.value.requires_grad()) {
            register_parameter(flat(p.name), p.value);
        } else {
            register_buffer(flat(p.name), p.value);  // frozen in the file: stays frozen
        }
    }
    for (const auto& b : module_.named_buffers(/*recurse=*/true)) {
        register_buffer(flat(b.name), b.value);
    }
}

torch::Tensor TorchScriptLayerImpl::forward(torch::Tensor x) {
    // Unoptimised, the executor runs the module's operators one by one, so
    // autograd records one node per operator, as in eager PyTorch. Its
    // optimised graphs differentiate whole subgraphs at once: a zero-bubble
    // schedule's input-gradient and weight-gradient passes each computed
    // both (a block's B + W measured 6.4 ms against 3.4 ms for its whole
    // backward). The flag is per thread.
    const torch::jit::GraphOptimizerEnabledGuard operator_by_operator(false);
    if (x.is_leaf() && x.requires_grad()) {
        // A stage's input is a leaf that needs its gradient; a module that
        // works in place on its input (ReLU(inplace=True)) may not write
        // into a leaf, so it gets a copy.
        x = x.clone();
    }
    x = run_glue(step_.before, std::move(x));
    x = module_.forward({x}).toTensor();
    return run_glue(step_.after, std::move(x));
}

void TorchScriptLayerImpl::train(bool on) {
    torch::nn::Module::train(on);
    module_.train(on);
}

std::string torchscript_file(const LayerSpec& layer) {
    const auto& v = layer.params.value("module", nlohmann::json());
    return v.is_string() ? v.get<std::string>() : std::string();
}

std::string torchscript_path(const LayerSpec& layer) {
    const auto& v = layer.params.value("submodule", nlohmann::json());
    return v.is_string() ? v.get<std::string>() : std::string();
}

bool torchscript_reinitialised(const LayerSpec& layer) {
    return layer.params.value("weights", nlohmann::json("file")) == "seed";
}

TorchScriptLayer TorchScriptLayers::build(int layer, std::uint64_t seed) {
    const auto& spec = model_->layers.at(static_cast<std::size_t>(layer));
    const std::string file = torchscript_file(spec);
    auto it = files_.find(file);
    if (it == files_.end()) {
        File f;
        try {
            f.root = load_torchscript(file);
            std::vector<std::string> paths;
            for (const auto& l : model_->layers) {
                if (l.type == spec.type && torchscript_file(l) == file) {
                    paths.push_back(torchscript_path(l));
                }
            }
            for (auto& s : chain_of_paths(f.root, paths)) {
                std::string path = s.path;
                f.steps.emplace(std::move(path), std::move(s));
            }
        } catch (const BackendError& e) {
            throw BackendError("layer \"" + spec.name + "\": " + e.what());
        }
        it = files_.emplace(file, std::move(f)).first;
    }
    const std::string path = torchscript_path(spec);
    const ChainStep& step = it->second.steps.at(path);
    torch::jit::Module submodule = submodule_at(it->second.root, path);
    if (torchscript_reinitialised(spec)) {
        (void)reinitialise(submodule, seed);
    }
    // A copy of the step: each layer compiles its own glue.
    return TorchScriptLayer(submodule, step);
}

}  // namespace pipewright::backend
