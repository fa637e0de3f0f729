#pragma once

// The parallelism fields of a project file (project_json.cpp reads and
// writes the rest): data_parallel, tensor_parallel, expert_parallel and
// context_parallel. A field left at its default is not written, so a plain
// pipeline's file stays as it was before them.

#include <nlohmann/json.hpp>

#include "pipewright/core/json_reader.h"
#include "pipewright/core/project.h"

namespace pipewright {

// Reads the optional parallelism fields of the project object `r` into `p`.
void parse_parallelism(const JsonObject& r, Project& p);
// Writes `p`'s parallelism fields that differ from their defaults.
void write_parallelism(const Project& p, nlohmann::json& out);

}  // namespace pipewright
