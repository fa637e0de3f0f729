#include "launch_files_command.h"

#include <algorithm>
#include <filesystem>

#include "commands.h"
#include "option_checks.h"
#include "pipewright/core/printable_name.h"
#include "pipewright/core/project_io.h"
#include "run_command.h"
#include "run_handoff.h"

namespace pipewright::cli {
namespace {

namespace fs = std::filesystem;

// The options after `--` as `pipewright run` reads them, so that the files
// count the ranks of the run they start (--data-parallel, --tensor-parallel)
// and a typo is caught here rather than on the cluster. Empty `problem`
// when they read.
RunArgs forwarded_run_arguments(const LaunchFilesArgs& a, std::string& problem) {
    // What each file sets itself, for the nodes it describes.
    static const std::vector<std::string> kSetByTheFiles{
        "--launcher",    "--nnodes",      "--node-rank", "--nproc-per-node", "--master",
        "--master-addr", "--master-port", "--port",      "--device"};
    for (const auto& word : a.run_arguments) {
        for (const auto& option : kSetByTheFiles) {
            if (word == option || word.starts_with(option + "=")) {
                problem = option +
                          " is set by each launch file for the nodes it describes; leave it out "
                          "of the options after --";
                return {};
            }
        }
    }
    CLI::App app{"", "pipewright"};
    RunArgs run;
    add_run_command(app, run);
    std::vector<std::string> words{"pipewright", "run", a.project};
    words.insert(words.end(), a.run_arguments.begin(), a.run_arguments.end());
    std::vector<const char*> argv;
    argv.reserve(words.size());
    for (const auto& w : words) {
        argv.push_back(w.c_str());
    }
    try {
        app.parse(static_cast<int>(argv.size()), argv.data());
    } catch (const CLI::ParseError& e) {
        problem =
            std::string("the options after -- are not those of `pipewright run`: ") + e.what();
    }
    return run;
}

// How each file is submitted, for the listing.
std::string how_to_submit(const std::string& name, const fs::path& path, const LaunchLayout& l) {
    const std::string p = printable_name(path.string());
    if (name.ends_with(".sbatch")) {
        return "sbatch " + p;
    }
    if (name.ends_with(".yaml")) {
        return "kubectl apply -f " + p;
    }
    return l.nodes == 1 ? "sh " + p : "NODE_RANK=R MASTER_ADDR=HOST sh " + p + " on each node";
}

}  // namespace

std::string default_launch_folder(const std::string& project) {
    const fs::path p(project);
    return (p.parent_path() / (p.stem().string() + "-launch")).string();
}

void add_launch_files_command(CLI::App& app, LaunchFilesArgs& a) {
    CLI::App* cmd = app.add_subcommand(
        "launch-files",
        "Write what a cluster runs the project with: a Slurm batch script, Kubeflow PyTorchJob "
        "and TrainJob manifests, a torchrun command line");
    cmd->add_option("project", a.project, "Project file (.json)")->required();
    cmd->add_flag("--slurm", a.slurm, "Write the Slurm batch script (slurm.sbatch)");
    cmd->add_flag("--kubernetes", a.kubernetes,
                  "Write the Kubeflow manifests (pytorchjob.yaml, trainjob.yaml)");
    cmd->add_flag("--torchrun", a.torchrun, "Write the torchrun command line (torchrun.sh)");
    cmd->add_option("--out", a.out,
                    "Folder for the files, made when missing (default: PROJECT-launch beside "
                    "the project); files of the same names in it are replaced")
        ->check(non_empty_path());
    cmd->add_option(
        "--image", a.image,
        "Container image of the Kubernetes manifests (default: a placeholder, " + a.image + ")");
    cmd->add_option("run-options", a.run_arguments,
                    "After --: options for every `pipewright run` of the files (--steps 50)");
    cmd->footer("Without --slurm, --kubernetes or --torchrun it writes all of them.");
}

int run_launch_files(const LaunchFilesArgs& a, std::ostream& out, std::ostream& err) {
    std::string problem;
    const RunArgs run = forwarded_run_arguments(a, problem);
    if (!problem.empty()) {
        err << "pipewright: launch-files: " << problem << '\n';
        return kUsage;
    }
    if (a.image.empty()) {
        err << "pipewright: launch-files: --image must name an image\n";
        return kUsage;
    }
    const fs::path folder(a.out.value_or(default_launch_folder(a.project)));
    std::error_code ec;
    const std::vector<NamedFile> inputs{{"project", a.project},
                                        {"--schedule-csv file", run.schedule_csv.value_or("")}};
    if (fs::exists(folder, ec) && !fs::is_directory(folder, ec)) {
        if (!check_outputs_spare_inputs(inputs, {{"--out", folder.string()}}, err)) {
            return kUsage;
        }
        err << "pipewright: launch-files: --out " << printable_name(folder.string())
            << " is a file; give a folder (made when missing)\n";
        return kUsage;
    }

    const auto project = load_analyzed(a.project, run_analysis_options(run), err);
    if (!project) {
        return kInvalidInput;
    }
    LaunchFileOptions options;
    // As every node sees it: the same absolute path on a shared filesystem.
    options.project_path = fs::absolute(a.project, ec).lexically_normal().string();
    options.run_arguments = a.run_arguments;
    options.image = a.image;
    if (a.slurm) {
        options.kinds.push_back(LaunchKind::slurm);
    }
    if (a.kubernetes) {
        options.kinds.push_back(LaunchKind::kubernetes);
    }
    if (a.torchrun) {
        options.kinds.push_back(LaunchKind::torchrun);
    }
    std::vector<LaunchFile> files;
    LaunchLayout layout;
    try {
        layout = launch_layout(*project);
        files = make_launch_files(*project, options);
    } catch (const LaunchFilesError& e) {
        err << "pipewright: " << printable_name(a.project) << ": " << e.what() << '\n';
        return kInvalidInput;
    }

    std::vector<NamedFile> outputs;
    for (const auto& f : files) {
        outputs.push_back({"the launch file", (folder / f.name).string()});
    }
    if (!check_outputs_spare_inputs(inputs, outputs, err)) {
        return kUsage;
    }
    fs::create_directories(folder, ec);
    if (ec) {
        err << "pipewright: launch-files: cannot make the folder "
            << printable_name(folder.string()) << ": " << ec.message() << '\n';
        return kInvalidInput;
    }
    for (const auto& o : outputs) {
        if (!check_output_file("launch file", o.path, err)) {
            return kInvalidInput;
        }
    }
    std::vector<fs::path> written;
    try {
        written = write_launch_files(files, folder);
    } catch (const std::exception& e) {
        err << "pipewright: launch-files: " << e.what() << '\n';
        return kInvalidInput;
    }

    out << printable_name(a.project) << ": " << describe(layout)
        << (layout.gpus ? "" : " (Gloo: CPU launch files)") << ".\n";
    if (!layout.even()) {
        out << "The nodes hold different numbers of ranks: Slurm lays the tasks out by a host "
               "file, torchrun.sh starts each node's own number, and the Kubeflow jobs run a pod "
               "per rank.\n";
    }
    if (layout.ranks_moved > 0) {
        out << "Note: launchers number ranks node by node, so " << layout.ranks_moved << " of the "
            << layout.world
            << " ranks run on another node than the placement's: the run trains alike, but some "
               "transfers cross other links than the simulation's.\n";
    }
    out << "Wrote " << written.size() << " file" << (written.size() == 1 ? "" : "s") << " into "
        << printable_name(folder.string()) << "/:\n";
    std::size_t width = 0;
    for (const auto& f : files) {
        width = std::max(width, f.name.size());
    }
    for (std::size_t i = 0; i < files.size(); ++i) {
        out << "  " << files[i].name << std::string(width + 2 - files[i].name.size(), ' ')
            << how_to_submit(files[i].name, written[i], layout) << '\n';
    }
    out << "Each file starts with the assumptions it makes: the project at "
        << printable_name(options.project_path)
        << " on every node, `pipewright` on the PATH (or in the image), the master's port and "
           "the network interface.\n";
    return kOk;
}

}  // namespace pipewright::cli
