#pragma once

// The project as the module holds it: the parsed document and the folder its
// relative paths (a CSV schedule) start from, as the command line takes them
// from the project file's folder.

#include <filesystem>
#include <optional>
#include <string>

#include <pybind11/pybind11.h>

#include "pipewright/core/analysis.h"
#include "pipewright/core/project.h"

namespace pipewright::python {

struct ProjectHandle {
    Project project;
    std::filesystem::path base_dir;
    // The file it was loaded from or last saved to; empty for a dict.
    std::string path;

    // "name (path)", as `simulate` heads its summary.
    [[nodiscard]] std::string display_name() const;
    // What ProjectError calls the project: its file, else "project".
    [[nodiscard]] std::string what() const;
};

// Every problem `pipewright validate` would list for this project (the
// structural ones are gone once it parsed), with the options of a command.
[[nodiscard]] Diagnostics project_problems(const ProjectHandle& handle,
                                           const AnalysisOptions& options);

// The project analysed with the options; raises ProjectError listing every
// problem otherwise. Needs the GIL (it may raise).
[[nodiscard]] AnalyzedProject analyze_or_raise(const ProjectHandle& handle,
                                               AnalysisOptions options);

void bind_project(pybind11::module_& m);

}  // namespace pipewright::python
