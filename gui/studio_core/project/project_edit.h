#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pipewright/core/project.h"

// Edits of a project that keep its placement consistent with the model. They
// are plain functions on values so the rules are tested without widgets, and
// every edit in the studio is one of them followed by an undoable snapshot.
namespace pipewright::gui {

// Device path of every layer in model order ("" when the layer is unplaced).
[[nodiscard]] std::vector<std::string> layer_devices(const Project& project);
// Stage index of every layer (-1 when unplaced).
[[nodiscard]] std::vector<int> layer_stages(const Project& project);
// Stages rebuilt from per-layer devices: consecutive layers on one device form
// one stage; unplaced layers belong to none.
[[nodiscard]] std::vector<StageAssignment> stages_from_devices(
    const Model& model, const std::vector<std::string>& devices);

struct EditResult {
    EditResult() = default;
    EditResult(std::optional<Project> edited, std::string why, std::string said = {})
        : project(std::move(edited)), refusal(std::move(why)), note(std::move(said)) {}

    std::optional<Project> project;  // set when the edit is allowed
    std::string refusal;             // why not, in words for the user
    // What an allowed edit did that the user may not expect, e.g. that a
    // device now holds two stages apart; empty otherwise.
    std::string note;
};

// Puts layers [first, last] on `device`. Refused when the range is invalid,
// the device does not exist, or a device would end up with several stages
// while the project's schedule runs one stage per device. Where the schedule
// runs several stages per device (gpipe, naive, interleaved, a CSV), such a
// placement is allowed and the note says which device holds which stages.
[[nodiscard]] EditResult place_layers(const Project& project, int first, int last,
                                      const std::string& device);

// Inserts a layer at `index`; it joins the device of the layer before it (or
// after it), so a new layer never leaves a gap in the pipeline. The name is
// made unique.
[[nodiscard]] Project insert_layer(const Project& project, int index, LayerSpec layer);
[[nodiscard]] Project remove_layers(const Project& project, int first, int last);
// Moves layer `from` to position `to`; stages keep their positions, so the
// moved layer takes the device of the place it lands on.
[[nodiscard]] Project move_layer(const Project& project, int from, int to);
[[nodiscard]] EditResult rename_layer(const Project& project, int index, const std::string& name);

// Gives layer `index` another catalog type. The name stays; the
// hyper-parameters restart from the catalog (required ones sized to fit
// `input`, the shape reaching the layer), and the cost and activation
// overrides go, since they were measured for the old type.
[[nodiscard]] EditResult change_layer_type(const Project& project, int index,
                                           const std::string& type, const Shape& input);

[[nodiscard]] std::string unique_layer_name(const Model& model, const std::string& base);

// Topology edits; placement follows renames and forgets removed devices.
[[nodiscard]] EditResult rename_device(const Project& project, const std::string& path,
                                       const std::string& name);
[[nodiscard]] Project remove_device(const Project& project, const std::string& path);
[[nodiscard]] Project add_device(const Project& project, int node, int container,
                                 const std::string& spec);
[[nodiscard]] Project add_container(const Project& project, int node);
[[nodiscard]] Project add_node(const Project& project);

}  // namespace pipewright::gui
