#include "json_convert.h"

#include <cmath>
#include <string>

namespace py = pybind11;

namespace pipewright::python {

namespace {

std::string child_path(const std::string& parent, const std::string& key) {
    return parent.empty() ? key : parent + "." + key;
}

nlohmann::json convert(py::handle object, const std::string& path) {
    const auto where = [&] { return path.empty() ? std::string("the document") : path; };
    if (object.is_none()) {
        return nullptr;
    }
    // bool before int: Python's True is an int too.
    if (py::isinstance<py::bool_>(object)) {
        return object.cast<bool>();
    }
    if (py::isinstance<py::int_>(object)) {
        // Through Python's own conversion, so that an int beyond 64 bits is
        // an OverflowError rather than a silently wrapped number.
        const long long value = PyLong_AsLongLong(object.ptr());
        if (value == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            throw py::value_error(where() + ": the integer does not fit in 64 bits");
        }
        return value;
    }
    if (py::isinstance<py::float_>(object)) {
        const double value = object.cast<double>();
        if (!std::isfinite(value)) {
            throw py::value_error(where() + ": " + py::repr(object).cast<std::string>() +
                                  " is not a number JSON can hold");
        }
        return value;
    }
    if (py::isinstance<py::str>(object)) {
        return object.cast<std::string>();
    }
    if (py::isinstance<py::dict>(object)) {
        nlohmann::json out = nlohmann::json::object();
        for (const auto& [key, value] : object.cast<py::dict>()) {
            if (!py::isinstance<py::str>(key)) {
                throw py::type_error(where() + ": key " + py::repr(key).cast<std::string>() +
                                     " is not a string");
            }
            const auto name = key.cast<std::string>();
            out[name] = convert(value, child_path(path, name));
        }
        return out;
    }
    if (py::isinstance<py::list>(object) || py::isinstance<py::tuple>(object)) {
        nlohmann::json out = nlohmann::json::array();
        std::size_t i = 0;
        for (const auto& item : object) {
            out.push_back(convert(item, path + "[" + std::to_string(i++) + "]"));
        }
        return out;
    }
    // Mappings and sequences that are not dicts and lists (the module's own
    // views of a project among them) convert through their items.
    if (py::hasattr(object, "keys") && py::hasattr(object, "__getitem__")) {
        return convert(py::dict(py::reinterpret_borrow<py::object>(object)), path);
    }
    throw py::type_error(where() + ": " +
                         py::str(py::type::handle_of(object).attr("__name__")).cast<std::string>() +
                         " is not a JSON value (dict, list, str, int, float, bool or None)");
}

}  // namespace

nlohmann::json to_json(py::handle object) {
    return convert(object, "");
}

py::object to_python(const nlohmann::json& value) {
    switch (value.type()) {
        case nlohmann::json::value_t::null:
        case nlohmann::json::value_t::discarded:
            return py::none();
        case nlohmann::json::value_t::boolean:
            return py::bool_(value.get<bool>());
        case nlohmann::json::value_t::number_integer:
            return py::int_(value.get<std::int64_t>());
        case nlohmann::json::value_t::number_unsigned:
            return py::int_(value.get<std::uint64_t>());
        case nlohmann::json::value_t::number_float: {
            const double number = value.get<double>();
            return std::isfinite(number) ? py::object(py::float_(number)) : py::object(py::none());
        }
        case nlohmann::json::value_t::string:
            return py::str(value.get_ref<const std::string&>());
        case nlohmann::json::value_t::array: {
            py::list out(value.size());
            std::size_t i = 0;
            for (const auto& item : value) {
                out[i++] = to_python(item);
            }
            return out;
        }
        case nlohmann::json::value_t::object: {
            py::dict out;
            for (const auto& [key, item] : value.items()) {
                out[py::str(key)] = to_python(item);
            }
            return out;
        }
        case nlohmann::json::value_t::binary:
            break;
    }
    throw py::type_error("a JSON value of binary type has no Python form");
}

}  // namespace pipewright::python
