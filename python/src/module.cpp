// pipewright._core: the C++ half of `import pipewright`. Its names are
// private; python/pipewright/__init__.py is the API people use.

#include "bindings.h"
#include "errors.h"

namespace py = pybind11;

PYBIND11_MODULE(_core, m) {
    m.doc() = "Pipewright's planner and simulator, in process (use the pipewright package)";
    pipewright::python::register_error_translation();
    pipewright::python::bind_project(m);
    pipewright::python::bind_simulation(m);
    pipewright::python::bind_plan(m);
    pipewright::python::bind_catalogs(m);
    pipewright::python::bind_schedules(m);
    pipewright::python::bind_config_import(m);
    m.attr("__version__") = PIPEWRIGHT_VERSION;
}
