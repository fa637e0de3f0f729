#include "profile/rank_thread_conditions.h"

#include "run/core_binding.h"

namespace pipewright::backend::profiling {

bool bind_like_a_run() {
    return !cores_of_rank(allowed_cores(), 0, 2, 1).empty() &&
           choose_core_binding(CoreBinding::automatic, false).bind;
}

RankThreadConditions::RankThreadConditions(int index, bool bind) {
    if (bind) {
        const std::vector<int> cores = cores_of_rank(allowed_cores(), index, 2, 1);
        if (!cores.empty() && sched_getaffinity(0, sizeof saved_mask_, &saved_mask_) == 0) {
            cpu_set_t mask;
            CPU_ZERO(&mask);
            for (const int c : cores) {
                CPU_SET(c, &mask);
            }
            mask_saved_ = sched_setaffinity(0, sizeof mask, &mask) == 0;
        }
    }
    // Best effort, as a run's worker: a profile under the default
    // scheduling is still a profile.
    const sched_param none{};
    batch_ = sched_getscheduler(0) == SCHED_OTHER && sched_setscheduler(0, SCHED_BATCH, &none) == 0;
}

void RankThreadConditions::transport_made() {
    if (batch_) {
        const sched_param none{};
        (void)sched_setscheduler(0, SCHED_OTHER, &none);
        batch_ = false;
    }
}

RankThreadConditions::~RankThreadConditions() {
    transport_made();
    if (mask_saved_) {
        (void)sched_setaffinity(0, sizeof saved_mask_, &saved_mask_);
    }
}

}  // namespace pipewright::backend::profiling
