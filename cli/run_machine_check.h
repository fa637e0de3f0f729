#pragma once

// Whether a run (or a profile) fits this machine before any worker starts. A run of a model
// far bigger than the machine (GPT-3 on a laptop) starts a worker per rank
// and fills the memory until the kernel's out-of-memory killer takes the
// whole machine down. The front end, which has the simulator's memory model,
// estimates what this node's ranks will hold and refuses in words, with the
// figures, unless `run --force`.

#include <cstdint>
#include <string>

#include "pipewright/core/launch_environment.h"
#include "profile_command.h"
#include "run_command.h"

namespace pipewright::cli {

struct MachineResources {
    std::int64_t available_bytes = 0;  // what can be allocated without swapping
    int cores = 1;
    bool has_gpus = false;  // NVIDIA devices present: `run --device auto` uses them
};

// Whether this machine shows NVIDIA GPUs (/dev/nvidia0, or the driver's
// list of GPUs), where `run --device auto` puts its ranks.
[[nodiscard]] bool has_nvidia_gpus();

// This machine: MemAvailable of /proc/meminfo, the hardware threads, GPUs.
[[nodiscard]] MachineResources this_machine();

// What a worker process holds before its model exists (LibTorch, Gloo, the
// process itself): about 155 MiB measured on CPU runs here (peak RSS less
// `above runtime`, mlp-cpu.json, Debian's LibTorch 1.13), rounded up.
inline constexpr std::int64_t kWorkerRuntimeBytes = 200LL << 20;
// More ranks than this many per core would each get a thin slice of a core
// and miss their peers' timeouts: refused as well.
inline constexpr int kMostRanksPerCore = 8;

// Why this node cannot run `a` (its estimated memory or its ranks against
// `machine`), with the figures and the way on; "" when it can, or when the
// project does not load (the backend reports why). Under torchrun or Slurm
// (`environment`, launch_environment.h) this machine holds the launcher's
// local ranks, not every rank of the run.
[[nodiscard]] std::string run_machine_problem(
    const RunArgs& a, const MachineResources& machine,
    const Environment& environment = process_environment());

// The same for `profile`, which builds every layer at once with a stand-in
// of its parameters and the optimizer's state (six copies of the weights at
// most, with Adam) and each layer's example input, and runs one layer's
// forward and backward at a time.
[[nodiscard]] std::string profile_machine_problem(const ProfileArgs& a,
                                                  const MachineResources& machine);

}  // namespace pipewright::cli
