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

double InnerWaitSeconds::seconds(InnerWait kind, int stage, bool backward) const {
    const PerStage& stages = (*this)[kind];
    if (stage < 0 || static_cast<std::size_t>(stage) >= stages.size()) {
        return 0;
    }
    return stages[static_cast<std::size_t>(stage)][backward ? 1 : 0];
}

}  // namespace pipewright
