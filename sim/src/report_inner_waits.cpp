#include "pipewright/sim/report_inner_waits.h"

#include <algorithm>

namespace pipewright {

InnerWaitSeconds inner_waits(const SimulationReport& r) {
    InnerWaitSeconds table;
    const bool context = std::any_of(r.stages.begin(), r.stages.end(), [](const StageCost& s) {
        return s.context_forward_s > 0 || s.context_backward_s > 0;
    });
    for (const StageCost& s : r.stages) {
        if (r.tensor_parallel.size > 1) {
            table[InnerWait::tensor].push_back({s.tensor_forward_s, s.tensor_backward_s});
        }
        if (r.expert_parallel.size > 1) {
            table[InnerWait::experts].push_back({s.expert_forward_s, s.expert_backward_s});
        }
        if (context) {
            table[InnerWait::context].push_back({s.context_forward_s, s.context_backward_s});
        }
    }
    return table;
}

}  // namespace pipewright
