#include "studio_core/project/project_edit.h"

#include <algorithm>
#include <map>
#include <vector>

#include "pipewright/core/schedule_generators.h"
#include "studio_core/project/layer_blocks.h"

namespace pipewright::gui {

std::vector<std::string> layer_devices(const Project& project) {
    std::vector<std::string> out(project.model.layers.size());
    for (const auto& stage : project.placement) {
        for (const auto& name : stage.layers) {
            const int index = project.model.layer_index(name);
            if (index >= 0) {
                out[static_cast<std::size_t>(index)] = stage.device;
            }
        }
    }
    return out;
}

std::vector<int> layer_stages(const Project& project) {
    std::vector<int> out(project.model.layers.size(), -1);
    for (std::size_t s = 0; s < project.placement.size(); ++s) {
        for (const auto& name : project.placement[s].layers) {
            const int index = project.model.layer_index(name);
            if (index >= 0) {
                out[static_cast<std::size_t>(index)] = static_cast<int>(s);
            }
        }
    }
    return out;
}

std::vector<StageAssignment> stages_from_devices(const Model& model,
                                                 const std::vector<std::string>& devices) {
    std::vector<StageAssignment> out;
    std::string previous;
    for (std::size_t i = 0; i < model.layers.size() && i < devices.size(); ++i) {
        const std::string& device = devices[i];
        if (device.empty()) {
            previous.clear();
            continue;
        }
        if (out.empty() || device != previous) {
            out.push_back({device, {}});
        }
        out.back().layers.push_back(model.layers[i].name);
        previous = device;
    }
    return out;
}

EditResult place_layers(const Project& project, int first, int last, const std::string& device) {
    const int count = static_cast<int>(project.model.layers.size());
    if (first < 0 || last < first || last >= count) {
        return {std::nullopt, "no such layers to place"};
    }
    if (!project.topology.find_device(device)) {
        return {std::nullopt, "there is no device \"" + device + "\""};
    }
    auto devices = layer_devices(project);
    for (int i = first; i <= last; ++i) {
        devices[static_cast<std::size_t>(i)] = device;
    }
    auto stages = stages_from_devices(project.model, devices);

    const ScheduleInfo* info = find_schedule(project.training.schedule.name);
    const bool several_allowed =
        project.training.schedule.from_csv() || (info != nullptr && info->multiple_stages_per_rank);
    if (!several_allowed) {
        std::map<std::string, int> per_device;
        for (const auto& stage : stages) {
            if (++per_device[stage.device] == 2) {
                const std::string what =
                    first == last
                        ? "\"" + project.model.layers[static_cast<std::size_t>(first)].name + "\""
                        : "this range";
                return {std::nullopt,
                        "Placing " + what + " on " + device + " would break model order: " +
                            stage.device + " would hold two separate runs of layers, and the " +
                            project.training.schedule.name +
                            " schedule runs one contiguous stage per device. Drop layers at the "
                            "edge of a stage, or pick an interleaved schedule."};
            }
        }
    }
    // Several stages on one device are allowed here: say so, since the
    // device of stage 0 leads the pipeline (and the timeline's lanes).
    std::string note;
    std::map<std::string, std::vector<std::size_t>> stages_of;
    for (std::size_t s = 0; s < stages.size(); ++s) {
        stages_of[stages[s].device].push_back(s);
    }
    const auto& on_target = stages_of[device];
    if (on_target.size() > 1) {
        std::string list;
        for (std::size_t i = 0; i < on_target.size(); ++i) {
            list += (i == 0                      ? ""
                     : i + 1 == on_target.size() ? " and "
                                                 : ", ") +
                    std::to_string(on_target[i]);
        }
        note = device + " now holds stages " + list + ", which the " +
               project.training.schedule.name +
               " schedule runs in turn; the pipeline (and the timeline) starts at " +
               stages.front().device + ".";
    }
    Project out = project;
    out.placement = std::move(stages);
    return {std::move(out), {}, std::move(note)};
}

std::string unique_layer_name(const Model& model, const std::string& base) {
    if (model.layer_index(base) < 0) {
        return base;
    }
    for (int n = 1;; ++n) {
        std::string candidate = base + "_" + std::to_string(n);
        if (model.layer_index(candidate) < 0) {
            return candidate;
        }
    }
}

Project insert_layer(const Project& project, int index, LayerSpec layer) {
    Project out = project;
    auto devices = layer_devices(project);
    const int count = static_cast<int>(out.model.layers.size());
    index = std::clamp(index, 0, count);
    layer.name = unique_layer_name(out.model, layer.name.empty() ? layer.type : layer.name);
    std::string device;
    if (index > 0) {
        device = devices[static_cast<std::size_t>(index - 1)];
    } else if (count > 0) {
        device = devices.front();
    }
    out.model.layers.insert(out.model.layers.begin() + index, std::move(layer));
    devices.insert(devices.begin() + index, device);
    out.placement = stages_from_devices(out.model, devices);
    return out;
}

Project remove_layers(const Project& project, int first, int last) {
    Project out = project;
    auto devices = layer_devices(project);
    const int count = static_cast<int>(out.model.layers.size());
    first = std::clamp(first, 0, count);
    last = std::clamp(last, first - 1, count - 1);
    out.model.layers.erase(out.model.layers.begin() + first, out.model.layers.begin() + last + 1);
    devices.erase(devices.begin() + first, devices.begin() + last + 1);
    out.placement = stages_from_devices(out.model, devices);
    return out;
}

Project move_layer(const Project& project, int from, int to) {
    const int count = static_cast<int>(project.model.layers.size());
    if (from < 0 || from >= count || to < 0 || to >= count || from == to) {
        return project;
    }
    Project out = project;
    const auto devices = layer_devices(project);
    auto& layers = out.model.layers;
    LayerSpec moved = std::move(layers[static_cast<std::size_t>(from)]);
    layers.erase(layers.begin() + from);
    layers.insert(layers.begin() + to, std::move(moved));
    out.placement = stages_from_devices(out.model, devices);
    return out;
}

EditResult rename_layer(const Project& project, int index, const std::string& name) {
    if (index < 0 || index >= static_cast<int>(project.model.layers.size())) {
        return {std::nullopt, "no such layer"};
    }
    if (name.empty()) {
        return {std::nullopt, "a layer needs a name"};
    }
    const int existing = project.model.layer_index(name);
    if (existing >= 0 && existing != index) {
        return {std::nullopt, "another layer is already named \"" + name + "\""};
    }
    Project out = project;
    const std::string old = out.model.layers[static_cast<std::size_t>(index)].name;
    out.model.layers[static_cast<std::size_t>(index)].name = name;
    for (auto& stage : out.placement) {
        std::replace(stage.layers.begin(), stage.layers.end(), old, name);
    }
    return {std::move(out), {}};
}

EditResult change_layer_type(const Project& project, int index, const std::string& type,
                             const Shape& input) {
    if (index < 0 || index >= static_cast<int>(project.model.layers.size())) {
        return {std::nullopt, "no such layer"};
    }
    const auto fitted = make_palette_entry("layer:" + type, input);
    if (fitted.empty()) {
        return {std::nullopt, "there is no layer type \"" + type + "\" in the catalog"};
    }
    Project out = project;
    LayerSpec& layer = out.model.layers[static_cast<std::size_t>(index)];
    if (layer.type == type) {
        return {std::move(out), {}};
    }
    layer.type = type;
    layer.params = fitted.front().params;
    layer.cost.reset();
    layer.activation_bytes.reset();
    return {std::move(out), {}};
}

EditResult rename_device(const Project& project, const std::string& path, const std::string& name) {
    auto loc = project.topology.find_device(path);
    if (!loc) {
        return {std::nullopt, "there is no device \"" + path + "\""};
    }
    if (name.empty() || name.find('/') != std::string::npos) {
        return {std::nullopt, "a device name is not empty and has no '/'"};
    }
    Project out = project;
    auto& container = out.topology.nodes[static_cast<std::size_t>(loc->node)]
                          .containers[static_cast<std::size_t>(loc->container)];
    for (const auto& d : container.devices) {
        if (d.name == name && &d != &container.devices[static_cast<std::size_t>(loc->device)]) {
            return {std::nullopt, "this container already has a device named \"" + name + "\""};
        }
    }
    container.devices[static_cast<std::size_t>(loc->device)].name = name;
    const std::string new_path = path.substr(0, path.rfind('/') + 1) + name;
    for (auto& stage : out.placement) {
        if (stage.device == path) {
            stage.device = new_path;
        }
    }
    for (auto& o : out.topology.link_overrides) {
        for (std::string* end : {&o.device_a, &o.device_b}) {
            if (*end == path) {
                *end = new_path;
            }
        }
    }
    return {std::move(out), {}};
}

Project remove_device(const Project& project, const std::string& path) {
    auto loc = project.topology.find_device(path);
    if (!loc) {
        return project;
    }
    Project out = project;
    auto& devices = out.topology.nodes[static_cast<std::size_t>(loc->node)]
                        .containers[static_cast<std::size_t>(loc->container)]
                        .devices;
    devices.erase(devices.begin() + loc->device);
    std::erase_if(out.placement, [&](const StageAssignment& s) { return s.device == path; });
    std::erase_if(out.topology.link_overrides,
                  [&](const LinkOverride& o) { return o.device_a == path || o.device_b == path; });
    return out;
}

namespace {
template <typename T>
std::string unique_name(const std::vector<T>& items, const std::string& prefix) {
    for (std::size_t n = items.size();; ++n) {
        std::string candidate = prefix + std::to_string(n);
        if (std::none_of(items.begin(), items.end(),
                         [&](const T& item) { return item.name == candidate; })) {
            return candidate;
        }
    }
}
}  // namespace

Project add_device(const Project& project, int node, int container, const std::string& spec) {
    Project out = project;
    if (node < 0 || node >= static_cast<int>(out.topology.nodes.size())) {
        return out;
    }
    auto& containers = out.topology.nodes[static_cast<std::size_t>(node)].containers;
    if (container < 0 || container >= static_cast<int>(containers.size())) {
        return out;
    }
    auto& devices = containers[static_cast<std::size_t>(container)].devices;
    const bool cpu = spec.find("CPU") != std::string::npos || spec.find("cpu") != std::string::npos;
    devices.push_back({unique_name(devices, cpu ? "cpu" : "gpu"), spec, {}});
    return out;
}

Project add_container(const Project& project, int node) {
    Project out = project;
    if (node < 0 || node >= static_cast<int>(out.topology.nodes.size())) {
        return out;
    }
    auto& containers = out.topology.nodes[static_cast<std::size_t>(node)].containers;
    containers.push_back({unique_name(containers, "c"), {}});
    return out;
}

Project add_node(const Project& project) {
    Project out = project;
    out.topology.nodes.push_back({unique_name(out.topology.nodes, "node"), {}});
    return out;
}

}  // namespace pipewright::gui
