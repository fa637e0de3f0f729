#include "errors.h"

#include <exception>
#include <stdexcept>

#include "pipewright/core/printable_name.h"
#include "pipewright/core/schedule_generators.h"
#include "pipewright/sim/planner.h"

namespace py = pybind11;

namespace pipewright::python {

py::list problems_list(const Diagnostics& diagnostics) {
    py::list out;
    for (const Diagnostic& d : diagnostics.items()) {
        out.append(py::make_tuple(d.path, d.message));
    }
    return out;
}

void raise_project_error(const std::string& what, const Diagnostics& diagnostics) {
    const py::object type = py::module_::import("pipewright._errors").attr("ProjectError");
    const py::object error = type(what, problems_list(diagnostics));
    PyErr_SetObject(type.ptr(), error.ptr());
    throw py::error_already_set();
}

void register_error_translation() {
    py::register_exception_translator([](std::exception_ptr thrown) {
        if (!thrown) {
            return;
        }
        try {
            std::rethrow_exception(thrown);
        } catch (const InputError& e) {
            try {
                raise_project_error("project", e.diagnostics());
            } catch (py::error_already_set& raised) {
                raised.restore();
            }
        } catch (const PlanCancelled& e) {
            PyErr_SetString(PyExc_KeyboardInterrupt, e.what());
        } catch (const std::invalid_argument& e) {
            PyErr_SetString(PyExc_ValueError, printable_name(e.what()).c_str());
        } catch (const std::runtime_error& e) {
            // ScheduleError, SimulationError and the readers' other
            // complaints are all about what was given.
            PyErr_SetString(PyExc_ValueError, printable_name(e.what()).c_str());
        }
    });
}

}  // namespace pipewright::python
