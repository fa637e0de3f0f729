#include "simulate_command.h"

#include <algorithm>
#include <filesystem>
#include <new>
#include <optional>
#include <utility>

#include "commands.h"
#include "kernel_report.h"
#include "option_checks.h"
#include "pipewright/core/context_parallel.h"
#include "pipewright/core/expert_parallel.h"
#include "pipewright/core/launch_files.h"
#include "pipewright/core/printable_name.h"
#include "pipewright/core/profile.h"
#include "pipewright/core/project_io.h"
#include "pipewright/core/schedule_csv.h"
#include "pipewright/core/tensor_parallel.h"
#include "pipewright/core/timeline.h"
#include "pipewright/sim/attention_note.h"
#include "pipewright/sim/auto_schedule.h"
#include "pipewright/sim/host_pace.h"
#include "pipewright/sim/layout_comparison.h"
#include "pipewright/sim/profile_coverage.h"
#include "pipewright/sim/schedule_comparison.h"
#include "pipewright/sim/simulation.h"
#include "report_format.h"

namespace pipewright::cli {

void add_simulate_command(CLI::App& app, SimulateArgs& args) {
    CLI::App* cmd = app.add_subcommand(
        "simulate", "Simulate one training iteration: time, throughput, bubbles and memory");
    cmd->add_option("project", args.project, "Project file (.json)")->required();
    cmd->add_option("--schedule", args.schedule,
                    "Schedule to use instead of the project's (see `pipewright schedules`)");
    cmd->add_option("--schedule-csv", args.schedule_csv,
                    "Simulate a schedule from a PyTorch-style CSV (one row per rank)");
    cmd->add_option("--microbatches,-m", args.microbatches, "Number of micro-batches")
        ->check(whole_number(1));
    cmd->add_option("--batch-size,-b", args.batch_size, "Samples per iteration")
        ->check(whole_number(1));
    cmd->add_option("--data-parallel", args.data_parallel,
                    "Replicas of the pipeline, each on its share of the batch (default: the "
                    "project's data_parallel.size)")
        ->check(whole_number(1));
    cmd->add_option("--tensor-parallel", args.tensor_parallel,
                    "Devices of each stage's tensor-parallel group: its device and the ones "
                    "after it in its container (default: the project's tensor_parallel.size)")
        ->check(whole_number(1, kMaxTensorParallel));
    cmd->add_option("--expert-parallel", args.expert_parallel,
                    "Replicas each mixture-of-experts block's routed experts are split over, "
                    "dividing --data-parallel (default: the project's expert_parallel.size)")
        ->check(whole_number(1, kMaxExpertParallel));
    cmd->add_option("--context-parallel", args.context_parallel,
                    "Replicas each sequence is split over, dividing --data-parallel: each runs "
                    "1/C of its tokens and they exchange attention's keys and values (default: "
                    "the project's context_parallel.size)")
        ->check(whole_number(1, kMaxContextParallel));
    cmd->add_option("--context-exchange", args.context_exchange,
                    "How context-parallel ranks exchange keys and values: ring (beside the "
                    "attention) or all-gather (before it) (default: the project's "
                    "context_parallel.exchange, else ring)")
        ->check(CLI::IsMember({"ring", "all-gather", "all_gather"}));
    cmd->add_flag("--sequence-parallel", args.sequence_parallel,
                  "Split the layer norms and activations along the sequence too (Megatron's "
                  "sequence parallelism)");
    add_cost_options(*cmd, args.costs);
    cmd->add_flag("--json", args.json, "Print the result as one JSON object");
    cmd->add_flag("--kernels", args.kernels,
                  "Also print where the busiest stage's time goes, kernel by kernel (JSON "
                  "always has every stage's)");
    cmd->add_flag("--compare-schedules", args.compare_schedules,
                  "Simulate every schedule and the single-device baseline side by side");
    cmd->add_flag("--compare-layouts", args.compare_layouts,
                  "Plan every count of data-parallel replicas of this cluster (data × pipeline "
                  "layouts) and compare each with the layout as set");
    add_output_options(*cmd, args.outputs);
}

namespace {

// The project a comparison starts from, checked as given first, so that
// real mistakes are not hidden behind "not applicable" rows; nullopt after
// saying what is wrong.
std::optional<Project> project_to_compare(const SimulateArgs& args, AnalysisOptions& options,
                                          const CostModelOptions& costs, std::ostream& err) {
    LoadedProject loaded = load_project_file(args.project);
    if (!loaded.diagnostics.empty() || !loaded.project) {
        print_problems(err, args.project, loaded.diagnostics);
        return std::nullopt;
    }
    options.base_dir = std::filesystem::path(args.project).parent_path();
    if (!load_analyzed(args.project, options, err)) {
        return std::nullopt;
    }
    if (!check_profile_fit(costs, *loaded.project, args.costs.strict, err)) {
        return std::nullopt;
    }
    return std::move(loaded.project);
}

// --compare-layouts: what the studio's Compare D × p layouts shows.
int compare_layouts(const SimulateArgs& args, AnalysisOptions options,
                    const CostModelOptions& costs, std::ostream& out, std::ostream& err) {
    std::optional<Project> given = project_to_compare(args, options, costs, err);
    if (!given) {
        return kInvalidInput;
    }
    Project project = std::move(*given);
    if (args.batch_size) {
        project.training.batch_size = *args.batch_size;
    }
    PlanOptions plan;
    plan.schedule = args.schedule;
    plan.microbatches = args.microbatches;
    // Every count of replicas is laid out with the groups asked for.
    plan.expert_parallel = args.expert_parallel;
    plan.context_parallel = args.context_parallel;
    plan.costs = costs;
    plan.catalog = options.catalog;
    plan.base_dir = options.base_dir;
    LayoutComparison c;
    try {
        c = compare_replica_layouts(project, plan);
    } catch (const InputError& e) {
        print_problems(err, args.project, e.diagnostics());
        return kInvalidInput;
    }
    if (args.json) {
        out << nlohmann::json{{"baseline", c.baseline},
                              {"choice", c.choice},
                              {"layouts", comparison_to_json(c.rows, "layout")}}
                   .dump(2)
            << '\n';
        return kOk;
    }
    print_comparison(out, c.rows, "layout");
    if (has_gains(c.rows)) {
        out << "\nGains are over " << c.baseline << ".\n";
    } else {
        out << "\nNo gains (—): neither the layout as set nor a one-replica plan runs, so there is "
               "no baseline to measure them against.\n";
    }
    for (const ComparisonRow& row : c.rows) {
        if (row.report && !row.detail.empty()) {
            out << "  " << printable_name(row.label) << ": " << printable_name(row.detail) << '\n';
        }
    }
    if (!c.choice.empty()) {
        out << "\nFastest: " << printable_name(c.choice) << '\n';
    }
    out << "Write a layout with `pipewright plan " << printable_name(args.project)
        << " --data-parallel D --apply OUT.json`.\n";
    return kOk;
}

}  // namespace

int run_simulate(const SimulateArgs& args, std::ostream& out, std::ostream& err) {
    AnalysisOptions options;
    options.schedule = args.schedule;
    options.schedule_csv = args.schedule_csv;
    options.microbatches = args.microbatches;
    options.batch_size = args.batch_size;
    options.data_parallel = args.data_parallel;
    options.tensor_parallel = args.tensor_parallel;
    options.expert_parallel = args.expert_parallel;
    options.context_parallel = args.context_parallel;
    if (args.context_exchange) {
        options.context_exchange = parse_context_exchange(*args.context_exchange);
    }
    if (args.sequence_parallel) {
        options.sequence_parallel = true;
    }
    if (args.schedule && args.schedule_csv) {
        err << "pipewright: give either --schedule or --schedule-csv, not both\n";
        return kUsage;
    }
    if (args.compare_layouts && args.compare_schedules) {
        err << "pipewright: give either --compare-schedules or --compare-layouts, not both\n";
        return kUsage;
    }
    if (args.compare_layouts && (args.data_parallel || args.schedule_csv)) {
        err << "pipewright: --compare-layouts plans every count of replicas with generated "
               "schedules; drop "
            << (args.data_parallel ? "--data-parallel" : "--schedule-csv") << '\n';
        return kUsage;
    }

    const auto path_or_none = [](const std::optional<std::string>& p) {
        return p.value_or(std::string());
    };
    std::vector<NamedFile> inputs{{"project", args.project},
                                  {"--profile", path_or_none(args.costs.profile)},
                                  {"--schedule-csv", path_or_none(args.schedule_csv)}};
    for (const std::string& calibration : args.costs.calibrations) {
        inputs.push_back({"--calibration", calibration});
    }
    if (!check_outputs_spare_inputs(inputs,
                                    {{"--trace", path_or_none(args.outputs.trace)},
                                     {"--timeline", path_or_none(args.outputs.timeline)},
                                     {"--export-csv", path_or_none(args.outputs.export_csv)}},
                                    err)) {
        return kUsage;
    }

    CostInputs cost_inputs;
    const auto cost_options = cost_model_options(args.costs, cost_inputs, err);
    if (!cost_options) {
        return kInvalidInput;
    }
    const CostModelOptions& costs = *cost_options;
    options.catalog = cost_inputs.catalog_or_null();

    if (args.compare_schedules) {
        const std::optional<Project> project = project_to_compare(args, options, costs, err);
        if (!project) {
            return kInvalidInput;
        }
        // The schedules run the same kernels: one warning holds for them all.
        if (auto host = host_pace_warning(*project, options, costs)) {
            err << "pipewright: warning: " << *host << '\n';
        }
        auto rows = compare_schedules(*project, options, costs);
        if (args.json) {
            out << comparison_to_json(rows).dump(2) << '\n';
        } else {
            print_comparison(out, rows);
            for (const ComparisonRow& row : rows) {
                if (row.baseline && &row != &rows.front()) {
                    out << "\nGains are over " << printable_name(row.label)
                        << ", the slowest schedule that fits: the model does not fit on one "
                           "device.\n";
                }
            }
            // The baseline is the single device, else the slowest schedule
            // that fits: with neither, there is nothing to gain over.
            const bool any_fits = std::any_of(rows.begin() + 1, rows.end(), [](const auto& row) {
                return row.report && row.report->all_fit;
            });
            if (!has_gains(rows)) {
                out << "\nNo gains (—): no schedule fits the devices' memory"
                    << (rows.front().report ? ""
                                            : " and the whole model does not run on one device")
                    << ", so there is no baseline to measure them against.\n";
            } else if (!any_fits) {
                out << "\nNo schedule fits the devices' memory; the gains are over the whole model "
                       "on one device, which does not fit either.\n";
            }
        }
        return kOk;
    }

    if (args.compare_layouts) {
        return compare_layouts(args, options, costs, out, err);
    }

    auto project = load_analyzed(args.project, options, err);
    if (!project) {
        return kInvalidInput;
    }
    if (args.sequence_parallel && project->project.tensor_parallel.size == 1) {
        err << "pipewright: --sequence-parallel splits the sequence over each stage's "
               "tensor-parallel group, and this layout has none (tensor_parallel.size 1); give "
               "--tensor-parallel T with T > 1 too\n";
        return kUsage;
    }
    const auto fit = check_profile_fit(costs, project->project, args.costs.strict, err,
                                       project->microbatch_size);
    if (!fit) {
        return kInvalidInput;
    }
    for (const std::string& shared : core_sharing_warnings(*project, costs.profile)) {
        err << "pipewright: warning: " << shared << '\n';
    }
    if (const std::string unused = unused_attention_kernel_warning(project->project);
        !unused.empty()) {
        err << "pipewright: warning: " << unused << '\n';
    }
    std::string cost_sources = *fit;
    const auto add_source = [&cost_sources](const std::string& source) {
        if (!source.empty()) {
            cost_sources += (cost_sources.empty() ? "" : "; ") + source;
        }
    };
    add_source(describe_calibrations(cost_inputs));
    add_source(uncalibrated_cpu_note(*project, costs));
    add_source(attention_kernel_note(*project, costs));
    SimulationReport report;
    try {
        // Only the trace and the timeline files need every action's times.
        const bool events = args.outputs.trace || args.outputs.timeline;
        report =
            simulate_project(*project, costs, events ? Recording::timeline : Recording::summary);
    } catch (const std::bad_alloc&) {
        throw;  // reported by main as out of memory
    } catch (const std::exception& e) {
        err << "pipewright: " << printable_name(args.project) << ": " << printable_name(e.what())
            << '\n';
        return kInvalidInput;
    }

    const std::vector<StageKernels> kernels = stage_kernels(*project, costs);
    const auto pace = shortest_kernels(*project, kernels);
    if (pace && pace->likely_host_bound()) {
        err << "pipewright: warning: " << host_pace_message(*pace) << '\n';
    }

    if (args.outputs.export_csv && builds_for_costs(*project)) {
        // The lists simulated: zb-auto as built for these costs.
        project->schedule = schedule_for_costs(*project, costs);
    }
    if (!write_simulation_outputs(args.outputs, report, *project, err)) {
        return kInvalidInput;
    }

    if (args.json) {
        nlohmann::json j = report_to_json(report);
        j["stages"] = stages_json(*project, report, kernels);
        if (pace) {
            j["kernel_pace"] = kernel_pace_json(*pace);
        }
        out << j.dump(2) << '\n';
        return kOk;
    }
    const std::string name = project->project.model.name + " (" + args.project + ")";
    print_report(out, report, name, cost_sources, cost_inputs.memory_margin_bytes);
    if (args.kernels) {
        print_kernels(out, *project, report, costs);
    }
    print_written_outputs(args.outputs, out);
    return kOk;
}

}  // namespace pipewright::cli
