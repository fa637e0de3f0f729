#pragma once

// How the library's failures reach Python: every problem with a project
// (structural or semantic, as `pipewright validate` lists them) is a
// pipewright.ProjectError carrying (path, message) pairs; other invalid
// input is a ValueError, a file that cannot be written an OSError.

#include <string>

#include <pybind11/pybind11.h>

#include "pipewright/core/diagnostics.h"

namespace pipewright::python {

// [(path, message), ...] in the order found.
[[nodiscard]] pybind11::list problems_list(const Diagnostics& diagnostics);

// Raises pipewright.ProjectError (defined in pipewright/_errors.py) with
// `what` ("project", a file name) and the problems. Needs the GIL.
[[noreturn]] void raise_project_error(const std::string& what, const Diagnostics& diagnostics);

// Turns the library's exceptions into Python's, for every call of the module.
void register_error_translation();

}  // namespace pipewright::python
