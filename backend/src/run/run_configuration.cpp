#include "run/run_configuration.h"

#include "pipewright/core/project_io.h"
#include "torchscript/file_digest.h"
#include "torchscript/torchscript_modules.h"

namespace pipewright::backend {

nlohmann::json training_definition(const AnalyzedProject& p) {
    nlohmann::json project = project_to_json(p.project);
    nlohmann::json& layers = project.at("model").at("layers");
    for (std::size_t i = 0; i < layers.size() && i < p.project.model.layers.size(); ++i) {
        const LayerSpec& spec = p.project.model.layers[i];
        if (spec.type == "torchscript") {
            layers[i]["module"] = "file with digest " + file_digest(torchscript_file(spec));
        }
    }
    // The topology's links and capacities change no arithmetic; the devices
    // that run the stages are in the placement.
    project.erase("topology");
    return project;
}

namespace {

std::string difference_at(const std::string& path, const nlohmann::json& mine,
                          const nlohmann::json& theirs) {
    if (mine.is_object() && theirs.is_object()) {
        for (const auto& [key, value] : mine.items()) {
            const std::string at = path.empty() ? key : path + "." + key;
            if (!theirs.contains(key)) {
                return at + " " + value.dump() + " here, none there";
            }
            if (std::string d = difference_at(at, value, theirs.at(key)); !d.empty()) {
                return d;
            }
        }
        for (const auto& [key, value] : theirs.items()) {
            if (!mine.contains(key)) {
                return (path.empty() ? key : path + "." + key) + " none here, " + value.dump() +
                       " there";
            }
        }
        return "";
    }
    if (mine.is_array() && theirs.is_array()) {
        for (std::size_t i = 0; i < mine.size() && i < theirs.size(); ++i) {
            if (std::string d =
                    difference_at(path + "[" + std::to_string(i) + "]", mine[i], theirs[i]);
                !d.empty()) {
                return d;
            }
        }
        if (mine.size() != theirs.size()) {
            return path + ": " + std::to_string(mine.size()) + " entries here, " +
                   std::to_string(theirs.size()) + " there";
        }
        return "";
    }
    if (mine != theirs) {
        // A long value (a layer's whole description) is cut: the path says
        // where to look.
        const auto shown = [](const nlohmann::json& v) {
            std::string text = v.dump();
            return text.size() > 80 ? text.substr(0, 77) + "..." : text;
        };
        return path + " " + shown(mine) + " here, " + shown(theirs) + " there";
    }
    return "";
}

}  // namespace

nlohmann::json run_configuration(const AnalyzedProject& p, const RunOptions& o, int steps) {
    return {{"model", p.project.model.name},
            {"schedule", p.schedule.name},
            {"stages", p.schedule.num_stages},
            {"microbatches", p.microbatches},
            {"batch_size", p.microbatches * p.microbatch_size},
            {"steps", steps},
            {"dtype", o.settings.dtype},
            {"ranks", p.num_ranks()},
            {"data_parallel", p.data_parallel()},
            {"zero_stage", p.project.data_parallel.zero_stage},
            {"nnodes", o.nnodes},
            {"nproc_per_node", o.nproc_per_node ? nlohmann::json(*o.nproc_per_node) : nullptr},
            {"project", training_definition(p)}};
}

std::string configuration_difference(const nlohmann::json& mine, const nlohmann::json& theirs) {
    return difference_at("", mine, theirs);
}

}  // namespace pipewright::backend
