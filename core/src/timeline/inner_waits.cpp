#include "pipewright/core/inner_waits.h"

#include <algorithm>

namespace pipewright {

std::string_view trace_name(InnerWait kind) {
    switch (kind) {
        case InnerWait::tensor:
            return "TP_ALL_REDUCE";
        case InnerWait::experts:
            return "EP_ALL_TO_ALL";
        case InnerWait::context:
            return "CP_KV_EXCHANGE";
    }
    return "WAIT";
}

bool InnerWaitSeconds::any() const {
    return std::any_of(table_.begin(), table_.end(),
                       [](const PerStage& stages) { return !stages.empty(); });
}

double InnerWaitSeconds::seconds(InnerWait kind, const Action& action) const {
    const PerStage& stages = (*this)[kind];
    const int stage = action.stage;
    if (stage < 0 || static_cast<std::size_t>(stage) >= stages.size()) {
        return 0;
    }
    const auto& pass = stages[static_cast<std::size_t>(stage)];
    switch (action.type) {
        case ActionType::forward:
            return pass[0];
        case ActionType::backward:
        case ActionType::backward_input:
            return pass[1];
        default:
            return 0;
    }
}

}  // namespace pipewright
