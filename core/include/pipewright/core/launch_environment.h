#pragma once

// Which launcher assigns this process its place in a run, read from the
// environment that torchrun, Kubeflow's PyTorchJob or Slurm give each process
// they start, and the torchrun-style agent flags with their PET_* fallbacks.
// No Torch here: the environment is a lookup, so tests can fake it.

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace pipewright {

// A variable or flag of the launch that cannot be used, named with its value.
class LaunchError : public std::invalid_argument {
  public:
    using std::invalid_argument::invalid_argument;
};

// The value of an environment variable, nullopt when it is not set.
using Environment = std::function<std::optional<std::string>(const std::string&)>;

// The process's own environment.
[[nodiscard]] Environment process_environment();

// A process whose rank the environment assigned: it runs that one rank.
struct EnvironmentLaunch {
    std::string launcher;  // "torchrun" or "slurm"
    int rank = 0;
    int world_size = 1;
    std::string world_variable;  // "WORLD_SIZE" or "SLURM_NTASKS", for messages
    int local_rank = 0;          // its place on its machine: its GPU
    // The ranks on its machine (LOCAL_WORLD_SIZE; else up to this one), so
    // that `--device auto` chooses alike for all of them.
    int local_world_size = 1;
    std::string master_host;
    int master_port = 0;
    // torchrun's static rendezvous hosts a TCPStore on MASTER_PORT in its
    // agent (TORCHELASTIC_USE_AGENT_STORE=True): every rank, rank 0 too,
    // connects to it under a prefix of its own instead of hosting one.
    bool agent_store = false;
    std::string store_prefix;  // keys of this attempt, "" when not shared

    bool operator==(const EnvironmentLaunch&) const = default;
};

// The launcher `choice` (auto, own, torchrun or slurm) finds: nullopt for
// Pipewright's own launcher. auto takes torchrun's variables (RANK and
// WORLD_SIZE) first, then those of a Slurm job step of several tasks
// (SLURM_PROCID, SLURM_NTASKS > 1 and SLURM_STEP_ID, which srun sets and a
// batch script's own shell lacks), else its own; variables that describe an
// agent's node rather than a rank (PET_* without LOCAL_RANK, as Kubeflow
// sets for a torchrun in the container) leave the launching to Pipewright. Throws LaunchError
// naming the variable that is missing or malformed and what was expected.
[[nodiscard]] std::optional<EnvironmentLaunch> launch_from_environment(const std::string& choice,
                                                                       const Environment& env);

// "launcher: torchrun, rank 1 of 2, master 127.0.0.1:29500".
[[nodiscard]] std::string describe(const EnvironmentLaunch& launch);

// The hosts of a Slurm node list, in order: "node[01-03,07],gpu1" ->
// node01, node02, node03, node07, gpu1. Throws LaunchError naming
// `variable` for a list that does not read.
[[nodiscard]] std::vector<std::string> expand_slurm_nodelist(const std::string& list,
                                                             const std::string& variable);

// Slurm's master port unless MASTER_PORT says otherwise (torchrun's default).
inline constexpr int kDefaultSlurmMasterPort = 29500;

}  // namespace pipewright
