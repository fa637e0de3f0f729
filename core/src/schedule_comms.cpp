#include "pipewright/core/schedule_generators.h"
#include "schedule_internal.h"

namespace pipewright {

// Mirrors torch's _add_send_recv: each RECV sits right before the compute that
// consumes it and each SEND right after the compute that produces it, so a
// backend issues transfers as early and as late as the data allows.
Schedule add_communication(const Schedule& compute_only) {
    if (compute_only.has_communication()) {
        return compute_only;
    }
    Schedule out = compute_only;
    const int last = compute_only.num_stages - 1;
    for (std::size_t r = 0; r < compute_only.ranks.size(); ++r) {
        const int rank = static_cast<int>(r);
        const auto elsewhere = [&](int stage) {
            const int owner = detail::rank_of_stage(compute_only, stage);
            return owner >= 0 && owner != rank;
        };
        const auto& in = compute_only.ranks[r];
        auto& lowered = out.ranks[r];
        lowered.clear();
        lowered.reserve(in.size() * 2);
        for (const Action& a : in) {
            const int st = a.stage;
            const int mb = a.microbatch;
            const bool forward = a.type == ActionType::forward;
            const bool backward =
                a.type == ActionType::backward || a.type == ActionType::backward_input;
            if (forward && st > 0 && elsewhere(st - 1)) {
                lowered.push_back({st, ActionType::recv_forward, mb});
            } else if (backward && st < last && elsewhere(st + 1)) {
                lowered.push_back({st, ActionType::recv_backward, mb});
            }
            lowered.push_back(a);
            if (forward && st < last && elsewhere(st + 1)) {
                lowered.push_back({st, ActionType::send_forward, mb});
            } else if (backward && st > 0 && elsewhere(st - 1)) {
                lowered.push_back({st, ActionType::send_backward, mb});
            }
        }
    }
    return out;
}

}  // namespace pipewright
