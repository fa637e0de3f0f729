#pragma once

// The command line of one rank's worker process, in one place: the launcher
// builds it from WorkerOptions and the worker reads the same options back.
// Users never type it, so it is strict: anything unknown or malformed is a
// defect of the launcher, reported as such.

#include <string>
#include <vector>

#include "pipewright/backend/launcher.h"

namespace pipewright::backend {

// The arguments after the program: "worker", the project, then the options.
// Numbers are written exactly (a timeout keeps every digit).
[[nodiscard]] std::vector<std::string> worker_arguments(const WorkerOptions& options);

// The inverse of worker_arguments (given what follows "worker"). Throws
// BackendError naming the argument that is unknown, missing or malformed.
[[nodiscard]] WorkerOptions parse_worker_arguments(const std::vector<std::string>& arguments);

}  // namespace pipewright::backend
