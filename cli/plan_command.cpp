#include "plan_command.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <stop_token>

#include "commands.h"
#include "data_parallel_format.h"
#include "option_checks.h"
#include "pipewright/core/memory_headroom.h"
#include "pipewright/core/printable_name.h"
#include "pipewright/core/profile.h"
#include "pipewright/core/project_io.h"
#include "pipewright/core/schedule_generators.h"
#include "pipewright/sim/attention_note.h"
#include "pipewright/sim/host_pace.h"
#include "pipewright/sim/kernel_breakdown.h"
#include "pipewright/sim/planner.h"
#include "pipewright/sim/profile_coverage.h"
#include "plan_json.h"
#include "report_format.h"
#include "tensor_parallel_format.h"

namespace pipewright::cli {

void add_plan_command(CLI::App& app, PlanArgs& args) {
    CLI::App* cmd = app.add_subcommand(
        "plan", "Choose stages, schedule and micro-batches for the fastest iteration that fits");
    cmd->footer(
        "Exit codes: 0 success, 1 invalid input or nothing fits (message on stderr), 2 usage "
        "error.");
    cmd->add_option("project", args.project, "Project file (.json)")->required();
    std::string schedules;
    for (const auto& info : schedule_catalog()) {
        schedules += (schedules.empty() ? "" : ", ") + info.name;
    }
    cmd->add_option("--schedule", args.schedule, "Plan for this schedule only (" + schedules + ")");
    cmd->add_option("--microbatches,-m", args.microbatches, "Plan for this micro-batch count only")
        ->check(whole_number(1));
    const auto count_or_auto = [](const std::string& name) {
        return CLI::Validator(
            [](const std::string& text) -> std::string {
                if (text == "auto") {
                    return {};
                }
                return whole_number(1)(text);
            },
            name + "|auto");
    };
    cmd->add_option("--data-parallel", args.data_parallel,
                    "Replicas of the pipeline: a count, or \"auto\" to try every count that "
                    "divides the devices (the tensor-parallel groups) and the batch (default: "
                    "the project's)")
        ->check(count_or_auto("COUNT"));
    cmd->add_option("--tensor-parallel", args.tensor_parallel,
                    "Devices of each stage's tensor-parallel group: a size, or \"auto\" to try "
                    "every size that divides a container's devices and the model's dimensions, "
                    "each with every replica count (default: the project's)")
        ->check(count_or_auto("SIZE"));
    cmd->add_option("--expert-parallel", args.expert_parallel,
                    "Replicas each mixture-of-experts block's experts are split over: a size, or "
                    "\"auto\" to try every size that divides the blocks' experts, each with "
                    "every replica count it divides (default: the project's)")
        ->check(count_or_auto("SIZE"));
    cmd->add_option("--context-parallel", args.context_parallel,
                    "Replicas each sequence is split over: a size, or \"auto\" to try every size "
                    "whose double divides the sequence, each with every replica count it divides "
                    "(default: the project's)")
        ->check(count_or_auto("SIZE"));
    cmd->add_flag("--sequence-parallel", args.sequence_parallel,
                  "With tensor parallelism, split the layer norms and activations along the "
                  "sequence too (default: the project's)");
    cmd->add_flag("--recompute-every-block", args.recompute_every_block,
                  "Keep the search's recomputation of every unit of each stage, instead of "
                  "recomputing the fewest blocks at the start of each stage that fit "
                  "(training.recompute_blocks), or none, where that is faster");
    add_cost_options(*cmd, args.costs);
    cmd->add_flag("--json", args.json, "Print the plan and its comparisons as one JSON object");
    cmd->add_option("--apply", args.apply, "Write the project with the plan applied to this file")
        ->check(non_empty_path());
}

namespace {

// Ctrl-C during a plan (only a flag: see run_plan).
volatile std::sig_atomic_t g_plan_interrupted = 0;
extern "C" void on_plan_interrupt(int /*signal*/) {
    g_plan_interrupted = 1;
}

// Exit status of a plan ended by Ctrl-C (128 + SIGINT), as `run`'s.
constexpr int kInterrupted = 130;

std::string gain_text(double percent) {
    // Small gains keep a second decimal, so that +0.04 % does not read as none.
    return (percent >= 0 ? "+" : "") + format_fixed(percent, std::fabs(percent) < 1 ? 2 : 1) + " %";
}

std::string layer_range(const Project& project, const PlannedStage& stage) {
    return cli::layer_range(project.model, stage.first_layer, stage.last_layer);
}

const DeviceMetrics* metrics_of(const SimulationReport& report, const std::string& device) {
    for (const auto& d : report.devices) {
        if (d.name == device) {
            return &d;
        }
    }
    return nullptr;
}

int device_count(const PlanOutcome& outcome) {
    std::vector<std::string> devices;
    for (const auto& s : outcome.stages) {
        if (std::find(devices.begin(), devices.end(), s.device) == devices.end()) {
            devices.push_back(s.device);
        }
    }
    return static_cast<int>(devices.size());
}

void print_plan(std::ostream& out, const PlanResult& result, const Project& project,
                const std::string& path, const std::string& costs,
                std::int64_t memory_margin_bytes) {
    const PlanOutcome& plan = result.plan;
    const SimulationReport& r = *plan.report;
    const int total_devices = static_cast<int>(project.topology.devices().size());
    out << "Plan        " << printable_name(project.model.name) << " (" << printable_name(path)
        << ")\n";
    out << "Chosen      " << plan.schedule << " · " << r.microbatches << " micro-batch"
        << (r.microbatches == 1 ? "" : "es") << " of " << r.microbatch_size << " · "
        << plan.stages.size() << " stage" << (plan.stages.size() == 1 ? "" : "s");
    const int replicas = std::max(1, result.project.data_parallel.size);
    const int tensor = std::max(1, result.project.tensor_parallel.size);
    if (tensor > 1) {
        out << " of " << tensor << " devices"
            << (result.project.tensor_parallel.sequence_parallel ? " (tensor and sequence parallel)"
                                                                 : " (tensor parallel)");
    }
    if (replicas > 1) {
        out << " × " << replicas << " replicas";
        if (result.project.context_parallel.size > 1) {
            out << ", " << result.project.context_parallel.size << " to a sequence";
        }
        if (result.project.expert_parallel.size > 1) {
            out << ", experts over " << result.project.expert_parallel.size;
        }
    }
    out << " on " << device_count(plan) * replicas * tensor << " of " << total_devices << " device"
        << (total_devices == 1 ? "" : "s") << '\n';
    out << "Iteration   " << format_duration(r.iteration_time_s) << " · "
        << format_rate(r.throughput_samples_per_s) << " samples/s · bubble "
        << format_percent(r.bubble_fraction) << '\n';
    // The planner counts what the memory model counts: a layout it packs to
    // within NCCL's buffers of a GPU's memory is said (memory_headroom.h).
    if (memory_margin_bytes > 0) {
        out << "Memory      every GPU keeps "
            << format_bytes(static_cast<double>(memory_margin_bytes))
            << " free (--memory-margin)\n";
    } else if (const auto tight = tightest_gpu(r.devices)) {
        out << "Memory      " << tight_memory_note(*tight) << '\n';
    }
    if (const auto g = gain_over(plan, result.input)) {
        out << "Gain        " << gain_text(*g) << " over the input placement";
        // A layout over capacity is no baseline a user could run: say so.
        if (!result.input.report->all_fit) {
            out << " (which does not fit)";
        }
        if (const auto u = gain_over(plan, result.uniform)) {
            out << ", " << gain_text(*u) << " over a uniform split";
            if (!result.uniform.report->all_fit) {
                out << (result.input.report->all_fit ? " (which does not fit)"
                                                     : " (which does not fit either)");
            }
        }
        out << '\n';
    }
    if (result.schedules.size() > 1) {
        // Why this schedule: the best each schedule the search tried reached.
        out << "Schedules   ";
        for (std::size_t i = 0; i < result.schedules.size(); ++i) {
            const auto& s = result.schedules[i];
            out << (i == 0 ? "" : " · ") << s.schedule << ' '
                << (s.iteration_s ? format_duration(*s.iteration_s) : "does not fit");
        }
        out << " (fastest simulated split of each)\n";
    }
    if (!costs.empty()) {
        out << "Costs       " << costs << '\n';
    }
    if (!result.recomputation_choice.empty()) {
        out << "Recompute   " << result.recomputation_choice << '\n';
    } else if (project.training.recompute_blocks && !result.project.training.recompute_blocks) {
        out << "Recompute   "
            << (result.project.training.full_recompute() ? "every block" : "nothing")
            << ": the planner prices recomputation per stage, not training.recompute_blocks ("
            << *project.training.recompute_blocks << ")\n";
    }
    if (!result.data_parallel.empty()) {
        print_plan_replicas(out, result);
    }
    out << '\n';

    TextTable stages({"stage", "device", "layers", "", "busy", "peak memory", "capacity", "fits"});
    for (std::size_t c : {2u, 4u, 5u, 6u}) {
        stages.right_align(c);
    }
    for (std::size_t k = 0; k < plan.stages.size(); ++k) {
        const auto& s = plan.stages[k];
        const DeviceMetrics* d = metrics_of(r, s.device);
        std::string device = s.device;
        for (const auto& group : r.tensor_groups) {
            if (!group.empty() && group.front() == s.device) {
                device = tensor_group_words(group);
            }
        }
        stages.add_row({std::to_string(k), printable_name(device),
                        std::to_string(s.first_layer) + "-" + std::to_string(s.last_layer),
                        layer_range(project, s), d ? format_duration(d->busy_s) : "-",
                        d ? format_bytes(static_cast<double>(d->peak_memory_bytes)) : "-",
                        d ? format_bytes(static_cast<double>(d->memory_capacity_bytes)) : "-",
                        d ? (d->fits ? "yes" : "NO") : "-"});
    }
    stages.print(out);
    out << '\n';

    TextTable compare({"", "stages", "schedule", "micro-batches", "iteration", "samples/s",
                       "bubble", "peak memory", "fits", "plan gain"});
    for (std::size_t c : {1u, 3u, 4u, 5u, 6u, 7u, 9u}) {
        compare.right_align(c);
    }
    std::vector<std::string> notes;
    const auto row = [&](const std::string& label, const PlanOutcome& o, bool is_plan) {
        if (!o.report) {
            compare.add_row({label, "-", o.schedule.empty() ? "-" : o.schedule, "-", "-", "-", "-",
                             "-", "-", "n/a"});
            if (!o.reason.empty()) {
                notes.push_back(printable_name(label + ": " + o.reason));
            }
            return;
        }
        const auto& x = *o.report;
        std::int64_t peak = 0;
        for (const auto& d : x.devices) {
            peak = std::max(peak, d.peak_memory_bytes);
        }
        const auto g = gain_over(plan, o);
        compare.add_row(
            {label, std::to_string(o.stages.size()), x.schedule,
             std::to_string(x.microbatches) + " of " + std::to_string(x.microbatch_size),
             format_duration(x.iteration_time_s), format_rate(x.throughput_samples_per_s),
             format_percent(x.bubble_fraction), format_bytes(static_cast<double>(peak)),
             x.all_fit ? "yes" : "NO", is_plan ? "" : (g ? gain_text(*g) : "-")});
    };
    row("plan", plan, true);
    row("input", result.input, false);
    row("uniform", result.uniform, false);
    compare.print(out);
    for (const auto& n : notes) {
        out << "  " << n << '\n';
    }
    out << "\nSearched " << result.statistics.split_searches << " split"
        << (result.statistics.split_searches == 1 ? "" : "s") << " and ran "
        << result.statistics.simulations << " simulation"
        << (result.statistics.simulations == 1 ? "" : "s") << " in "
        << format_duration(result.statistics.elapsed_s);
    if (result.statistics.bounded > 0) {
        out << " (" << result.statistics.bounded << " layout"
            << (result.statistics.bounded == 1 ? "" : "s")
            << " left unplanned: they could not beat one found)";
    }
    out << ".\n";
}

}  // namespace

int run_plan(const PlanArgs& args, std::ostream& out, std::ostream& err) {
    LoadedProject loaded = load_project_file(args.project);
    if (!loaded.project || !loaded.diagnostics.empty()) {
        print_problems(err, args.project, loaded.diagnostics);
        return kInvalidInput;
    }
    PlanOptions options;
    options.schedule = args.schedule;
    options.microbatches = args.microbatches;
    if (args.data_parallel) {
        options.data_parallel = *args.data_parallel == "auto" ? 0 : std::stoi(*args.data_parallel);
    }
    if (args.tensor_parallel) {
        options.tensor_parallel =
            *args.tensor_parallel == "auto" ? 0 : std::stoi(*args.tensor_parallel);
    }
    if (args.expert_parallel) {
        options.expert_parallel =
            *args.expert_parallel == "auto" ? 0 : std::stoi(*args.expert_parallel);
    }
    if (args.context_parallel) {
        options.context_parallel =
            *args.context_parallel == "auto" ? 0 : std::stoi(*args.context_parallel);
    }
    if (args.sequence_parallel) {
        options.sequence_parallel = true;
    }
    options.fewest_recomputed_blocks = !args.recompute_every_block;
    options.base_dir = std::filesystem::path(args.project).parent_path();
    CostInputs cost_inputs;
    const auto costs = cost_model_options(args.costs, cost_inputs, err);
    if (!costs) {
        return kInvalidInput;
    }
    options.costs = *costs;
    options.catalog = cost_inputs.catalog_or_null();
    if (!check_profile_fit(*costs, *loaded.project, args.costs.strict, err)) {
        return kInvalidInput;
    }

    // A long search says that it is moving, and Ctrl-C ends it with the best
    // layout planned so far (the handler only sets a flag; the planner's
    // progress call, on this thread, turns it into a stop request).
    std::stop_source stop;
    options.stop = stop.get_token();
    options.best_so_far_on_stop = true;
    g_plan_interrupted = 0;
    const auto previous_handler = std::signal(SIGINT, on_plan_interrupt);
    const auto started = std::chrono::steady_clock::now();
    auto next_note = started + std::chrono::seconds(3);
    options.on_progress = [&](const PlanStatistics& s) {
        if (g_plan_interrupted != 0 && !stop.stop_requested()) {
            stop.request_stop();
        }
        const auto now = std::chrono::steady_clock::now();
        if (now >= next_note && !stop.stop_requested()) {
            err << "pipewright: planning… " << s.simulations << " simulations in "
                << format_duration(std::chrono::duration<double>(now - started).count())
                << " (Ctrl-C ends it with the best layout found so far)\n"
                << std::flush;
            next_note = now + std::chrono::seconds(5);
        }
    };
    struct RestoreHandler {
        void (*handler)(int);
        ~RestoreHandler() { std::signal(SIGINT, handler); }
    } const restore{previous_handler};

    PlanResult result;
    try {
        result = plan_pipeline(*loaded.project, options);
    } catch (const PlanCancelled&) {
        err << "pipewright: interrupted before any layout was planned; no plan\n";
        return kInterrupted;
    } catch (const InputError& e) {
        print_problems(err, args.project, e.diagnostics());
        return kInvalidInput;
    } catch (const std::exception& e) {
        err << "pipewright: " << printable_name(args.project) << ": " << printable_name(e.what())
            << '\n';
        return kInvalidInput;
    }

    if (!result.feasible) {
        err << "pipewright: " << printable_name(args.project) << ": "
            << printable_text(result.why_nothing_fits);
        if (args.json) {
            out << plan_result_json(result, *loaded.project).dump(2) << '\n';
        }
        return kInvalidInput;
    }
    if (costs->profile != nullptr && result.plan.report) {
        // The plan may split the batch into sizes the profile never measured.
        if (auto size =
                profile_size_warning(*costs->profile, result.plan.report->microbatch_size)) {
            err << "pipewright: warning: the planned layout: " << *size << '\n';
        }
    }
    if (const std::string unused = unused_attention_kernel_warning(*loaded.project);
        !unused.empty()) {
        err << "pipewright: warning: " << unused << '\n';
    }
    std::string cost_words;
    if (result.plan.report) {
        AnalysisOptions planned_analysis;
        planned_analysis.base_dir = options.base_dir;
        planned_analysis.catalog = options.catalog;
        for (const std::string& shared : planned_core_sharing_warnings(
                 result.project, costs->profile, cost_inputs.catalog_or_null())) {
            err << "pipewright: warning: the planned layout: " << shared << '\n';
        }
        // Analysed once for both: on 16,384 devices an analysis is a tenth
        // of a second.
        Diagnostics problems;
        if (const auto planned = analyze_project(result.project, planned_analysis, problems)) {
            if (auto host = host_pace_warning(*planned, stage_kernels(*planned, *costs))) {
                err << "pipewright: warning: the planned layout: " << *host << '\n';
            }
            cost_words = attention_kernel_note(*planned, *costs);
        }
    }
    if (args.apply) {
        try {
            save_project_file(result.project, *args.apply);
        } catch (const std::exception& e) {
            err << "pipewright: cannot write the planned project: " << e.what() << '\n';
            return kInvalidInput;
        }
    }
    if (args.json) {
        out << plan_result_json(result, *loaded.project).dump(2) << '\n';
        return result.interrupted ? kInterrupted : kOk;
    }
    print_plan(out, result, *loaded.project, args.project, cost_words,
               cost_inputs.memory_margin_bytes);
    if (args.apply) {
        out << "Wrote " << *args.apply << " (the project with this plan)\n";
    } else {
        out << "Write the planned project with --apply OUT.json.\n";
    }
    if (result.interrupted) {
        err << "pipewright: interrupted: the plan above is the best of the layouts planned "
               "before Ctrl-C; the others say \"not planned: the search was stopped\"\n";
        return kInterrupted;
    }
    return kOk;
}

}  // namespace pipewright::cli
