#include "commands.h"

#include "config_import.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>

#include "backend_handoff.h"
#include "calibrate_command.h"
#include "catalog_commands.h"
#include "compare_command.h"
#include "import_command.h"
#include "launch_files_command.h"
#include "pipewright/core/printable_name.h"
#include "pipewright/core/project_io.h"
#include "plan_command.h"
#include "profile_command.h"
#include "run_command.h"
#include "run_handoff.h"
#include "run_machine_check.h"
#include "simulate_command.h"

namespace pipewright::cli {

void print_problems(std::ostream& err, const std::string& what, const Diagnostics& diagnostics) {
    const auto n = diagnostics.size();
    err << "pipewright: " << printable_name(what) << ": " << n << " problem" << (n == 1 ? "" : "s")
        << ":\n";
    // Paths hold the file's keys and messages quote its names: both untrusted.
    for (const auto& d : diagnostics.items()) {
        err << "  " << printable_name(d.path.empty() ? d.message : d.path + ": " + d.message)
            << '\n';
    }
}

std::optional<AnalyzedProject> load_analyzed(const std::string& path, AnalysisOptions options,
                                             std::ostream& err) {
    LoadedProject loaded = load_project_file(path);
    if (!loaded.project) {
        print_problems(err, path, loaded.diagnostics);
        return std::nullopt;
    }
    options.base_dir = std::filesystem::path(path).parent_path();
    Diagnostics problems = loaded.diagnostics;
    // Semantic checks only make sense on a structurally sound file, but report
    // both kinds together when the structure is fine enough to try.
    auto analyzed = analyze_project(*loaded.project, options, problems);
    if (!problems.empty()) {
        print_problems(err, path, problems);
        return std::nullopt;
    }
    return analyzed;
}

namespace {

struct ValidateArgs {
    std::string project;
    bool json = false;
};

int run_validate(const ValidateArgs& args, std::ostream& out, std::ostream& err) {
    LoadedProject loaded = load_project_file(args.project);
    Diagnostics problems = loaded.diagnostics;
    std::optional<AnalyzedProject> analyzed;
    if (loaded.project) {
        AnalysisOptions options;
        options.base_dir = std::filesystem::path(args.project).parent_path();
        analyzed = analyze_project(*loaded.project, options, problems);
    }
    if (args.json) {
        nlohmann::json list = nlohmann::json::array();
        for (const auto& d : problems.items()) {
            list.push_back({{"path", d.path}, {"message", d.message}});
        }
        out << nlohmann::json{{"valid", problems.empty()}, {"problems", list}}.dump(2) << '\n';
        return problems.empty() ? kOk : kInvalidInput;
    }
    if (!problems.empty()) {
        print_problems(err, args.project, problems);
        return kInvalidInput;
    }
    const auto& p = *analyzed;
    out << args.project << ": valid. " << p.project.model.layers.size() << " layers in "
        << p.stages.size() << " stage" << (p.stages.size() == 1 ? "" : "s") << " on "
        << p.num_ranks() << " device" << (p.num_ranks() == 1 ? "" : "s") << "; " << p.schedule.name
        << " with " << p.microbatches << " micro-batch" << (p.microbatches == 1 ? "" : "es")
        << " of " << p.microbatch_size << ".\n";
    return kOk;
}

bool wants_version(int argc, const char* const* argv) {
    for (int i = 1; i < argc; ++i) {
        if (std::string_view(argv[i]) == "--version") {
            return true;
        }
    }
    return false;
}

}  // namespace

int run(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
    BackendCommands hand_over;
    hand_over.run = [&](const RunArgs& a, std::ostream&, std::ostream& e) {
        if (!a.force) {
            if (const std::string problem = run_machine_problem(a, this_machine());
                !problem.empty()) {
                e << "pipewright: " << problem << '\n';
                return static_cast<int>(kInvalidInput);
            }
        }
        return hand_over_to_backend(argc, argv, "run", e, schedule_cost_arguments(a));
    };
    hand_over.profile = [&](const ProfileArgs& a, std::ostream&, std::ostream& e) {
        if (!a.force) {
            if (const std::string problem = profile_machine_problem(a, this_machine());
                !problem.empty()) {
                e << "pipewright: " << problem << '\n';
                return static_cast<int>(kInvalidInput);
            }
        }
        return hand_over_to_backend(argc, argv, "profile", e);
    };
    hand_over.worker = [&](const WorkerArgs&, std::ostream& e) {
        return hand_over_to_backend(argc, argv, "worker", e);
    };
    hand_over.import = [&](const ImportArgs&, std::ostream&, std::ostream& e) {
        return hand_over_to_backend(argc, argv, "import", e);
    };
    hand_over.calibrate = [&](const CalibrateArgs&, std::ostream&, std::ostream& e) {
        return hand_over_to_backend(argc, argv, "calibrate", e);
    };
    return run(argc, argv, out, err, hand_over);
}

int run(int argc, const char* const* argv, std::ostream& out, std::ostream& err,
        const BackendCommands& backend) {
    if (wants_version(argc, argv)) {
        out << "pipewright " << PIPEWRIGHT_VERSION << '\n';
        return kOk;
    }
    CLI::App app{"Pipewright: plan, simulate and run pipeline model-parallel training",
                 "pipewright"};
    app.require_subcommand(1);
    bool version_flag = false;  // handled before parsing; declared for --help
    app.add_flag("--version", version_flag, "Print the version and exit");
    app.footer("Exit codes: 0 success, 1 invalid input (message on stderr), 2 usage error.");

    SimulateArgs simulate;
    add_simulate_command(app, simulate);

    PlanArgs plan;
    add_plan_command(app, plan);

    RunArgs run_args;
    add_run_command(app, run_args);
    WorkerArgs worker_args;
    add_worker_command(app, worker_args);
    ProfileArgs profile;
    add_profile_command(app, profile);
    CalibrateArgs calibrate;
    add_calibrate_command(app, calibrate);
    CompareArgs compare;
    add_compare_command(app, compare);
    ImportArgs import_args;
    add_import_command(app, import_args);
    LaunchFilesArgs launch_files;
    add_launch_files_command(app, launch_files);

    ValidateArgs validate;
    CLI::App* validate_cmd =
        app.add_subcommand("validate", "Check a project file and list every problem with its path");
    validate_cmd->add_option("project", validate.project, "Project file (.json)")->required();
    validate_cmd->add_flag("--json", validate.json, "Print {valid, problems} as JSON");

    CatalogArgs catalog;
    add_catalog_commands(app, catalog);

    for (auto* sub : app.get_subcommands({})) {
        if (sub->get_option_no_throw("--version") == nullptr) {
            sub->add_flag("--version", version_flag, "Print the version and exit");
        }
    }

    // CLI11 answers a misspelt command with "A subcommand is required":
    // name it and the commands instead.
    const auto commands = app.get_subcommands({});
    if (argc > 1 && argv[1][0] != '-' &&
        std::none_of(commands.begin(), commands.end(),
                     [&](const CLI::App* sub) { return sub->check_name(argv[1]); })) {
        std::string known;
        for (const auto* sub : commands) {
            if (!sub->get_group().empty()) {
                known += (known.empty() ? "" : ", ") + sub->get_name();
            }
        }
        err << "pipewright: unknown command \"" << printable_name(argv[1])
            << "\"; the commands are " << known << " (pipewright --help says what each does)\n";
        return kUsage;
    }

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int code = app.exit(e, out, err);
        return code == 0 ? kOk : kUsage;
    }

    if (app.got_subcommand("simulate")) {
        return run_simulate(simulate, out, err);
    }
    if (app.got_subcommand("plan")) {
        return run_plan(plan, out, err);
    }
    if (app.got_subcommand("run")) {
        return backend.run(run_args, out, err);
    }
    if (app.got_subcommand("worker")) {
        return backend.worker(worker_args, err);
    }
    if (app.got_subcommand("profile")) {
        return backend.profile(profile, out, err);
    }
    if (app.got_subcommand("calibrate")) {
        return backend.calibrate(calibrate, out, err);
    }
    if (app.got_subcommand("import")) {
        if (is_hf_config(import_args)) {
            return run_config_import(import_args, out, err);
        }
        if (import_args.input_shape.empty()) {
            err << "pipewright: import: --input-shape is required for a TorchScript module "
                   "(the shape of one sample, such as 3,224,224)\n";
            return kUsage;
        }
        if (import_args.nodes != 1 || import_args.seq_len) {
            err << "pipewright: import: --nodes and --seq-len are for a Hugging Face config; "
                   "a TorchScript module is placed on --devices of one machine\n";
            return kUsage;
        }
        return backend.import(import_args, out, err);
    }
    if (app.got_subcommand("launch-files")) {
        return run_launch_files(launch_files, out, err);
    }
    if (app.got_subcommand("compare")) {
        return run_compare(compare, out, err);
    }
    if (app.got_subcommand("validate")) {
        return run_validate(validate, out, err);
    }
    return run_catalog_command(app, catalog, out, err);
}

}  // namespace pipewright::cli
