// pipewright.import_config(): the project a Hugging Face config describes,
// as `pipewright import config.json` writes it (cli/config_project.h).

#include <limits>
#include <optional>
#include <string>
#include <utility>

#include <pybind11/stl.h>

#include "bindings.h"
#include "config_project.h"
#include "errors.h"
#include "import_common.h"
#include "json_convert.h"
#include "pipewright/core/hf_config.h"
#include "project_handle.h"

namespace py = pybind11;

namespace pipewright::python {

namespace {

// The limits the command line's options have (whole_number there).
int checked_count(const char* name, long long value,
                  long long most = std::numeric_limits<int>::max()) {
    if (value < 1 || value > most) {
        throw py::value_error(std::string(name) + " must be from 1 to " + std::to_string(most) +
                              ", not " + std::to_string(value));
    }
    return static_cast<int>(value);
}

// (the project's handle, what the import says of it).
py::tuple import_config(const py::handle& document, const std::string& what,
                        const std::string& base_dir, std::optional<long long> seq_len,
                        long long devices, long long nodes, const std::string& device_spec,
                        long long batch_size, std::optional<long long> microbatches) {
    cli::ConfigProjectOptions options;
    options.devices = checked_count("devices", devices, cli::kMaxImportDevices);
    options.nodes = checked_count("nodes", nodes, cli::kMaxImportDevices);
    options.batch_size = checked_count("batch_size", batch_size);
    if (microbatches) {
        options.microbatches = checked_count("microbatches", *microbatches);
    }
    if (seq_len) {
        (void)checked_count("seq_len", *seq_len, cli::kMaxImportSequence);
    }
    const auto spec = cli::catalog_name(device_spec);
    if (!spec) {
        throw py::value_error("device_spec: " + cli::unknown_device_words(device_spec));
    }
    options.device_spec = *spec;
    Diagnostics d;
    auto imported = model_from_hf_config(to_json(document), seq_len.value_or(0), d);
    if (!imported) {
        raise_project_error(what, d);
    }
    auto made = cli::config_project(std::move(*imported), options, d);
    if (!made) {
        raise_project_error("the imported project", d);
    }
    py::dict summary;
    summary["architecture"] = made->architecture;
    summary["parameters"] = static_cast<long long>(made->parameters);
    summary["active_parameters"] = static_cast<long long>(made->active_parameters);
    summary["notes"] = made->notes;
    summary["device_spec"] = options.device_spec;
    return py::make_tuple(ProjectHandle{std::move(made->project), base_dir, {}}, summary);
}

}  // namespace

void bind_config_import(py::module_& m) {
    m.def("import_config", &import_config, py::arg("document"), py::arg("what"),
          py::arg("base_dir"), py::arg("seq_len"), py::arg("devices"), py::arg("nodes"),
          py::arg("device_spec"), py::arg("batch_size"), py::arg("microbatches"));
}

}  // namespace pipewright::python
