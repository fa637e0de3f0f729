#pragma once

#include "pipewright/core/diagnostics.h"
#include "pipewright/core/schedule.h"

namespace pipewright {

// Checks a (possibly hand-written) schedule: every stage runs every
// micro-batch's forward and backward (B, or I then W) exactly once on the rank
// that owns the stage, sends match receives, and the lists can run to the end
// without waiting on each other forever. A deadlock is reported with the rank
// and the action where each blocked rank stalls. Paths are "schedule.rank[R][i]".
[[nodiscard]] Diagnostics check_schedule(const Schedule& schedule);

}  // namespace pipewright
