#include "config_project.h"

#include <algorithm>

#include "import_common.h"
#include "option_checks.h"
#include "pipewright/core/analysis.h"
#include "pipewright/core/device_catalog.h"
#include "pipewright/core/layer_catalog.h"

namespace pipewright::cli {
namespace {

// node0/c0/gpu0 … : `nodes` nodes of `per_node` devices of one kind.
Topology cluster(int nodes, int per_node, const std::string& spec, bool gpu) {
    Topology t;
    for (int n = 0; n < nodes; ++n) {
        Node node{"node" + std::to_string(n), {Container{"c0", {}}}};
        for (int d = 0; d < per_node; ++d) {
            node.containers[0].devices.push_back(
                Device{(gpu ? "gpu" : "cpu") + std::to_string(d), spec, {}});
        }
        t.nodes.push_back(std::move(node));
    }
    return t;
}

}  // namespace

std::optional<ConfigProject> config_project(HfModel imported, const ConfigProjectOptions& options,
                                            Diagnostics& d) {
    const DeviceSpec* spec = DeviceCatalog::builtin().find(options.device_spec);
    if (spec == nullptr) {
        d.add("device_spec", "no device \"" + options.device_spec + "\" in the catalog");
        return std::nullopt;
    }
    const bool gpu = spec->kind == "gpu";
    ConfigProject out;
    out.architecture = std::move(imported.architecture);
    out.notes = std::move(imported.notes);
    Project& p = out.project;
    p.model = std::move(imported.model);
    p.topology = cluster(options.nodes, options.devices, options.device_spec, gpu);
    bool window_dropped = false;
    for (LayerSpec& l : p.model.layers) {
        if (gpu && l.type == "transformer_block") {
            l.params["flash_attention"] = true;
        }
        // CPU workers attend unfused, over every earlier token.
        if (!gpu && l.params.is_object() && l.params.erase("sliding_window") > 0) {
            window_dropped = true;
        }
    }
    if (window_dropped) {
        out.notes.push_back(
            "its sliding attention window is priced as full causal attention: CPU workers run "
            "the unfused kernels, which compute every score");
    }
    StageAssignment all{p.topology.devices().front().path, {}};
    for (const auto& l : p.model.layers) {
        all.layers.push_back(l.name);
    }
    p.placement = {std::move(all)};
    const int stages =
        std::min(options.nodes * options.devices, static_cast<int>(p.model.layers.size()));
    p.training.batch_size = options.batch_size;
    p.training.microbatches =
        options.microbatches.value_or(default_microbatches(options.batch_size, stages));
    p.training.schedule.name = stages > 1 ? "1f1b" : "gpipe";
    p.training.optimizer.type = OptimizerKind::adamw;
    p.training.optimizer.lr = 3e-4;
    p.training.optimizer.weight_decay = 0.1;
    p.training.dtype = gpu ? DType::bfloat16 : DType::float32;
    p.training.steps = 10;

    // Checked as simulate would before the planner splits it (the planner
    // needs a valid model), and after.
    auto analyzed = analyze_project(p, AnalysisOptions{}, d);
    if (analyzed) {
        p = placed_by_planner(p);
        analyzed = analyze_project(p, AnalysisOptions{}, d);
    }
    if (!analyzed) {
        return std::nullopt;
    }
    out.parameters = static_cast<double>(model_parameters(*analyzed));
    out.active_parameters = static_cast<double>(model_active_parameters(*analyzed));
    out.simulated = simulate_project(*analyzed, {}, Recording::summary);
    return out;
}

}  // namespace pipewright::cli
