#include "profile_command.h"

#include "option_checks.h"

namespace pipewright::cli {

void add_profile_command(CLI::App& app, ProfileArgs& a) {
    CLI::App* cmd = app.add_subcommand(
        "profile",
        "Measure each layer's and a transfer's real cost on this machine, for simulate --profile");
    cmd->add_option("project", a.project, "Project file (.json)")->required();
    cmd->add_option("--out,-o", a.out, "Profile file to write (default profile.json)")
        ->check(non_empty_path());
    cmd->add_option("--device", a.device, "auto (the first GPU when there is one), cpu or cuda")
        ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
    cmd->add_option("--threads", a.threads,
                    "Torch threads for the layers (default: cores / ranks, what a rank of "
                    "`run` gets)")
        ->check(whole_number(1));
    cmd->add_option("--repeats", a.repeats,
                    "Timed repetitions per layer; medians kept (default 10)")
        ->check(whole_number(1, 100000));
    cmd->add_option("--warmup", a.warmup, "Untimed repetitions per layer first (default 2)")
        ->check(whole_number(0, 100000));
    cmd->add_option("--microbatches,-m", a.microbatches,
                    "Number of micro-batches (sets the micro-batch size measured at)")
        ->check(whole_number(1));
    cmd->add_option("--batch-size,-b", a.batch_size, "Samples per iteration")
        ->check(whole_number(1));
    cmd->add_option("--progress", a.progress,
                    "Progress on stderr: text or json (JSON lines, as run's)")
        ->check(CLI::IsMember({"text", "json"}));
    cmd->add_option("--sizes", a.sizes,
                    "Micro-batch sizes to time the layers at besides the project's, comma "
                    "separated (default: 1 and powers of 4 up to a pipeline's batch)")
        ->delimiter(',')
        ->check(whole_number(1, 1 << 20));
    cmd->add_option("--concurrent-ranks", a.concurrent_ranks,
                    "Ranks computing at once while the layers are timed, the timed one "
                    "included (default on CPUs: the run's ranks, up to one a core; 1: alone)")
        ->check(whole_number(1, 1024));
    cmd->add_flag("--json", a.json, "Print the profile as JSON instead of a table");
    cmd->add_flag("--force", a.force,
                  "Measure even when the estimated memory exceeds what this machine has");
}

}  // namespace pipewright::cli
