// The launch files of a project: a Slurm batch script, a Kubeflow
// PyTorchJob and TrainJob, and a torchrun command line. Each starts
// `pipewright run PROJECT` the way launch_environment.cpp reads it:
//   - Slurm: one task per rank, joining as the rank srun names
//     (--launcher slurm: SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, the
//     first host of the node list, MASTER_PORT);
//   - torchrun: one agent per node starting its ranks (--launcher torchrun:
//     RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT);
//   - Kubernetes: one pod per node, whose `pipewright run` is that node's
//     launcher (--launcher own) with the node's place given by the operator
//     (PyTorchJob: RANK and MASTER_ADDR/MASTER_PORT on the command line;
//     TrainJob: the PET_* variables of its torch plugin).
#include "pipewright/core/launch_files.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "pipewright/core/printable_name.h"
#include "pipewright/core/project_io.h"

namespace pipewright {
namespace {

std::string plural(int n, const std::string& one, const std::string& many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
}

// A YAML scalar: JSON's double-quoted strings are YAML's.
std::string yaml_string(const std::string& text) {
    return nlohmann::json(text).dump();
}

// What every file says about the run it starts.
struct Facts {
    LaunchLayout layout;
    std::string project_path;  // as the nodes see it
    std::string project_name;  // its file name, for the first line
    std::string model;
    std::string schedule;
    std::string job;
    std::string device;  // "cuda" or "cpu", for `run --device`
    std::vector<std::string> run_arguments;
    std::string image;
    int master_port = 29500;
    // Kubernetes: a pod a node, or a pod a rank where the nodes hold
    // different numbers of ranks (a job's pods all run as many).
    int pods = 1;
    int ranks_per_pod = 1;
};

std::string devices_words(const Facts& f) {
    return describe(f.layout) + (f.layout.gpus ? ": NCCL between the GPUs, Gloo for the rest"
                                               : ": Gloo, CPU launch files, no GPU is asked for");
}

// The comment lines every file starts with, after its own first line.
// The comment a file starts with: what it is (`what` for the project), how
// it is used, the run, and the assumptions every file makes.
std::vector<std::string> opening_comment(const Facts& f, const std::string& what,
                                         const std::vector<std::string>& how) {
    std::vector<std::string> lines{what + " for " + printable_name(f.project_name) +
                                   ", written by `pipewright launch-files`."};
    lines.insert(lines.end(), how.begin(), how.end());
    lines.insert(lines.end(), {"",
                               "The run: model " + printable_name(f.model) + ", schedule " +
                                   f.schedule + ", " + devices_words(f) + ".",
                               "Assumptions:",
                               "  - the project " + printable_name(f.project_path) +
                                   " is at this path on every node (a shared filesystem);"});
    if (f.layout.ranks_moved > 0) {
        lines.push_back("  - launchers number ranks node by node (ranks 0-" +
                        std::to_string(f.layout.ranks_on_node.front() - 1) +
                        " on the first node, ...), so " +
                        plural(f.layout.ranks_moved, "rank runs", "ranks run") +
                        " on another node than the placement puts it: the run trains alike,");
        lines.push_back("    but some transfers cross other links than the simulation's;");
    }
    return lines;
}

// "  - `pipewright` (with pipewright-backend ...) is on `where`".
std::string program_assumption(const Facts& f, const std::string& where) {
    return std::string("  - `pipewright` (with pipewright-backend") +
           (f.layout.gpus ? " and a LibTorch with CUDA" : "") + ") is on " + where;
}

std::string run_command_words(const Facts& f, const std::string& program,
                              const std::string& project, const std::string& launcher) {
    std::string words =
        program + " run " + project + " --launcher " + launcher + " --device " + f.device;
    for (const auto& a : f.run_arguments) {
        words += " " + shell_quoted(a);
    }
    return words;
}

void comment_lines(std::ostringstream& out, const std::vector<std::string>& lines) {
    for (const auto& l : lines) {
        out << (l.empty() ? "#" : "# " + l) << '\n';
    }
}

void interface_lines(std::ostringstream& out, const Facts& f) {
    out << "# The interface the nodes reach each other on, where they have several:\n";
    out << "# export GLOO_SOCKET_IFNAME=eth0\n";
    if (f.layout.gpus) {
        out << "# export NCCL_SOCKET_IFNAME=eth0\n";
    }
}

std::string slurm_script(const Facts& f) {
    const auto& l = f.layout;
    std::ostringstream out;
    out << "#!/bin/bash\n";
    auto c = opening_comment(
        f, "Slurm batch script",
        {"Submit it with `sbatch slurm.sbatch [RUN OPTIONS]`: the options go to `pipewright "
         "run`."});
    c.push_back(program_assumption(f, "every node's PATH, or in $PIPEWRIGHT;"));
    if (l.even()) {
        c.push_back("  - srun starts one task per rank, " + std::to_string(l.ranks_per_node) +
                    " on each node (block distribution: ranks 0-" +
                    std::to_string(l.ranks_per_node - 1) + " on the first);");
    } else {
        c.push_back(
            "  - srun starts one task per rank, as many on each node as the placement "
            "puts there, in the");
        c.push_back("    order of the node list (a host file, --distribution=arbitrary);");
    }
    c.push_back("    each joins as the rank Slurm gives it (SLURM_PROCID of SLURM_NTASKS),");
    if (l.gpus) {
        c.push_back(
            "    on GPU SLURM_LOCALID of its node: every task must see its node's GPUs "
            "(no --gpus-per-task binding);");
    } else {
        c.push_back(
            "    with the node's cores shared by its ranks (--threads-per-rank sets them);");
    }
    c.push_back("  - the master is the first host of the job's node list: rank 0 hosts the");
    c.push_back("    rendezvous store there on port " + std::to_string(f.master_port) +
                " (MASTER_PORT), which every node must reach;");
    c.push_back("  - the outputs go to runs/ under the folder sbatch was started from (or");
    c.push_back("    --out), on the shared filesystem; the job's log to slurm-JOBID.out.");
    comment_lines(out, c);
    out << "#SBATCH --job-name=" << f.job << '\n';
    out << "#SBATCH --nodes=" << l.nodes << '\n';
    out << "#SBATCH --ntasks-per-node=" << l.ranks_per_node << '\n';
    if (l.gpus) {
        out << "#SBATCH --gres=gpu:" << l.ranks_per_node << '\n';
    }
    out << '\n';
    out << "PROJECT=" << shell_quoted(f.project_path) << '\n';
    out << "PIPEWRIGHT=${PIPEWRIGHT:-pipewright}\n";
    out << "MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\n";
    out << "export MASTER_ADDR\n";
    out << "export MASTER_PORT=${MASTER_PORT:-" << f.master_port << "}\n";
    interface_lines(out, f);
    out << '\n';
    if (!l.even()) {
        out << "# The placement's ranks on each node, in the order of the node list.\n";
        out << "ranks_on_node=(";
        for (std::size_t i = 0; i < l.ranks_on_node.size(); ++i) {
            out << (i == 0 ? "" : " ") << l.ranks_on_node[i];
        }
        out << ")\n";
        out << "SLURM_HOSTFILE=$(mktemp)\n";
        out << "export SLURM_HOSTFILE\n";
        out << "trap 'rm -f \"$SLURM_HOSTFILE\"' EXIT\n";
        out << "node=0\n";
        out << "for host in $(scontrol show hostnames \"$SLURM_JOB_NODELIST\"); do\n";
        out << "  for ((k = 0; k < ${ranks_on_node[node]:-0}; k++)); do echo \"$host\"; done\n";
        out << "  node=$((node + 1))\n";
        out << "done > \"$SLURM_HOSTFILE\"\n";
        out << '\n';
        out << "srun --nodes=" << l.nodes << " --ntasks=" << l.world
            << " --distribution=arbitrary --kill-on-bad-exit=1 \\\n";
    } else {
        out << "srun --nodes=" << l.nodes << " --ntasks=" << l.world
            << " --ntasks-per-node=" << l.ranks_per_node << " --kill-on-bad-exit=1 \\\n";
    }
    out << "  " << run_command_words(f, "\"$PIPEWRIGHT\"", "\"$PROJECT\"", "slurm") << " \"$@\"\n";
    return out.str();
}

std::string torchrun_script(const Facts& f) {
    const auto& l = f.layout;
    std::ostringstream out;
    out << "#!/bin/sh\n";
    std::vector<std::string> how{
        "Run it on the node: `sh torchrun.sh [RUN OPTIONS]`; the options go to `pipewright run`."};
    if (l.nodes > 1) {
        how = {"Run it on each of the " + std::to_string(l.nodes) +
                   " nodes, with NODE_RANK=0 on the master and 1 to " +
                   std::to_string(l.nodes - 1) + " on the others,",
               "and MASTER_ADDR the master's address on every node: `NODE_RANK=1 "
               "MASTER_ADDR=node0 sh torchrun.sh [RUN OPTIONS]`;",
               "the options go to `pipewright run`."};
    }
    auto c = opening_comment(f, "torchrun command line", how);
    c.push_back(program_assumption(f,
                                   "the PATH, or in $PIPEWRIGHT, and $PYTHON (python3) has "
                                   "torch;"));
    c.push_back(
        "  - torchrun's agent starts " +
        (l.even() ? std::to_string(l.ranks_per_node) : std::string("the placement's number of")) +
        " processes a node, each joining as the rank torchrun gives it");
    c.push_back(std::string("    (RANK of WORLD_SIZE") +
                (l.gpus ? ", on GPU LOCAL_RANK of its node);" : ");"));
    c.push_back("  - the master's agent hosts the rendezvous store on port " +
                std::to_string(f.master_port) + " (MASTER_PORT)" +
                (l.nodes > 1 ? ", which every node must reach;" : ";"));
    c.push_back(
        "  - the flags are spelt with underscores, as torch 1.13 (Debian's) and 2.x read "
        "them; --redirects 1 --tee 1");
    c.push_back(
        "    keep Debian's torch 1.13 under Python 3.11 from failing before it starts "
        "(docs/real-runs.md).");
    comment_lines(out, c);
    out << '\n';
    out << "PROJECT=" << shell_quoted(f.project_path) << '\n';
    out << "PIPEWRIGHT=${PIPEWRIGHT:-pipewright}\n";
    out << "PYTHON=${PYTHON:-python3}\n";
    if (l.nodes == 1) {
        out << "NODE_RANK=${NODE_RANK:-0}\n";
        out << "MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}\n";
    } else {
        out << "NODE_RANK=${NODE_RANK:?set NODE_RANK to the index of this node: 0 on the master, 1 "
               "to "
            << l.nodes - 1 << " on the others}\n";
        out << "MASTER_ADDR=${MASTER_ADDR:?set MASTER_ADDR to the address of the master, the node "
               "with NODE_RANK 0}\n";
    }
    out << "MASTER_PORT=${MASTER_PORT:-" << f.master_port << "}\n";
    std::string nproc = std::to_string(l.ranks_per_node);
    if (!l.even()) {
        // The nodes with fewer ranks by their rank, the others by default.
        out << "# The placement's ranks on this node.\n";
        out << "case \"$NODE_RANK\" in\n";
        std::map<int, std::string, std::greater<>> nodes_with;
        for (std::size_t i = 0; i < l.ranks_on_node.size(); ++i) {
            if (l.ranks_on_node[i] != l.ranks_per_node) {
                auto& list = nodes_with[l.ranks_on_node[i]];
                list += (list.empty() ? "" : "|") + std::to_string(i);
            }
        }
        for (const auto& [ranks, nodes] : nodes_with) {
            out << "  " << nodes << ") NPROC_PER_NODE=" << ranks << " ;;\n";
        }
        out << "  *) NPROC_PER_NODE=" << l.ranks_per_node << " ;;\n";
        out << "esac\n";
        nproc = "\"$NPROC_PER_NODE\"";
    }
    interface_lines(out, f);
    out << '\n';
    out << "exec \"$PYTHON\" -m torch.distributed.run --no_python --nnodes " << l.nodes
        << " --nproc_per_node " << nproc << " \\\n";
    out << "  --node_rank \"$NODE_RANK\" --master_addr \"$MASTER_ADDR\" --master_port "
           "\"$MASTER_PORT\" \\\n";
    out << "  --redirects 1 --tee 1 \\\n";
    out << "  " << run_command_words(f, "\"$PIPEWRIGHT\"", "\"$PROJECT\"", "torchrun")
        << " \"$@\"\n";
    return out.str();
}

// The container's command of a manifest: `pipewright run` and its options.
std::vector<std::string> container_command(const Facts& f, const std::vector<std::string>& flags) {
    std::vector<std::string> words{"pipewright", "run", f.project_path, "--launcher", "own"};
    words.insert(words.end(), flags.begin(), flags.end());
    words.push_back("--device");
    words.push_back(f.device);
    words.insert(words.end(), f.run_arguments.begin(), f.run_arguments.end());
    return words;
}

void yaml_list(std::ostringstream& out, const std::string& indent,
               const std::vector<std::string>& items) {
    for (const auto& item : items) {
        out << indent << "- " << yaml_string(item) << '\n';
    }
}

void yaml_environment(std::ostringstream& out, const std::string& indent, const Facts& f) {
    out << indent << "- name: \"GLOO_SOCKET_IFNAME\"\n";
    out << indent << "  value: \"eth0\"  # placeholder: the pod network's interface\n";
    if (f.layout.gpus) {
        out << indent << "- name: \"NCCL_SOCKET_IFNAME\"\n";
        out << indent << "  value: \"eth0\"  # placeholder: the pod network's interface\n";
    }
}

// limits: GPUs (a device plugin's resource is a limit), or for CPU ranks a
// core each as a request.
void yaml_resources(std::ostringstream& out, const std::string& indent, const Facts& f) {
    if (f.layout.gpus) {
        out << indent << "limits:\n";
        out << indent << "  nvidia.com/gpu: " << f.ranks_per_pod << '\n';
    } else {
        out << indent << "requests:\n";
        out << indent << "  cpu: " << yaml_string(std::to_string(f.ranks_per_pod)) << '\n';
    }
}

std::vector<std::string> kubernetes_comment(const Facts& f, const std::string& kind) {
    auto c =
        opening_comment(f, "Kubeflow " + kind, {"Submit it with `kubectl apply -f` this file."});
    c.push_back("  - the image " + f.image + " (a placeholder) has `pipewright` and");
    c.push_back(std::string("    pipewright-backend on its PATH") +
                (f.layout.gpus ? ", with a LibTorch with CUDA and NCCL;" : ";"));
    if (f.layout.even()) {
        c.push_back("  - one pod a node: its `pipewright run` starts the node's " +
                    plural(f.ranks_per_pod, "rank", "ranks") + " itself (--launcher own)" +
                    (f.layout.gpus ? ", rank k on the pod's GPU k;" : ";"));
    } else {
        c.push_back("  - one pod a rank (" + std::to_string(f.pods) +
                    " pods), since the placement's nodes hold different numbers of ranks and");
        c.push_back(
            "    the pods of a job all run as many: each pod's `pipewright run` starts "
            "its one rank (--launcher own);");
    }
    return c;
}

std::string pytorchjob_manifest(const Facts& f) {
    const auto& l = f.layout;
    std::ostringstream out;
    auto c = kubernetes_comment(f, "PyTorchJob (kubeflow.org/v1, the training operator)");
    c.push_back(
        "  - the operator gives each pod RANK (its index: 0 for the Master, i + 1 for "
        "Worker i)");
    c.push_back(
        "    and MASTER_ADDR/MASTER_PORT, which the command passes as --node-rank and "
        "--master-addr/--master-port;");
    c.push_back("    the Master's pod hosts the rendezvous store on port " +
                std::to_string(f.master_port) + " (pytorchjob-port), which every pod must reach;");
    c.push_back(
        "  - a volume claim named pipewright-shared (a placeholder) holds the project's "
        "folder, mounted at the");
    c.push_back(
        "    same path in every pod; the run's outputs go to runs/ in that folder "
        "(the working directory);");
    c.push_back("  - GLOO_SOCKET_IFNAME" + std::string(l.gpus ? " and NCCL_SOCKET_IFNAME" : "") +
                " name the pod network's interface (eth0, a placeholder).");
    comment_lines(out, c);
    const std::string folder = std::filesystem::path(f.project_path).parent_path().string();
    const std::vector<std::string> command = container_command(
        f, {"--nnodes", std::to_string(f.pods), "--nproc-per-node", std::to_string(f.ranks_per_pod),
            "--node-rank", "$(RANK)", "--master-addr", "$(MASTER_ADDR)", "--master-port",
            "$(MASTER_PORT)"});
    out << "apiVersion: kubeflow.org/v1\n";
    out << "kind: PyTorchJob\n";
    out << "metadata:\n";
    out << "  name: " << yaml_string(f.job) << '\n';
    out << "spec:\n";
    out << "  nprocPerNode: " << yaml_string(std::to_string(f.ranks_per_pod)) << '\n';
    out << "  pytorchReplicaSpecs:\n";
    const auto replica = [&](const std::string& type, int replicas) {
        out << "    " << type << ":\n";
        out << "      replicas: " << replicas << '\n';
        out << "      restartPolicy: Never\n";
        out << "      template:\n";
        out << "        spec:\n";
        out << "          containers:\n";
        out << "            - name: \"pytorch\"\n";
        out << "              image: " << yaml_string(f.image) << '\n';
        out << "              workingDir: " << yaml_string(folder) << '\n';
        out << "              command:\n";
        yaml_list(out, "                ", command);
        out << "              ports:\n";
        out << "                - name: \"pytorchjob-port\"\n";
        out << "                  containerPort: " << f.master_port << '\n';
        out << "              env:\n";
        yaml_environment(out, "                ", f);
        out << "              resources:\n";
        yaml_resources(out, "                ", f);
        out << "              volumeMounts:\n";
        out << "                - name: \"project\"\n";
        out << "                  mountPath: " << yaml_string(folder) << '\n';
        out << "          volumes:\n";
        out << "            - name: \"project\"\n";
        out << "              persistentVolumeClaim:\n";
        out << "                claimName: \"pipewright-shared\"\n";
    };
    replica("Master", 1);
    if (f.pods > 1) {
        replica("Worker", f.pods - 1);
    }
    return out.str();
}

std::string trainjob_manifest(const Facts& f) {
    const auto& l = f.layout;
    std::ostringstream out;
    auto c = kubernetes_comment(f, "TrainJob (trainer.kubeflow.org/v1alpha1, Kubeflow Trainer)");
    c.push_back(
        "  - the runtime torch-distributed (a ClusterTrainingRuntime) gives each pod "
        "PET_NNODES,");
    c.push_back(
        "    PET_NPROC_PER_NODE, PET_NODE_RANK, PET_MASTER_ADDR and PET_MASTER_PORT, "
        "which `pipewright run`");
    c.push_back(
        "    reads as --nnodes, --nproc-per-node, --node-rank, --master-addr and --master-port; "
        "the first pod hosts");
    c.push_back(
        "    the rendezvous store on the runtime's port (29400), which every pod must "
        "reach;");
    c.push_back(
        "  - the runtime mounts the project's folder at the same path in every pod (or "
        "the image holds it);");
    c.push_back("    add --out DIR (after `--` of launch-files) to keep the outputs on a volume;");
    c.push_back("  - GLOO_SOCKET_IFNAME" + std::string(l.gpus ? " and NCCL_SOCKET_IFNAME" : "") +
                " name the pod network's interface (eth0, a placeholder).");
    comment_lines(out, c);
    out << "apiVersion: trainer.kubeflow.org/v1alpha1\n";
    out << "kind: TrainJob\n";
    out << "metadata:\n";
    out << "  name: " << yaml_string(f.job) << '\n';
    out << "spec:\n";
    out << "  runtimeRef:\n";
    out << "    apiGroup: \"trainer.kubeflow.org\"\n";
    out << "    kind: \"ClusterTrainingRuntime\"\n";
    out << "    name: \"torch-distributed\"\n";
    out << "  trainer:\n";
    out << "    image: " << yaml_string(f.image) << '\n';
    out << "    command:\n";
    yaml_list(out, "      ", container_command(f, {}));
    out << "    numNodes: " << f.pods << '\n';
    out << "    numProcPerNode: " << f.ranks_per_pod << '\n';
    out << "    resourcesPerNode:\n";
    yaml_resources(out, "      ", f);
    out << "    env:\n";
    yaml_environment(out, "      ", f);
    return out.str();
}

bool has_control_character(const std::string& text) {
    return std::any_of(text.begin(), text.end(), [](char ch) {
        const auto u = static_cast<unsigned char>(ch);
        return u < 0x20 || u == 0x7f;
    });
}

}  // namespace

std::string launch_job_name(const std::string& project_path) {
    const std::string stem = std::filesystem::path(project_path).stem().string();
    std::string name;
    for (const char ch : stem) {
        const auto u = static_cast<unsigned char>(ch);
        const bool keep = u < 0x80 && std::isalnum(u) != 0;
        if (keep) {
            name += static_cast<char>(std::tolower(u));
        } else if (!name.empty() && name.back() != '-') {
            name += '-';
        }
    }
    if (name.empty() || std::isalpha(static_cast<unsigned char>(name.front())) == 0) {
        name.insert(0, "pipewright-");
    }
    if (name.size() > 40) {
        name.resize(40);
    }
    while (!name.empty() && name.back() == '-') {
        name.pop_back();
    }
    return name;
}

std::string shell_quoted(const std::string& text) {
    const bool plain = !text.empty() && std::all_of(text.begin(), text.end(), [](char ch) {
        const auto u = static_cast<unsigned char>(ch);
        return (u < 0x80 && std::isalnum(u) != 0) ||
               std::string_view("@%+=:,./_-").find(ch) != std::string_view::npos;
    });
    if (plain) {
        return text;
    }
    std::string quoted = "'";
    for (const char ch : text) {
        quoted += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    }
    return quoted + "'";
}

std::vector<LaunchFile> make_launch_files(const AnalyzedProject& project,
                                          const LaunchFileOptions& options) {
    if (!std::filesystem::path(options.project_path).is_absolute()) {
        throw LaunchFilesError(
            "the launch files need the project's absolute path, as every node "
            "sees it, got \"" +
            printable_name(options.project_path) + "\"");
    }
    for (const auto& text : [&] {
             std::vector<std::string> all{options.project_path, options.image};
             all.insert(all.end(), options.run_arguments.begin(), options.run_arguments.end());
             return all;
         }()) {
        if (has_control_character(text)) {
            throw LaunchFilesError("\"" + printable_name(text) +
                                   "\" holds a control character, which a launch file cannot "
                                   "carry: rename it");
        }
    }
    // As `pipewright run` refuses it before any worker starts.
    if (project.data_parallel() > 1 && project.project.data_parallel.zero_stage >= 2) {
        throw LaunchFilesError("data_parallel.zero_stage: ZeRO stage " +
                               std::to_string(project.project.data_parallel.zero_stage) +
                               " is simulation-only, so `pipewright run` would refuse it on the "
                               "cluster; set zero_stage to 0 or 1 to run it");
    }
    Facts f;
    f.layout = launch_layout(project);
    f.project_path = options.project_path;
    f.project_name = std::filesystem::path(options.project_path).filename().string();
    f.model = project.project.model.name;
    f.schedule = project.schedule.name;
    f.job = launch_job_name(options.project_path);
    f.device = f.layout.gpus ? "cuda" : "cpu";
    f.run_arguments = options.run_arguments;
    f.image = options.image;
    f.master_port = options.master_port;
    f.pods = f.layout.even() ? f.layout.nodes : f.layout.world;
    f.ranks_per_pod = f.layout.even() ? f.layout.ranks_per_node : 1;

    const auto wanted = [&](LaunchKind kind) {
        return options.kinds.empty() ||
               std::find(options.kinds.begin(), options.kinds.end(), kind) != options.kinds.end();
    };
    std::vector<LaunchFile> files;
    if (wanted(LaunchKind::slurm)) {
        files.push_back({"slurm.sbatch", slurm_script(f), true});
    }
    if (wanted(LaunchKind::kubernetes)) {
        files.push_back({"pytorchjob.yaml", pytorchjob_manifest(f), false});
        files.push_back({"trainjob.yaml", trainjob_manifest(f), false});
    }
    if (wanted(LaunchKind::torchrun)) {
        files.push_back({"torchrun.sh", torchrun_script(f), true});
    }
    return files;
}

std::vector<std::filesystem::path> write_launch_files(const std::vector<LaunchFile>& files,
                                                      const std::filesystem::path& folder) {
    namespace fs = std::filesystem;
    fs::create_directories(folder);
    std::vector<fs::path> written;
    for (const auto& file : files) {
        const fs::path path = folder / file.name;
        write_file_atomically(path, file.text);
        if (file.executable) {
            // Executable by whoever may read it (the umask decided that).
            const fs::perms now = fs::status(path).permissions();
            fs::perms add = fs::perms::none;
            for (const auto& [read, exec] :
                 {std::pair{fs::perms::owner_read, fs::perms::owner_exec},
                  std::pair{fs::perms::group_read, fs::perms::group_exec},
                  std::pair{fs::perms::others_read, fs::perms::others_exec}}) {
                if ((now & read) != fs::perms::none) {
                    add |= exec;
                }
            }
            fs::permissions(path, add, fs::perm_options::add);
        }
        written.push_back(path);
    }
    return written;
}

}  // namespace pipewright
