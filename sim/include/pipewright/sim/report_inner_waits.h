#pragma once

#include "pipewright/core/inner_waits.h"
#include "pipewright/sim/simulation.h"

namespace pipewright {

// A simulation's inner waits (inner_waits.h), from its stages' costs: the
// tensor-parallel all-reduces with a group, the experts' all-to-alls with
// expert parallelism, and the wait for keys and values only where
// attention did not hide the exchange.
[[nodiscard]] InnerWaitSeconds inner_waits(const SimulationReport& report);

}  // namespace pipewright
