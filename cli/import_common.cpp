#include "import_common.h"

#include <algorithm>
#include <cctype>

#include "pipewright/core/device_catalog.h"
#include "pipewright/core/printable_name.h"
#include "pipewright/sim/planner.h"

namespace pipewright::cli {

Project placed_by_planner(const Project& imported) {
    const auto devices = imported.topology.devices();
    const int stages =
        std::min(static_cast<int>(devices.size()), static_cast<int>(imported.model.layers.size()));
    if (stages <= 1) {
        return imported;
    }
    const std::string& schedule = imported.training.schedule.name;
    const int m = imported.training.resolved_microbatches();
    const SplitResult split = best_split(imported, {}, m, schedule, stages);
    std::vector<PlannedStage> planned;
    if (!split.feasible) {
        planned = parameter_balanced_split(imported);
    }
    for (std::size_t k = 0; split.feasible && k < split.devices.size(); ++k) {
        const int next = k + 1 < split.first_layer.size()
                             ? split.first_layer[k + 1]
                             : static_cast<int>(imported.model.layers.size());
        planned.push_back({devices[static_cast<std::size_t>(split.devices[k])].path,
                           split.first_layer[k], next - 1});
    }
    return with_placement(imported, planned, schedule, m);
}

std::optional<std::string> catalog_name(const std::string& spec) {
    for (const auto& name : DeviceCatalog::builtin().names()) {
        if (std::equal(name.begin(), name.end(), spec.begin(), spec.end(), [](char x, char y) {
                return std::tolower(static_cast<unsigned char>(x)) ==
                       std::tolower(static_cast<unsigned char>(y));
            })) {
            return name;
        }
    }
    return std::nullopt;
}

std::string unknown_device_words(const std::string& spec) {
    std::string known;
    for (const auto& name : DeviceCatalog::builtin().names()) {
        known += (known.empty() ? "" : ", ") + name;
    }
    return "no device \"" + printable_name(spec) + "\" in the catalog; give one of " + known;
}

std::optional<std::string> catalog_device_name(const std::string& spec, std::ostream& err) {
    auto name = catalog_name(spec);
    if (!name) {
        err << "pipewright: --device-spec: " << unknown_device_words(spec)
            << " (pipewright devices)\n";
    }
    return name;
}

}  // namespace pipewright::cli
