#pragma once
// A profiler thread playing a rank under the conditions a run's CPU rank has
// (run/core_binding.h): on a core of its own where the machine has one for
// each rank and is otherwise quiet, and the transport's threads that it
// starts (Gloo's event loop and workers) as batch work on that core. Those
// threads read what arrives off the socket; as batch work they wait for the
// rank's thread to block, so bytes that arrive while the rank computes are
// read when it comes to wait for them, and that is what a run's receive of
// them costs.
#include <sched.h>

#include <string>

namespace pipewright::backend::profiling {

// Whether the profiler's ranks are bound: as a run binds by default
// (`--core-binding auto`), when two ranks of one thread fit the allowed
// cores and other work keeps less than kBusyCores busy. Sampled once.
[[nodiscard]] bool bind_like_a_run();

class RankThreadConditions {
  public:
    // Binds the calling thread to the `index`-th of two ranks' cores (when
    // `bind`) and schedules it as batch work until transport_made(), so
    // that the threads it starts meanwhile inherit both.
    RankThreadConditions(int index, bool bind);
    // The calling thread back to the default scheduling; its affinity stays
    // until the destructor.
    void transport_made();
    // The calling thread as it was (rank 0 is the profiler's own thread).
    ~RankThreadConditions();
    RankThreadConditions(const RankThreadConditions&) = delete;
    RankThreadConditions& operator=(const RankThreadConditions&) = delete;

  private:
    cpu_set_t saved_mask_{};
    bool mask_saved_ = false;
    bool batch_ = false;
};

}  // namespace pipewright::backend::profiling
