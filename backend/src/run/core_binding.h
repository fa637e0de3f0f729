#pragma once
// How a CPU rank's threads share the machine's cores: each rank on cores of
// its own, and the transport's threads as batch work beside its compute.
//
// Each CPU rank of a run on its own cores. Unbound, a rank's Gloo threads
// (the ones that read a message off the socket and wake the receiver) are
// often woken on the core of the rank that sent the message, where they wait
// behind that rank's compute: on a machine with as many cores as ranks, a
// transfer then arrives when the sender's next action ends, not when its
// bytes do. Bound, every thread of a rank runs on that rank's cores.
#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "pipewright/backend/launcher.h"

namespace pipewright::backend {

// The cores this process may run on (its affinity mask, as taskset, Slurm or
// a container set it), in ascending order.
[[nodiscard]] std::vector<int> allowed_cores();

// The cores of the `index`-th of `ranks` ranks on one machine, `threads`
// each, taken in order from `allowed`; none (stay unbound) when there is one
// rank or the ranks' threads are more than the cores.
[[nodiscard]] std::vector<int> cores_of_rank(const std::vector<int>& allowed, int index, int ranks,
                                             int threads);

// Binds every thread of this process, and those it starts later, to
// `cores`. Returns "" or why it could not.
[[nodiscard]] std::string bind_process_to(const std::vector<int>& cores);

// How many cores' worth of work the machine ran over `window` (from
// /proc/stat), 0 when it cannot tell. The launcher samples it before
// starting its ranks.
[[nodiscard]] double busy_cores_now(std::chrono::milliseconds window);

// At or above this, automatic binding leaves the ranks unbound: bound, a
// rank could not move off a core that other work keeps busy.
inline constexpr double kBusyCores = 0.5;

// The task ids of this process's threads now, in ascending order; none when
// /proc/self/task cannot be read.
[[nodiscard]] std::vector<pid_t> thread_ids();

// Schedules `threads` as batch work (SCHED_BATCH): they get their share of
// the cores but never preempt a running thread when they wake. For the
// threads of Gloo's transport: its event loop takes a connection's lock with
// a try-lock and, finding it held, polls again at once. Woken on the core of
// the rank's thread that holds that lock (posting a send or a receive), it
// preempts it and spins for a whole time slice, 3-5 ms, before the lock is
// released; as batch work it waits for that thread to block or its slice to
// end instead. Returns "" or why not.
[[nodiscard]] std::string schedule_as_batch(const std::vector<pid_t>& threads);

// What a launcher tells its CPU workers, decided once before they start:
// never with `off` or on GPUs (whose choice then reads `off`), always with
// `on`, and with `automatic` unless other work keeps kBusyCores or more busy
// (sampled over 50 ms).
struct CoreBindingChoice {
    CoreBinding mode = CoreBinding::automatic;
    bool bind = false;
    double busy_cores = 0;  // what automatic measured
};
[[nodiscard]] CoreBindingChoice choose_core_binding(CoreBinding mode, bool gpu_ranks);

// How the run's first line ends for `ranks` CPU workers of `threads` threads
// on this machine: ", each rank on a core of its own", ", unbound: other work
// keeps 1.2 cores busy", or nothing (off, GPUs, ranks that do not fit the
// allowed cores, or a machine shared with other launchers of the run, whose
// ranks this launcher does not count).
[[nodiscard]] std::string core_binding_words(const CoreBindingChoice& choice, int ranks,
                                             int threads, bool machine_shared);

}  // namespace pipewright::backend
