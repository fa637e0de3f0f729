#include "torchscript/torchscript_modules.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <sstream>

#include <torch/csrc/jit/runtime/graph_executor.h>

#include "data/zip_contents.h"
#include "pipewright/backend/backend_error.h"
#include "pipewright/backend/modules.h"
#include "pipewright/core/machine_memory.h"
#include "pipewright/core/printable_name.h"
#include "torchscript/file_digest.h"
#include "torchscript/torchscript_init.h"

namespace pipewright::backend {
namespace {

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

// The module's chain, with each step that `wanted` picks (given its depth
// below the module's children and its submodule) replaced by its own chain,
// again and again; a picked step that does not split goes to `refused` with
// the reason and stays whole.
std::vector<ChainStep> expand_steps(
    const torch::jit::Module& root,
    const std::function<bool(const ChainStep&, int, const torch::jit::Module&)>& wanted,
    const std::function<void(const ChainStep&, const std::string&)>& refused) {
    std::vector<ChainStep> steps = root_chain(root);
    std::vector<int> level(steps.size(), 0);
    for (std::size_t i = 0; i < steps.size();) {
        const auto sub = submodule_at(root, steps[i].path);
        if (!wanted(steps[i], level[i], sub)) {
            ++i;
            continue;
        }
        auto inner = forward_chain(sub, steps[i].path);
        if (const auto* no = std::get_if<ChainRefusal>(&inner)) {
            refused(steps[i], no->reason);
            ++i;
            continue;
        }
        auto chain = std::get<std::vector<ChainStep>>(std::move(inner));
        level[i] += 1;
        level.insert(level.begin() + static_cast<std::ptrdiff_t>(i) + 1, chain.size() - 1,
                     level[i]);
        expand(steps, i, std::move(chain));
    }
    return steps;
}

std::string list(const std::vector<std::string>& names) {
    std::string out;
    for (std::size_t i = 0; i < names.size() && i < 12; ++i) {
        out += (i > 0 ? ", " : "") + names[i];
    }
    return names.size() > 12 ? out + ", …" : out;
}

}  // namespace

std::string torch_error_reason(const std::exception& e) {
    const auto* c10 = dynamic_cast<const c10::Error*>(&e);
    const std::string why = c10 != nullptr ? c10->what_without_backtrace() : e.what();
    std::vector<std::string> lines;
    std::istringstream in(why);
    for (std::string line; std::getline(in, line);) {
        if (line.find_first_not_of(' ') != std::string::npos) {
            lines.push_back(line);
        }
    }
    // The interpreter's traceback ends with the Python exception it raised,
    // "RuntimeError: …" or "builtins.Exception: boom": its own words.
    for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
        const auto colon = it->find(": ");
        if (colon == std::string::npos || colon == 0) {
            continue;
        }
        const std::string kind = it->substr(0, colon);
        const bool identifier = std::all_of(kind.begin(), kind.end(), [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.';
        });
        if (identifier && (kind.ends_with("Error") || kind.ends_with("Exception"))) {
            return it->substr(colon + 2);
        }
    }
    // Else the first line, unless it is the interpreter's preamble.
    for (const auto& line : lines) {
        if (!line.starts_with("The following operation failed")) {
            return line;
        }
    }
    return why;
}

torch::jit::Module load_torchscript(const std::filesystem::path& file) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(file, ec)) {
        throw BackendError("cannot read the TorchScript file " + printable_name(file.string()) +
                           (std::filesystem::exists(file, ec)
                                ? ": not a regular file (a folder or a device); give the .pt "
                                  "file that torch.jit.save wrote"
                                : ": no such file"));
    }
    // A zip whose entries inflate to more than the machine has is refused
    // before LibTorch unpacks it.
    check_unpacked_size(file, "the TorchScript file " + printable_name(file.string()),
                        static_cast<double>(available_memory_bytes()));
    try {
        return torch::jit::load(file.string());
    } catch (const std::bad_alloc&) {
        throw;
    } catch (const std::exception& e) {
        // c10::Error, and the std::runtime_error of TorchScript's parser for
        // code this LibTorch cannot read ("expected a valid token").
        throw BackendError(printable_name(file.string()) +
                           " is not a TorchScript file that LibTorch can load (" +
                           printable_name(torch_error_reason(e)) +
                           "); write one with torch.jit.script(model).save(path) or "
                           "torch.jit.trace(model, example).save(path), with a PyTorch no "
                           "newer than this LibTorch");
    }
}

std::vector<ChainStep> split_module(const torch::jit::Module& root, int depth,
                                    std::vector<std::string>* kept_whole) {
    return expand_steps(
        root,
        [&](const ChainStep&, int level, const torch::jit::Module& sub) {
            return level < depth && sub.named_children().size() > 0;
        },
        [&](const ChainStep& step, const std::string& reason) {
            if (kept_whole != nullptr) {
                kept_whole->push_back(step.path + " (" + step.module_type + "): " + reason);
            }
        });
}

std::vector<ChainStep> chain_of_paths(const torch::jit::Module& root,
                                      const std::vector<std::string>& paths) {
    const std::vector<ChainStep> steps = expand_steps(
        root,
        [&](const ChainStep& step, int, const torch::jit::Module&) {
            return std::any_of(paths.begin(), paths.end(), [&](const std::string& p) {
                return p.starts_with(step.path + ".");
            });
        },
        [](const ChainStep& step, const std::string& reason) {
            throw BackendError("the layers name parts of \"" + step.path +
                               "\", which does not split: " + reason);
        });
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

void check_unchanged(const Model& model, const std::string& file) {
    for (const auto& l : model.layers) {
        if (l.type != "torchscript" || torchscript_file(l) != file) {
            continue;
        }
        const auto& recorded = l.params.value("module_digest", nlohmann::json());
        if (!recorded.is_string()) {
            continue;  // a project written before digests were recorded
        }
        const std::string now = file_digest(file);
        if (now != recorded.get<std::string>()) {
            throw BackendError(
                "the module file " + printable_name(file) +
                (now == "unreadable"
                     ? std::string(" cannot be read")
                     : " has changed since it was imported (digest " + recorded.get<std::string>() +
                           " then, " + now + " now)") +
                "; import it again with `pipewright import`, so that the project's layers, "
                "shapes and costs are the file's");
        }
        return;  // every layer of one file records the same digest
    }
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

TorchScriptLayer TorchScriptLayers::build(int layer, std::uint64_t seed, bool from_seed) {
    const auto& spec = model_->layers.at(static_cast<std::size_t>(layer));
    const std::string file = torchscript_file(spec);
    auto it = files_.find(file);
    if (it == files_.end()) {
        File f;
        try {
            check_unchanged(*model_, file);
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
    if (from_seed || torchscript_reinitialised(spec)) {
        (void)reinitialise(submodule, seed);
    }
    return TorchScriptLayer(submodule, step);
}

}  // namespace pipewright::backend
