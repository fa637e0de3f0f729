#include "run_command.h"

#include "commands.h"
#include "option_checks.h"
#include "pipewright/core/expert_parallel.h"
#include "pipewright/core/tensor_parallel.h"

namespace pipewright::cli {
namespace {

// What defines the training (the launcher passes it on to each worker).
void add_training_options(CLI::App* cmd, RunArgs& a) {
    cmd->add_option("project", a.project, "Project file (.json)")->required();
    cmd->add_option("--schedule", a.schedule, "Schedule to use instead of the project's");
    cmd->add_option("--schedule-csv", a.schedule_csv, "Run a schedule from a PyTorch-style CSV");
    cmd->add_option("--microbatches,-m", a.microbatches, "Number of micro-batches")
        ->check(whole_number(1));
    cmd->add_option("--batch-size,-b", a.batch_size, "Samples per iteration")
        ->check(whole_number(1));
    cmd->add_option("--data-parallel", a.data_parallel,
                    "Replicas of the pipeline, each on its own devices and its share of the "
                    "batch (default: the project's data_parallel.size)")
        ->check(whole_number(1));
    cmd->add_option("--tensor-parallel", a.tensor_parallel,
                    "Devices of each stage's tensor-parallel group: a worker each, holding a "
                    "slice of the stage's layers (default: the project's tensor_parallel.size)")
        ->check(whole_number(1, kMaxTensorParallel));
    cmd->add_option("--expert-parallel", a.expert_parallel,
                    "Replicas each mixture of experts' routed experts are split over, tokens "
                    "sent to their experts with an all-to-all (default: the project's "
                    "expert_parallel.size)")
        ->check(whole_number(1, kMaxExpertParallel));
    cmd->add_option("--steps", a.steps, "Training steps (default: the project's)")
        ->check(whole_number(1));
    // At most a week: a wait that long is a hang, and the bound keeps the
    // conversion to milliseconds finite and exact.
    cmd->add_option("--timeout", a.timeout_s,
                    "Seconds any rank waits for another before giving up (default 60)")
        ->check(finite_number(0.001, 604800));
    // For tests: exact comparisons with single-process training.
    cmd->add_option("--data", a.data,
                    "Train on a folder's inputs.pt and targets.pt (tensors saved with "
                    "torch.save) instead of synthetic samples");
    cmd->add_option("--dtype", a.dtype, "Override the compute precision")
        ->check(CLI::IsMember({"float32", "float64"}))
        ->group("");
    cmd->add_flag("--stop-on-nan", a.stop_on_nan,
                  "End the run after the first step whose loss is not finite (NaN or "
                  "infinite), writing every output; without it the run goes on and says so");
    cmd->add_option("--checkpoint-every", a.checkpoint_every,
                    "Save every rank's state (parameters, optimizer, step, data position, "
                    "random state) every N steps into --checkpoint-dir")
        ->check(whole_number(1));
    cmd->add_option("--checkpoint-dir", a.checkpoint_dir,
                    "Folder of the checkpoints, one step-NNNNNN folder per save, the last 2 kept "
                    "(default: checkpoints/ in --out); a restarted job resumes from it")
        ->check(non_empty_path());
    cmd->add_option("--resume", a.resume,
                    "Continue from the newest checkpoint in this folder, or from this "
                    "step-NNNNNN folder; checked against the project first")
        ->check(non_empty_path());
    cmd->add_flag("--save-params", a.save_params,
                  "Write each stage's parameters after the last step (params-stage-S.pt)");
    // The front end adds it for zb-auto (see run_handoff.h).
    cmd->add_option("--schedule-costs", a.schedule_costs, "zb-auto's costs")->group("");
}

// The agent flags read torchrun's PET_* variables when not given, as a
// Kubeflow PyTorchJob or TrainJob sets them for the container's command; a
// value that does not read names both.
CLI::Option* with_variable(CLI::Option* option, const std::string& variable,
                           std::optional<CLI::Validator> check = std::nullopt) {
    option->envname(variable);
    if (check) {
        const std::string name = option->get_name();
        option->check(CLI::Validator(
            [check, variable, name](std::string& text) -> std::string {
                const std::string why = (*check)(text);
                return why.empty() ? why
                                   : why + " (from " + name + ", or from " + variable + " when " +
                                         name + " is not given)";
            },
            check->get_description()));
    }
    return option;
}

}  // namespace

void add_run_command(CLI::App& app, RunArgs& a) {
    CLI::App* cmd = app.add_subcommand(
        "run", "Train the project for real with LibTorch on local CPU ranks and measure it");
    add_training_options(cmd, a);
    cmd->add_option("--warmup", a.warmup, "Steps left out of the medians (default 1)")
        ->check(whole_number(0));
    cmd->add_option("--out", a.out,
                    "Output folder, new or empty (default runs/<model>-<timestamp>)")
        ->check(non_empty_path());
    cmd->add_flag("--force", a.force,
                  "Start even when the run's estimated memory or its ranks exceed this machine");
    cmd->add_flag("--overwrite", a.overwrite,
                  "Replace the earlier run in a non-empty --out (only a run's own files)");
    cmd->add_option("--port", a.port,
                    "Host the rendezvous as a TCPStore on this port (of every interface) "
                    "instead of a private file")
        ->check(whole_number(1, 65535));
    cmd->add_option("--master", a.master,
                    "HOST:PORT of the rendezvous store; node 0 hosts it there, the other nodes "
                    "connect to it (required with --nnodes > 1)");
    with_variable(cmd->add_option("--master-addr", a.master_addr,
                                  "The host of --master, as torchrun spells it (with "
                                  "--master-port, default 29500)"),
                  "PET_MASTER_ADDR");
    with_variable(cmd->add_option("--master-port", a.master_port,
                                  "The port of --master, as torchrun spells it (with "
                                  "--master-addr, default 127.0.0.1)"),
                  "PET_MASTER_PORT", whole_number(1, 65535));
    with_variable(cmd->add_option("--nnodes", a.nnodes,
                                  "Number of nodes (machines) of a multi-node run; start one "
                                  "launcher on each (default 1)"),
                  "PET_NNODES", whole_number(1));
    with_variable(cmd->add_option("--node-rank", a.node_rank,
                                  "This node's index, 0 to nnodes - 1; node 0 hosts the store and "
                                  "writes the complete outputs (default 0)"),
                  "PET_NODE_RANK", whole_number(0));
    with_variable(cmd->add_option("--nproc-per-node", a.nproc_per_node,
                                  "Ranks this node starts (default: ranks / nnodes, in rank "
                                  "order)"),
                  "PET_NPROC_PER_NODE", whole_number(1));
    cmd->add_option("--launcher", a.launcher,
                    "Who assigns the ranks: auto (torchrun's RANK/WORLD_SIZE, else what srun "
                    "gives the tasks of a step of several, else own), own (this launcher starts "
                    "the workers), torchrun or slurm (this process joins as the rank its "
                    "environment names)")
        ->check(CLI::IsMember({"auto", "own", "torchrun", "slurm"}));
    cmd->add_option("--threads-per-rank", a.threads_per_rank,
                    "Torch threads per rank, at most the cores (default: cores / ranks of the "
                    "run on this machine)")
        ->check(whole_number(1));
    cmd->add_option("--core-binding", a.core_binding,
                    "CPU ranks on cores of their own, so that a rank's transfers are not held "
                    "behind another rank's compute: auto (when this machine's cores hold every "
                    "rank's threads and no other work keeps them busy), on (whenever they hold "
                    "them) or off")
        ->check(CLI::IsMember({"auto", "on", "off"}));
    cmd->add_option("--device", a.device,
                    "auto (a GPU per rank when there are enough, else CPUs), cpu or cuda")
        ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
    cmd->add_option("--progress", a.progress, "Progress on stderr: text or json (JSON lines)")
        ->check(CLI::IsMember({"text", "json"}));
    cmd->add_flag("--json", a.json, "Print the summary as one JSON object");
}

void add_worker_command(CLI::App& app, WorkerArgs& w) {
    // Internal: started by the launcher, hidden from --help. Its arguments
    // pass through untouched to the backend, which alone writes and reads them.
    CLI::App* cmd = app.add_subcommand("worker", "One rank of a run (started by run)");
    cmd->group("");
    cmd->prefix_command();
    cmd->callback([cmd, &w] { w.arguments = cmd->remaining(); });
}

}  // namespace pipewright::cli
