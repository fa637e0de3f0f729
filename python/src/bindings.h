#pragma once

// Each part of the extension `pipewright._core` defines its own functions
// and classes; module.cpp puts them together.

#include <pybind11/pybind11.h>

namespace pipewright::python {

void bind_project(pybind11::module_& m);
void bind_simulation(pybind11::module_& m);
void bind_plan(pybind11::module_& m);
void bind_catalogs(pybind11::module_& m);
void bind_schedules(pybind11::module_& m);
void bind_config_import(pybind11::module_& m);

}  // namespace pipewright::python
