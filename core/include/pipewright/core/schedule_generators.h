#pragma once

#include <cstdint>
#include <optional>
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

// The schedules Pipewright generates. Project files and the command line
// name them as to_string spells them; code compares kinds, not names.
enum class ScheduleKind : std::uint8_t {
    naive,             // "naive"
    gpipe,             // "gpipe"
    looped_bfs,        // "looped-bfs"
    one_f_one_b,       // "1f1b"
    interleaved_1f1b,  // "interleaved-1f1b"
    zb_h1,             // "zb-h1"
    zb_h2,             // "zb-h2"
    interleaved_zb,    // "interleaved-zb"
    zbv,               // "zbv"
    dualpipev,         // "dualpipev"
    zb_auto,           // "zb-auto"
};

[[nodiscard]] std::string_view to_string(ScheduleKind kind);
// nullopt when no generator has that name (a CSV schedule's, a typo).
[[nodiscard]] std::optional<ScheduleKind> schedule_kind(std::string_view name);

struct ScheduleInfo {
    ScheduleKind kind = ScheduleKind::gpipe;
    std::string name;         // to_string(kind): "1f1b"
    std::string title;        // "One forward, one backward (PipeDream-Flush)"
    std::string constraints;  // "microbatches >= stages; one stage per device"
    bool splits_backward = false;
    bool multiple_stages_per_rank = false;
    bool microbatching = true;  // false for naive model parallelism
};

// Every generator, in the order `pipewright schedules` lists them.
[[nodiscard]] const std::vector<ScheduleInfo>& schedule_catalog();
[[nodiscard]] const ScheduleInfo* find_schedule(std::string_view name);
[[nodiscard]] const ScheduleInfo& schedule_info(ScheduleKind kind);

// Compute-only action lists for `name`. stage_rank[s] is the rank that runs
// stage s (ranks numbered from 0 without gaps). Throws ScheduleError when the
// configuration does not meet the schedule's constraints.
[[nodiscard]] Schedule generate_schedule(ScheduleKind kind, const std::vector<int>& stage_rank,
                                         int microbatches);
// The same by name; throws ScheduleError listing the known names when none
// has this one.
[[nodiscard]] Schedule generate_schedule(std::string_view name, const std::vector<int>& stage_rank,
                                         int microbatches);

// Lowers a compute-only schedule: after each compute action whose result goes
// to another rank, a SEND; before each compute action whose input comes from
// another rank, the matching RECV. Already lowered schedules are returned as is.
[[nodiscard]] Schedule add_communication(const Schedule& compute_only);

// Where a data-parallel schedule synchronises its replicas.
struct CollectivePlan {
    // ZeRO-3 / FSDP: UNSHARD each stage before its first compute and
    // RESHARD it after its last.
    bool shard_parameters = false;
    // REDUCE_GRAD right after the stage's last backward, so that it runs
    // while the rank computes on (DDP's buckets); otherwise after the
    // rank's last action.
    bool overlap_gradient_sync = true;
};

// Adds the data-parallel collectives of `plan` to a schedule (lowered or
// not): one REDUCE_GRAD per stage, and UNSHARD / RESHARD under ZeRO-3. A
// schedule that has collectives already is returned as is.
[[nodiscard]] Schedule add_collectives(const Schedule& schedule, const CollectivePlan& plan);

}  // namespace pipewright
