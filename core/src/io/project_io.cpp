#include "pipewright/core/project_io.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "model/torchscript_layer.h"
#include "pipewright/core/json_parse.h"
#include "pipewright/core/output_file.h"

namespace pipewright {

void write_file_atomically(const std::filesystem::path& path, const std::string& contents) {
    OutputFile file(path);
    file.write(contents);
    file.commit();
}

namespace {

std::filesystem::path project_folder(const std::filesystem::path& file) {
    std::error_code ec;
    const auto absolute = std::filesystem::absolute(file, ec);
    return (ec ? file : absolute).parent_path();
}

// An imported layer's TorchScript file is written relative to the project
// file (so a folder of both can be moved or shared) and held absolute in
// memory (so that every program that loads the project, from any working
// folder, finds it).
void resolve_module_files(Project& project, const std::filesystem::path& folder, bool to_absolute) {
    for (LayerSpec& layer : project.model.layers) {
        if (layer.type != kTorchScriptLayerType || !layer.params.is_object()) {
            continue;
        }
        const nlohmann::json& given = layer.params.value("module", nlohmann::json());
        if (!given.is_string() || given.get<std::string>().empty()) {
            continue;
        }
        const std::filesystem::path module = given.get<std::string>();
        if (to_absolute && module.is_relative()) {
            layer.params["module"] = (folder / module).lexically_normal().string();
        } else if (!to_absolute && module.is_absolute()) {
            const auto relative = module.lexically_relative(folder);
            if (!relative.empty()) {
                layer.params["module"] = relative.generic_string();
            }
        }
    }
}

}  // namespace

LoadedProject parse_project_text(const std::string& text) {
    LoadedProject out;
    ParsedJson parsed = parse_json(text);
    // Duplicated keys are reported with the project's own problems.
    out.diagnostics = std::move(parsed.problems);
    if (parsed.value) {
        out.project = project_from_json(*parsed.value, out.diagnostics);
    }
    return out;
}

LoadedProject load_project_file(const std::filesystem::path& path) {
    std::string text;
    try {
        text = read_text_file(path);
    } catch (const std::exception& e) {
        LoadedProject out;
        out.diagnostics.add("(file)", e.what());
        return out;
    }
    LoadedProject out = parse_project_text(text);
    if (out.project) {
        resolve_module_files(*out.project, project_folder(path), /*to_absolute=*/true);
    }
    return out;
}

void save_project_file(const Project& project, const std::filesystem::path& path) {
    Project written = project;
    resolve_module_files(written, project_folder(path), /*to_absolute=*/false);
    write_file_atomically(path, project_to_json(written).dump(2) + "\n");
}

}  // namespace pipewright
