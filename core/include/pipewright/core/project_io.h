#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "pipewright/core/diagnostics.h"
#include "pipewright/core/input_file.h"
#include "pipewright/core/project.h"

namespace pipewright {

// Reads the project format (docs/project-format.md). Structural problems
// (missing fields, wrong types, unknown keys) are reported with their JSON path;
// returns nullopt only when the document is not usable at all.
[[nodiscard]] std::optional<Project> project_from_json(const nlohmann::json& j,
                                                       Diagnostics& diagnostics);
[[nodiscard]] nlohmann::json project_to_json(const Project& project);

struct LoadedProject {
    std::optional<Project> project;  // set unless the file is unreadable or not JSON
    Diagnostics diagnostics;         // structural problems (semantic ones: validate())
};

// Never throws for bad content: every problem ends in `diagnostics`.
[[nodiscard]] LoadedProject load_project_file(const std::filesystem::path& path);
[[nodiscard]] LoadedProject parse_project_text(const std::string& text);

// Writes through a temporary file in the same folder and renames it over the
// target, so a crash or full disk never leaves a half-written project.
// Throws std::runtime_error with the reason on failure.
void save_project_file(const Project& project, const std::filesystem::path& path);

// Atomic write of any text file (same guarantees as save_project_file).
void write_file_atomically(const std::filesystem::path& path, const std::string& contents);

}  // namespace pipewright
