#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "pipewright/core/schedule.h"

namespace pipewright {

// Why a schedule cannot be built for a configuration, in words a user reads.
class ScheduleError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

struct ScheduleInfo {
    std::string name;         // "1f1b"
    std::string title;        // "One forward, one backward (PipeDream-Flush)"
    std::string constraints;  // "microbatches >= stages; one stage per device"
    bool splits_backward = false;
    bool multiple_stages_per_rank = false;
    bool microbatching = true;  // false for naive model parallelism
};

// Every generator, in the order `pipewright schedules` lists them.
[[nodiscard]] const std::vector<ScheduleInfo>& schedule_catalog();
[[nodiscard]] const ScheduleInfo* find_schedule(std::string_view name);

// Compute-only action lists for `name`. stage_rank[s] is the rank that runs
// stage s (ranks numbered from 0 without gaps). Throws ScheduleError when the
// configuration does not meet the schedule's constraints.
[[nodiscard]] Schedule generate_schedule(std::string_view name, const std::vector<int>& stage_rank,
                                         int microbatches);

// Lowers a compute-only schedule: after each compute action whose result goes
// to another rank, a SEND; before each compute action whose input comes from
// another rank, the matching RECV. Already lowered schedules are returned as is.
[[nodiscard]] Schedule add_communication(const Schedule& compute_only);

}  // namespace pipewright
