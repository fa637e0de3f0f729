#include "costs.h"

#include <sstream>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>

#include "cost_options.h"
#include "errors.h"
#include "pipewright/core/memory_headroom.h"

namespace py = pybind11;

namespace pipewright::python {

Costs make_costs(const std::optional<std::string>& profile,
                 const std::vector<std::string>& calibrations, std::optional<double> efficiency,
                 std::optional<double> memory_margin) {
    Costs costs;
    if (efficiency) {
        // The command line's range (--efficiency), said in Python's words.
        if (!(*efficiency >= 0.001 && *efficiency <= 1.0)) {
            throw py::value_error(
                "efficiency must be a fraction of peak between 0.001 and 1, not " +
                std::to_string(*efficiency));
        }
        costs.options.flat_efficiency = *efficiency;
    }
    if (profile) {
        try {
            costs.profile = std::make_shared<const Profile>(load_profile_file(*profile));
        } catch (const InputError& e) {
            raise_project_error(*profile, e.diagnostics());
        }
        costs.options.profile = costs.profile.get();
    }
    if (!calibrations.empty()) {
        cli::CostInputs inputs;
        try {
            costs.catalog = std::make_shared<const DeviceCatalog>(catalog_with_calibration_files(
                DeviceCatalog::builtin(), calibrations, &inputs.fits));
        } catch (const InputError& e) {
            raise_project_error("calibration", e.diagnostics());
        }
        inputs.calibration_files = calibrations;
        costs.calibrated = cli::describe_calibrations(inputs);
    }
    if (memory_margin) {
        // The command line's range (--memory-margin), said in Python's words.
        if (!(*memory_margin >= 0 && *memory_margin <= 1024)) {
            throw py::value_error("memory_margin must be a number of GiB from 0 to 1024, not " +
                                  std::to_string(*memory_margin));
        }
        costs.memory_margin_bytes =
            static_cast<std::int64_t>(*memory_margin * 1024.0 * 1024.0 * 1024.0);
        if (costs.memory_margin_bytes > 0) {
            costs.catalog = std::make_shared<const DeviceCatalog>(
                with_memory_margin(costs.catalog ? *costs.catalog : DeviceCatalog::builtin(),
                                   costs.memory_margin_bytes));
        }
    }
    return costs;
}

void check_costs_fit(Costs& costs, const Project& project, bool strict,
                     std::optional<int> microbatch_size) {
    std::ostringstream said;
    const auto sources =
        cli::check_profile_fit(costs.options, project, strict, said, microbatch_size);
    // One warning per line the command line prints, without its "pipewright: " prefix.
    std::istringstream lines(said.str());
    std::string line;
    std::string all;
    while (std::getline(lines, line)) {
        const std::string prefix = "pipewright: ";
        if (line.rfind(prefix, 0) == 0) {
            line.erase(0, prefix.size());
        }
        if (!sources) {
            all += (all.empty() ? "" : "\n") + line;
        } else if (PyErr_WarnEx(PyExc_UserWarning, line.c_str(), 1) != 0) {
            throw py::error_already_set();  // warnings turned into errors
        }
    }
    if (!sources) {
        throw py::value_error(all);
    }
    costs.sources = *sources;
    if (!costs.calibrated.empty()) {
        costs.sources += (costs.sources.empty() ? "" : "; ") + costs.calibrated;
    }
}

namespace {

void warn_each(const std::vector<std::string>& warnings, const std::string& prefix) {
    for (const std::string& warning : warnings) {
        const std::string text = prefix + warning;
        if (PyErr_WarnEx(PyExc_UserWarning, text.c_str(), 1) != 0) {
            throw py::error_already_set();  // warnings turned into errors
        }
    }
}

}  // namespace

void warn_core_sharing(const Costs& costs, const AnalyzedProject& project) {
    warn_each(cli::core_sharing_warnings(project, costs.profile.get()), "");
}

void warn_planned_core_sharing(const Costs& costs, const Project& planned) {
    warn_each(cli::planned_core_sharing_warnings(planned, costs.profile.get(), costs.catalog.get()),
              "the planned layout: ");
}

void warn_host_pace(const std::optional<KernelPace>& pace) {
    if (pace && pace->likely_host_bound()) {
        warn_each({host_pace_message(*pace)}, "");
    }
}

void warn_planned_host_pace(const Costs& costs, const Project& planned,
                            const std::filesystem::path& base_dir) {
    AnalysisOptions options;
    options.base_dir = base_dir;
    options.catalog = costs.catalog.get();
    if (auto host = host_pace_warning(planned, options, costs.options)) {
        warn_each({*host}, "the planned layout: ");
    }
}

}  // namespace pipewright::python
