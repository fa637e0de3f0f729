// project.plan(): what `pipewright plan --json` computes (cli/plan_json.h),
// on the project in memory, stoppable with Ctrl-C.

#include <optional>
#include <string>
#include <utility>

#include <pybind11/stl.h>

#include "costs.h"
#include "errors.h"
#include "interruptible.h"
#include "json_convert.h"
#include "pipewright/sim/planner.h"
#include "pipewright/sim/profile_coverage.h"
#include "plan_json.h"
#include "project_handle.h"

namespace py = pybind11;

namespace pipewright::python {

namespace {

// A count, or "auto" (0 to the planner: search every count), as --data-parallel
// and --tensor-parallel take them.
std::optional<int> count_or_auto(const char* name, const py::object& value) {
    if (value.is_none()) {
        return std::nullopt;
    }
    if (py::isinstance<py::str>(value) && value.cast<std::string>() == "auto") {
        return 0;
    }
    if (py::isinstance<py::int_>(value) && !py::isinstance<py::bool_>(value)) {
        const long long count = value.cast<long long>();
        if (count >= 1 && count <= 1'000'000) {
            return static_cast<int>(count);
        }
    }
    throw py::value_error(std::string(name) + " is a count of at least 1 or \"auto\", not " +
                          py::repr(value).cast<std::string>());
}

py::dict plan(const ProjectHandle& handle, std::optional<std::string> schedule,
              std::optional<int> microbatches, const py::object& data_parallel,
              const py::object& tensor_parallel, std::optional<bool> sequence_parallel,
              const py::object& expert_parallel, const py::object& context_parallel,
              const std::optional<std::string>& profile,
              const std::vector<std::string>& calibrations, std::optional<double> efficiency,
              std::optional<double> memory_margin, bool strict, bool fewest_recomputed_blocks) {
    if (microbatches && *microbatches < 1) {
        throw py::value_error("microbatches must be at least 1, not " +
                              std::to_string(*microbatches));
    }
    PlanOptions options;
    options.schedule = std::move(schedule);
    options.microbatches = microbatches;
    options.data_parallel = count_or_auto("data_parallel", data_parallel);
    options.tensor_parallel = count_or_auto("tensor_parallel", tensor_parallel);
    options.sequence_parallel = sequence_parallel;
    options.expert_parallel = count_or_auto("expert_parallel", expert_parallel);
    options.context_parallel = count_or_auto("context_parallel", context_parallel);
    options.fewest_recomputed_blocks = fewest_recomputed_blocks;
    options.base_dir = handle.base_dir;
    Costs costs = make_costs(profile, calibrations, efficiency, memory_margin);
    check_costs_fit(costs, handle.project, strict);
    options.costs = costs.options;
    options.catalog = costs.catalog.get();

    // The job reads its own copy: Python may change the project meanwhile.
    const Project input = handle.project;
    PlanResult result;
    run_interruptibly([&](std::stop_token stop) {
        options.stop = std::move(stop);
        result = plan_pipeline(input, options);
    });

    if (costs.profile && result.plan.report) {
        // The plan may split the batch into sizes the profile never measured.
        if (auto size = profile_size_warning(*costs.profile, result.plan.report->microbatch_size)) {
            const std::string text = "the planned layout: " + *size;
            if (PyErr_WarnEx(PyExc_UserWarning, text.c_str(), 1) != 0) {
                throw py::error_already_set();
            }
        }
    }
    if (result.plan.report) {
        warn_planned_core_sharing(costs, result.project);
        warn_planned_host_pace(costs, result.project, handle.base_dir);
    }
    py::dict out;
    out["report"] = to_python(cli::plan_result_json(result, input));
    if (result.feasible) {
        out["project"] = ProjectHandle{result.project, handle.base_dir, {}};
    } else {
        out["project"] = py::none();
    }
    return out;
}

}  // namespace

void bind_plan(py::module_& m) {
    m.def("plan", &plan, py::arg("project"), py::arg("schedule"), py::arg("microbatches"),
          py::arg("data_parallel"), py::arg("tensor_parallel"), py::arg("sequence_parallel"),
          py::arg("expert_parallel"), py::arg("context_parallel"), py::arg("profile"),
          py::arg("calibration"), py::arg("efficiency"), py::arg("memory_margin"),
          py::arg("strict"), py::arg("fewest_recomputed_blocks"));
}

}  // namespace pipewright::python
