// project.simulate() and project.compare_schedules(): what `pipewright
// simulate [--compare-schedules] --json` computes and prints, from the same
// functions (cli/simulate_command.cpp), on the project in memory.

#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

#include <pybind11/stl.h>

#include "costs.h"
#include "errors.h"
#include "json_convert.h"
#include "kernel_report.h"
#include "pipewright/core/torch_csv.h"
#include "pipewright/sim/auto_schedule.h"
#include "pipewright/sim/schedule_comparison.h"
#include "pipewright/sim/simulation.h"
#include "project_handle.h"
#include "report_format.h"
#include "simulate_outputs.h"

namespace py = pybind11;

namespace pipewright::python {

namespace {

// The options `simulate` takes besides the project and its outputs.
struct SimulateOptions {
    std::optional<std::string> schedule;
    std::optional<std::string> schedule_csv;
    std::optional<int> microbatches;
    std::optional<int> batch_size;
    std::optional<int> data_parallel;
    std::optional<int> tensor_parallel;
    std::optional<bool> sequence_parallel;
    std::optional<int> expert_parallel;
    std::optional<int> context_parallel;
    std::optional<std::string> context_exchange;
    std::optional<std::string> profile;
    std::vector<std::string> calibrations;
    std::optional<double> efficiency;
    std::optional<double> memory_margin;
    bool strict = false;
};

void require_positive(const char* name, const std::optional<int>& value) {
    if (value && *value < 1) {
        throw py::value_error(std::string(name) + " must be at least 1, not " +
                              std::to_string(*value));
    }
}

AnalysisOptions analysis_options(const SimulateOptions& o) {
    if (o.schedule && o.schedule_csv) {
        throw py::value_error("give either schedule or schedule_csv, not both");
    }
    require_positive("microbatches", o.microbatches);
    require_positive("batch_size", o.batch_size);
    require_positive("data_parallel", o.data_parallel);
    require_positive("tensor_parallel", o.tensor_parallel);
    require_positive("expert_parallel", o.expert_parallel);
    require_positive("context_parallel", o.context_parallel);
    std::optional<ContextExchange> exchange;
    if (o.context_exchange) {
        exchange = parse_context_exchange(*o.context_exchange);
        if (!exchange) {
            throw py::value_error("context_exchange must be \"ring\" or \"all_gather\", not \"" +
                                  *o.context_exchange + "\"");
        }
    }
    AnalysisOptions options;
    options.schedule = o.schedule;
    options.schedule_csv = o.schedule_csv;
    options.microbatches = o.microbatches;
    options.batch_size = o.batch_size;
    options.data_parallel = o.data_parallel;
    options.tensor_parallel = o.tensor_parallel;
    options.sequence_parallel = o.sequence_parallel;
    options.expert_parallel = o.expert_parallel;
    options.context_parallel = o.context_parallel;
    options.context_exchange = exchange;
    return options;
}

// One simulated iteration. The figures come from a summary simulation, as
// `simulate --json` computes them; the timeline, which large projects make
// large, is simulated again only when asked for (the simulator is
// deterministic, so its figures are the same).
class SimulationRun {
  public:
    SimulationRun(AnalyzedProject project, Costs costs, std::string name)
        : project_(std::make_shared<AnalyzedProject>(std::move(project))),
          costs_(std::move(costs)),
          name_(std::move(name)) {}

    void simulate() {
        py::gil_scoped_release unlocked;
        report_ = simulate_project(*project_, costs_.options, Recording::summary);
        json_ = cli::report_to_json(report_);
        const std::vector<StageKernels> kernels = stage_kernels(*project_, costs_.options);
        json_["stages"] = cli::stages_json(*project_, report_, kernels);
        pace_ = shortest_kernels(*project_, kernels);
        if (pace_) {
            json_["kernel_pace"] = cli::kernel_pace_json(*pace_);
        }
    }

    // The GPU stage whose kernels are shortest (sim/host_pace.h), if any.
    [[nodiscard]] const std::optional<KernelPace>& pace() const { return pace_; }

    [[nodiscard]] py::object to_dict() const { return to_python(json_); }

    [[nodiscard]] std::string text() const {
        std::ostringstream out;
        cli::print_report(out, report_, name_, costs_.sources, costs_.memory_margin_bytes);
        return out.str();
    }

    // [{rank, device, action, stage, microbatch, type, start_s, end_s, bytes, peer_rank}]
    [[nodiscard]] py::list events() {
        const Timeline& t = recorded().timeline;
        py::list out;
        for (const TimelineEvent& e : t.events) {
            py::dict event;
            event["rank"] = e.rank;
            event["device"] = t.devices.at(static_cast<std::size_t>(e.rank));
            event["action"] = to_string(e.action);
            event["stage"] = e.action.stage;
            event["microbatch"] = is_collective(e.action.type) ? py::object(py::none())
                                                               : py::int_(e.action.microbatch);
            event["type"] = std::string(to_string(e.action.type));
            event["start_s"] = e.start_s;
            event["end_s"] = e.end_s;
            event["bytes"] = e.bytes;
            event["peer_rank"] = e.peer_rank < 0 ? py::object(py::none()) : py::int_(e.peer_rank);
            out.append(std::move(event));
        }
        return out;
    }

    // {device: [(time_s, bytes), ...]}: what each lane holds from each time on.
    [[nodiscard]] py::dict memory() {
        const Timeline& t = recorded().timeline;
        py::dict out;
        for (std::size_t rank = 0; rank < t.memory.size() && rank < t.devices.size(); ++rank) {
            py::list samples;
            for (const MemorySample& s : t.memory[rank]) {
                samples.append(py::make_tuple(s.time_s, s.bytes));
            }
            out[py::str(t.devices[rank])] = std::move(samples);
        }
        return out;
    }

    // --trace, --timeline and --export-csv, with their size limit.
    void save(const std::optional<std::string>& trace, const std::optional<std::string>& timeline,
              const std::optional<std::string>& schedule_csv,
              const std::optional<std::string>& csv_format, std::uint64_t max_bytes) {
        cli::OutputArgs outputs;
        outputs.trace = trace;
        outputs.timeline = timeline;
        outputs.export_csv = schedule_csv;
        outputs.max_output_bytes = max_bytes;
        if (csv_format) {
            outputs.csv_format = torch_csv_format(*csv_format);
            if (!outputs.csv_format) {
                throw py::value_error(
                    "csv_format is \"compute-only\" or \"compute-comms\", not \"" + *csv_format +
                    "\"");
            }
        }
        const SimulationReport& report = (trace || timeline) ? recorded() : report_;
        AnalyzedProject project = *project_;
        std::ostringstream err;
        bool written = false;
        {
            py::gil_scoped_release unlocked;
            if (schedule_csv && builds_for_costs(project)) {
                // The lists simulated: zb-auto as built for these costs.
                project.schedule = schedule_for_costs(project, costs_.options);
            }
            written = cli::write_simulation_outputs(outputs, report, project, err);
        }
        if (!written) {
            std::string why = err.str();
            const std::string prefix = "pipewright: ";
            if (why.rfind(prefix, 0) == 0) {
                why.erase(0, prefix.size());
            }
            PyErr_SetString(PyExc_OSError, why.c_str());
            throw py::error_already_set();
        }
    }

  private:
    const SimulationReport& recorded() {
        if (!recorded_) {
            py::gil_scoped_release unlocked;
            recorded_ = std::make_shared<const SimulationReport>(
                simulate_project(*project_, costs_.options, Recording::timeline));
        }
        return *recorded_;
    }

    std::shared_ptr<AnalyzedProject> project_;
    Costs costs_;
    std::string name_;
    SimulationReport report_;
    nlohmann::json json_;
    std::optional<KernelPace> pace_;
    std::shared_ptr<const SimulationReport> recorded_;
};

SimulationRun simulate(const ProjectHandle& handle, const SimulateOptions& o) {
    Costs costs = make_costs(o.profile, o.calibrations, o.efficiency, o.memory_margin);
    AnalysisOptions options = analysis_options(o);
    options.catalog = costs.catalog.get();
    AnalyzedProject analyzed = analyze_or_raise(handle, options);
    if (o.sequence_parallel.value_or(false) && analyzed.project.tensor_parallel.size == 1) {
        throw py::value_error(
            "sequence_parallel splits the sequence over each stage's tensor-parallel group, and "
            "this layout has none (tensor_parallel.size 1); give tensor_parallel > 1 too");
    }
    check_costs_fit(costs, analyzed.project, o.strict, analyzed.microbatch_size);
    warn_core_sharing(costs, analyzed);
    SimulationRun run(std::move(analyzed), std::move(costs), handle.display_name());
    run.simulate();
    warn_host_pace(run.pace());
    return run;
}

// (rows as `simulate --compare-schedules --json` prints them, the table as it
// prints it without --json).
py::tuple compare(const ProjectHandle& handle, const SimulateOptions& o) {
    Costs costs = make_costs(o.profile, o.calibrations, o.efficiency, o.memory_margin);
    AnalysisOptions options = analysis_options(o);
    options.catalog = costs.catalog.get();
    // Checked as given first, so that real mistakes are not hidden behind
    // "not applicable" rows (as the command line does).
    (void)analyze_or_raise(handle, options);
    check_costs_fit(costs, handle.project, o.strict);
    options.base_dir = handle.base_dir;
    std::vector<ComparisonRow> rows;
    {
        py::gil_scoped_release unlocked;
        rows = compare_schedules(handle.project, options, costs.options);
    }
    std::ostringstream table;
    cli::print_comparison(table, rows);
    return py::make_tuple(to_python(cli::comparison_to_json(rows)), table.str());
}

SimulateOptions options_from(
    std::optional<std::string> schedule, std::optional<std::string> schedule_csv,
    std::optional<int> microbatches, std::optional<int> batch_size,
    std::optional<int> data_parallel, std::optional<int> tensor_parallel,
    std::optional<bool> sequence_parallel, std::optional<int> expert_parallel,
    std::optional<int> context_parallel, std::optional<std::string> context_exchange,
    std::optional<std::string> profile, std::vector<std::string> calibrations,
    std::optional<double> efficiency, std::optional<double> memory_margin, bool strict) {
    return SimulateOptions{std::move(schedule),
                           std::move(schedule_csv),
                           microbatches,
                           batch_size,
                           data_parallel,
                           tensor_parallel,
                           sequence_parallel,
                           expert_parallel,
                           context_parallel,
                           std::move(context_exchange),
                           std::move(profile),
                           std::move(calibrations),
                           efficiency,
                           memory_margin,
                           strict};
}

}  // namespace

void bind_simulation(py::module_& m) {
    py::class_<SimulationRun>(m, "SimulationRun",
                              "One simulated iteration (pipewright.SimulationResult wraps it).")
        .def("to_dict", &SimulationRun::to_dict)
        .def("text", &SimulationRun::text)
        .def("events", &SimulationRun::events)
        .def("memory", &SimulationRun::memory)
        .def("save", &SimulationRun::save, py::arg("trace"), py::arg("timeline"),
             py::arg("schedule_csv"), py::arg("csv_format"), py::arg("max_output_bytes"));

    // Both take the command line's options, in the same order.
    const auto with_options = [&m](const char* name, auto call) {
        m.def(
            name,
            [call](const ProjectHandle& handle, std::optional<std::string> schedule,
                   std::optional<std::string> schedule_csv, std::optional<int> microbatches,
                   std::optional<int> batch_size, std::optional<int> data_parallel,
                   std::optional<int> tensor_parallel, std::optional<bool> sequence_parallel,
                   std::optional<int> expert_parallel, std::optional<int> context_parallel,
                   std::optional<std::string> context_exchange, std::optional<std::string> profile,
                   std::vector<std::string> calibrations, std::optional<double> efficiency,
                   std::optional<double> memory_margin, bool strict) {
                return call(
                    handle,
                    options_from(std::move(schedule), std::move(schedule_csv), microbatches,
                                 batch_size, data_parallel, tensor_parallel, sequence_parallel,
                                 expert_parallel, context_parallel, std::move(context_exchange),
                                 std::move(profile), std::move(calibrations), efficiency,
                                 memory_margin, strict));
            },
            py::arg("project"), py::arg("schedule"), py::arg("schedule_csv"),
            py::arg("microbatches"), py::arg("batch_size"), py::arg("data_parallel"),
            py::arg("tensor_parallel"), py::arg("sequence_parallel"), py::arg("expert_parallel"),
            py::arg("context_parallel"), py::arg("context_exchange"), py::arg("profile"),
            py::arg("calibration"), py::arg("efficiency"), py::arg("memory_margin"),
            py::arg("strict"));
    };
    with_options("simulate", &simulate);
    with_options("compare_schedules", &compare);
}

}  // namespace pipewright::python
