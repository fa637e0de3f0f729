#include <utility>

#include <pybind11/stl.h>

#include "errors.h"
#include "json_convert.h"
#include "pipewright/core/project_io.h"
#include "project_handle.h"

namespace py = pybind11;

namespace pipewright::python {

std::string ProjectHandle::display_name() const {
    return path.empty() ? project.model.name : project.model.name + " (" + path + ")";
}

std::string ProjectHandle::what() const {
    return path.empty() ? std::string("project") : path;
}

Diagnostics project_problems(const ProjectHandle& handle, const AnalysisOptions& options) {
    AnalysisOptions with_folder = options;
    with_folder.base_dir = handle.base_dir;
    Diagnostics problems;
    (void)analyze_project(handle.project, with_folder, problems);
    return problems;
}

AnalyzedProject analyze_or_raise(const ProjectHandle& handle, AnalysisOptions options) {
    options.base_dir = handle.base_dir;
    Diagnostics problems;
    std::optional<AnalyzedProject> analyzed = analyze_project(handle.project, options, problems);
    if (!problems.empty() || !analyzed) {
        raise_project_error(handle.what(), problems);
    }
    return std::move(*analyzed);
}

namespace {

// As `validate` reports a file: the structural problems, then (when the
// document parsed at all) the semantic ones, together. `check` false lets a
// project that parsed but does not validate through, to be fixed in Python.
ProjectHandle checked(LoadedProject loaded, std::filesystem::path base_dir, std::string path,
                      std::string what, bool check) {
    Diagnostics problems = loaded.diagnostics;
    if (loaded.project && check) {
        AnalysisOptions options;
        options.base_dir = base_dir;
        (void)analyze_project(*loaded.project, options, problems);
    }
    if (!loaded.project || !loaded.diagnostics.empty() || (check && !problems.empty())) {
        raise_project_error(what, problems);
    }
    return ProjectHandle{std::move(*loaded.project), std::move(base_dir), std::move(path)};
}

ProjectHandle from_dict(const py::handle& document, const std::string& base_dir, bool check) {
    LoadedProject loaded;
    loaded.project = project_from_json(to_json(document), loaded.diagnostics);
    return checked(std::move(loaded), base_dir, {}, "project", check);
}

ProjectHandle load(const std::string& path, bool check) {
    LoadedProject loaded = load_project_file(path);
    return checked(std::move(loaded), std::filesystem::path(path).parent_path(), path, path, check);
}

void save(ProjectHandle& handle, const std::string& path) {
    try {
        save_project_file(handle.project, path);
    } catch (const std::exception& e) {
        PyErr_SetString(PyExc_OSError, e.what());
        throw py::error_already_set();
    }
    handle.path = path;
}

}  // namespace

void bind_project(py::module_& m) {
    py::class_<ProjectHandle>(m, "ProjectHandle", "A parsed project (pipewright.Project wraps it).")
        .def_static("from_dict", &from_dict, py::arg("document"), py::arg("base_dir"),
                    py::arg("check"))
        .def_static("load", &load, py::arg("path"), py::arg("check"))
        .def("to_dict",
             [](const ProjectHandle& h) { return to_python(project_to_json(h.project)); })
        .def("save", &save, py::arg("path"))
        .def("problems",
             [](const ProjectHandle& h) { return problems_list(project_problems(h, {})); })
        .def("copy", [](const ProjectHandle& h) { return ProjectHandle(h); })
        .def_property_readonly("path", [](const ProjectHandle& h) { return h.path; })
        .def_property_readonly("base_dir",
                               [](const ProjectHandle& h) { return h.base_dir.string(); });
}

}  // namespace pipewright::python
