#pragma once

// Python objects and JSON, both ways: how every document (projects, reports,
// plans) crosses between the module and Python.

#include <pybind11/pybind11.h>
#include <nlohmann/json.hpp>

namespace pipewright::python {

// dict, list, tuple, str, int, float, bool and None. Raises TypeError naming
// the JSON path of anything else (a set, a non-string key, a NaN).
[[nodiscard]] nlohmann::json to_json(pybind11::handle object);

// Numbers that are not finite become None, as the command line's JSON
// prints them (null), so that a result's to_dict() equals its --json output.
[[nodiscard]] pybind11::object to_python(const nlohmann::json& value);

}  // namespace pipewright::python
