#include "pipewright/backend/torchscript_import.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <iostream>
#include <map>
#include <mutex>
#include <thread>

#include "data/zip_contents.h"
#include "pipewright/backend/backend_error.h"
#include "pipewright/core/machine_memory.h"
#include "pipewright/core/printable_name.h"
#include "pipewright/core/quantity_format.h"
#include "torchscript/file_digest.h"
#include "torchscript/torchscript_costs.h"
#include "torchscript/torchscript_init.h"
#include "torchscript/torchscript_modules.h"

namespace pipewright::backend {
namespace {

// Samples in the example batch: two, so that batch-norm can train on it.
constexpr std::int64_t kSamples = 2;

// The vocabulary of the first embedding the model holds, for example ids.
std::optional<std::int64_t> embedding_vocabulary(const torch::jit::Module& m) {
    for (const auto& sub : m.modules()) {
        if (module_type_name(sub) == "Embedding" && sub.hasattr("num_embeddings")) {
            return sub.attr("num_embeddings").toInt();
        }
    }
    return std::nullopt;
}

// A parameter held by two layers (tied weights) would be trained twice, by
// two stages, as two copies: refused.
void check_no_shared_parameters(const torch::jit::Module& root,
                                const std::vector<ChainStep>& steps) {
    std::map<const void*, std::string> owner;
    for (const auto& step : steps) {
        for (const auto& p : submodule_at(root, step.path).named_parameters(true)) {
            auto [it, fresh] = owner.emplace(p.value.unsafeGetTensorImpl(), step.path);
            if (!fresh && it->second != step.path) {
                throw BackendError("layers \"" + it->second + "\" and \"" + step.path +
                                   "\" share the parameter " + step.path + "." + p.name +
                                   " (tied weights); a pipeline would train two copies. Untie "
                                   "them, or import with a smaller --depth so that one layer "
                                   "holds both");
            }
        }
    }
}

Topology local_topology(int devices, const std::string& spec) {
    Topology t;
    Container c{
        "proc",
        {},
    };
    const std::string prefix = spec == "cpu" ? "cpu" : "gpu";
    for (int d = 0; d < devices; ++d) {
        c.devices.push_back(Device{prefix + std::to_string(d), spec, {}});
    }
    t.nodes.push_back(Node{"localhost", {std::move(c)}});
    if (spec == "cpu") {
        // Worker processes of one machine: shared memory through Gloo.
        t.links.intra_container = {5, 20};
        t.links.intra_node = {5, 20};
        t.links.inter_node = {1.25, 50};
    }
    return t;
}

// The example batch the layers are measured on, and what they make of it
// (outputs, gradients: a few times the input), must fit this machine: a
// shape typed wrong (1000000,1000000) is refused with the figures instead
// of failing deep inside the allocator.
void check_example_fits(const ImportOptions& o) {
    double elements = kSamples;
    for (const auto d : o.input_shape) {
        elements *= static_cast<double>(d);
    }
    const double bytes = elements * (o.input_dtype == DType::int64 ? 8 : 4);
    const double available = static_cast<double>(available_memory_bytes());
    constexpr double kLayerCopies = 4;  // the input, an output, their gradients
    if (available > 0 && bytes * kLayerCopies > available) {
        throw BackendError("--input-shape " + to_string(o.input_shape) + ": the " +
                           std::to_string(kSamples) + " samples the layers are measured on take " +
                           format_bytes(bytes) +
                           ", and the layers several times that, but this "
                           "machine has " +
                           format_bytes(available) +
                           " available; check the shape (one sample, without the batch "
                           "dimension)");
    }
}

// Ends the import, naming the layer, when measuring it takes longer than
// the bound: a TorchScript forward cannot be interrupted, so the process
// says why and exits (the project is not written).
class LayerWatchdog {
  public:
    explicit LayerWatchdog(double timeout_s)
        : timeout_(std::chrono::duration<double>(timeout_s)), thread_([this] { watch(); }) {}
    ~LayerWatchdog() {
        {
            const std::lock_guard lock(mutex_);
            done_ = true;
        }
        changed_.notify_all();
        thread_.join();
    }
    LayerWatchdog(const LayerWatchdog&) = delete;
    LayerWatchdog& operator=(const LayerWatchdog&) = delete;

    // The layer being measured while it lives.
    class Watch {
      public:
        Watch(LayerWatchdog& dog, std::string layer) : dog_(dog) {
            {
                const std::lock_guard lock(dog_.mutex_);
                dog_.layer_ = std::move(layer);
                dog_.since_ = std::chrono::steady_clock::now();
            }
            dog_.changed_.notify_all();
        }
        ~Watch() {
            const std::lock_guard lock(dog_.mutex_);
            dog_.layer_.clear();
        }
        Watch(const Watch&) = delete;
        Watch& operator=(const Watch&) = delete;

      private:
        LayerWatchdog& dog_;
    };

  private:
    void watch() {
        std::unique_lock lock(mutex_);
        while (!done_) {
            if (layer_.empty()) {
                changed_.wait(lock);
                continue;
            }
            const auto deadline = since_ + timeout_;
            if (std::chrono::steady_clock::now() >= deadline) {
                std::cerr << "pipewright: import: " << layer_ << " did not finish one forward "
                          << "and backward within " << timeout_.count()
                          << " s; does its forward ever return? (--timeout sets the bound)\n"
                          << std::flush;
                std::_Exit(1);
            }
            changed_.wait_until(lock, deadline);
        }
    }

    std::chrono::duration<double> timeout_;
    std::mutex mutex_;
    std::condition_variable changed_;
    std::string layer_;  // "" between layers
    std::chrono::steady_clock::time_point since_;
    bool done_ = false;
    std::thread thread_;
};

}  // namespace

ImportResult import_torchscript(const ImportOptions& o) {
    if (o.input_shape.empty()) {
        throw BackendError(
            "--input-shape is required: the shape of one sample, without the "
            "batch (for example 3,224,224)");
    }
    if (o.devices < 1) {
        throw BackendError("--devices must be at least 1");
    }
    check_example_fits(o);
    const auto file = std::filesystem::absolute(o.module_file).lexically_normal();
    torch::jit::Module root = load_torchscript(file);
    root.train(true);  // measured as it trains: batch-norm on the batch
    // Recorded with the layers: a file changed or swapped afterwards (same
    // names, other sizes) is refused in words instead of crashing a run.
    const std::string digest = file_digest(file);

    ImportResult result;
    const std::vector<ChainStep> steps = split_module(root, o.depth, &result.kept_whole);
    check_no_shared_parameters(root, steps);

    std::vector<std::int64_t> sizes{kSamples};
    sizes.insert(sizes.end(), o.input_shape.begin(), o.input_shape.end());
    std::optional<std::int64_t> vocabulary;
    torch::Tensor x;
    torch::manual_seed(0);
    if (o.input_dtype == DType::int64) {
        vocabulary = o.vocabulary ? o.vocabulary : embedding_vocabulary(root);
        x = torch::randint(vocabulary.value_or(2), sizes, torch::kInt64);
    } else if (o.input_dtype == DType::float32) {
        x = torch::randn(sizes);
    } else {
        throw BackendError("--input-dtype must be float32 or int64");
    }

    Model model;
    model.name = file.stem().string();
    model.input = {o.input_shape, o.input_dtype};
    model.loss = o.loss;
    std::string previous = "the model input";
    LayerWatchdog watchdog(o.layer_timeout_s);
    for (const ChainStep& step : steps) {
        TorchScriptLayer layer(submodule_at(root, step.path), step);
        torch::Tensor y;
        MeasuredCosts costs;
        try {
            const LayerWatchdog::Watch watch(watchdog, "layer \"" + printable_name(step.path) +
                                                           "\" (" +
                                                           printable_name(step.module_type) + ")");
            costs = measure_costs([&](torch::Tensor in) { return layer->forward(std::move(in)); },
                                  x, kSamples, y);
        } catch (const BackendError&) {
            throw;
        } catch (const std::bad_alloc&) {
            throw BackendError(
                "layer \"" + printable_name(step.path) + "\" (" + printable_name(step.module_type) +
                ") ran out of memory on " + previous + " of shape " +
                to_string(Shape(x.sizes().begin() + 1, x.sizes().end())) + " (this machine has " +
                format_bytes(static_cast<double>(available_memory_bytes())) +
                " available); does its forward keep growing?");
        } catch (const std::exception& e) {
            throw BackendError(
                "layer \"" + printable_name(step.path) + "\" (" + printable_name(step.module_type) +
                ") fails on " + previous + " of shape " +
                to_string(Shape(x.sizes().begin() + 1, x.sizes().end())) + ": " +
                printable_name(torch_error_reason(e)) +
                (previous == "the model input" ? "; check --input-shape and --input-dtype" : ""));
        }
        if (y.dim() < 2 || y.size(0) != kSamples) {
            throw BackendError("layer \"" + printable_name(step.path) + "\" (" +
                               printable_name(step.module_type) + ") returns a tensor of shape " +
                               c10::str(y.sizes()) + " for a batch of " + std::to_string(kSamples) +
                               ": a layer must keep the batch as its first dimension and give "
                               "each sample at least one value");
        }
        ImportedLayer info;
        info.path = step.path;
        info.module_type = step.module_type;
        info.glue = step.glue_ops();
        info.output_shape.assign(y.sizes().begin() + 1, y.sizes().end());
        for (const auto& p : layer->parameters()) {
            info.parameters += p.numel();
        }
        info.forward_flops = costs.forward_flops;
        info.stashed_elements = costs.stashed_elements;

        LayerSpec spec;
        spec.name = step.path;
        spec.type = "torchscript";
        auto& j = spec.params;
        j["module"] = file.string();
        j["module_digest"] = digest;
        j["submodule"] = step.path;
        j["module_type"] = step.module_type;
        if (!info.glue.empty()) {
            j["then"] = info.glue;
        }
        j["input_shape"] = Shape(x.sizes().begin() + 1, x.sizes().end());
        j["input_dtype"] = x.is_floating_point() ? "float32" : "int64";
        j["output_shape"] = info.output_shape;
        j["output_dtype"] = y.is_floating_point() ? "float32" : "int64";
        j["parameters"] = info.parameters;
        j["forward_flops"] = costs.forward_flops;
        j["backward_input_flops"] = costs.backward_input_flops;
        j["backward_weight_flops"] = costs.backward_weight_flops;
        j["stashed_elements"] = costs.stashed_elements;
        j["weight_stashed_elements"] = costs.weight_stashed_elements;
        if (model.layers.empty() && vocabulary) {
            j["vocabulary"] = *vocabulary;
        }
        model.layers.push_back(std::move(spec));
        result.layers.push_back(std::move(info));
        previous = "the output of \"" + printable_name(step.path) + "\"";
        x = y.is_floating_point() ? y.detach() : y;
    }
    if (o.reinitialise) {
        for (std::size_t i = 0; i < steps.size(); ++i) {
            model.layers[i].params["weights"] = "seed";
            // Measured above with the file's weights; the kinds of
            // parameters do not change, so this names what stays.
            for (const auto& name : reinitialise(submodule_at(root, steps[i].path), 0)) {
                result.kept_from_file.push_back(steps[i].path + "." + name);
            }
        }
    }
    if (o.loss == LossKind::cross_entropy && !x.is_floating_point()) {
        throw BackendError("the model's output is integer: cross_entropy needs float logits");
    }

    Project& p = result.project;
    p.model = std::move(model);
    p.topology = local_topology(o.devices, o.device_spec);
    // On the first device: the command line splits the layers over the
    // devices with the planner, which the backend does not link.
    StageAssignment all{
        "localhost/proc/" + p.topology.nodes.front().containers.front().devices.front().name, {}};
    for (const auto& l : p.model.layers) {
        all.layers.push_back(l.name);
    }
    p.placement = {std::move(all)};
    const int stages = std::min(o.devices, static_cast<int>(p.model.layers.size()));
    p.training.batch_size = o.batch_size;
    p.training.microbatches =
        o.microbatches > 0 ? o.microbatches : default_microbatches(o.batch_size, stages);
    p.training.schedule.name = stages > 1 ? "1f1b" : "gpipe";
    p.training.optimizer.type = OptimizerKind::sgd;
    p.training.optimizer.lr = 0.01;
    p.training.steps = 10;
    return result;
}

}  // namespace pipewright::backend
