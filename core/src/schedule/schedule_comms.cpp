#include "pipewright/core/schedule_generators.h"
#include "schedule/schedule_internal.h"

namespace pipewright {

// Mirrors torch's _add_send_recv: each RECV sits right before the compute that
// consumes it and each SEND right after the compute that produces it, so a
// backend issues transfers as early and as late as the data allows; an
// overlapped pair (OVERLAP_F_B) counts as one compute.
Schedule add_communication(const Schedule& compute_only) {
    if (compute_only.has_communication()) {
        return compute_only;
    }
    Schedule out;
    out.name = compute_only.name;
    out.num_stages = compute_only.num_stages;
    out.num_microbatches = compute_only.num_microbatches;
    out.stage_rank = compute_only.stage_rank;
    out.ranks.resize(compute_only.ranks.size());  // filled below, without a copy first
    const int last = compute_only.num_stages - 1;
    for (std::size_t r = 0; r < compute_only.ranks.size(); ++r) {
        const int rank = static_cast<int>(r);
        const auto elsewhere = [&](int stage) {
            const int owner = detail::rank_of_stage(compute_only, stage);
            return owner >= 0 && owner != rank;
        };
        const auto& in = compute_only.ranks[r];
        // Whether each compute action gets a receive before it and a send after it.
        const auto recv_before = [&](const Action& a) {
            const bool forward = a.type == ActionType::forward;
            const bool backward =
                a.type == ActionType::backward || a.type == ActionType::backward_input;
            return (forward && a.stage > 0 && elsewhere(a.stage - 1)) ||
                   (backward && a.stage < last && elsewhere(a.stage + 1));
        };
        const auto send_after = [&](const Action& a) {
            const bool forward = a.type == ActionType::forward;
            const bool backward =
                a.type == ActionType::backward || a.type == ActionType::backward_input;
            return (forward && a.stage < last && elsewhere(a.stage + 1)) ||
                   (backward && a.stage > 0 && elsewhere(a.stage - 1));
        };
        // Counted first: a middle rank's list triples, and growing into it
        // would hold up to 4 times the compute actions (issue 18: memory of
        // millions of actions).
        std::size_t size = in.size();
        for (const Action& a : in) {
            size += (recv_before(a) ? 1 : 0) + (send_after(a) ? 1 : 0);
        }
        auto& lowered = out.ranks[r];
        lowered.reserve(size);
        const auto recv_of = [](const Action& a) {
            return Action{a.stage,
                          a.type == ActionType::forward ? ActionType::recv_forward
                                                        : ActionType::recv_backward,
                          a.microbatch};
        };
        const auto send_of = [](const Action& a) {
            return Action{a.stage,
                          a.type == ActionType::forward ? ActionType::send_forward
                                                        : ActionType::send_backward,
                          a.microbatch};
        };
        for (std::size_t i = 0; i < in.size(); ++i) {
            const Action& a = in[i];
            if (a.overlaps_next && i + 1 < in.size()) {
                // An overlapped pair runs as one: both inputs are received
                // before it and both results sent after it (torch's and
                // DeepSeek's runtimes do the same), so nothing stands
                // between its two halves.
                const Action& b = in[++i];
                for (const Action& x : {a, b}) {
                    if (recv_before(x)) {
                        lowered.push_back(recv_of(x));
                    }
                }
                lowered.push_back(a);
                lowered.push_back(b);
                for (const Action& x : {a, b}) {
                    if (send_after(x)) {
                        lowered.push_back(send_of(x));
                    }
                }
                continue;
            }
            if (recv_before(a)) {
                lowered.push_back(recv_of(a));
            }
            lowered.push_back(a);
            if (send_after(a)) {
                lowered.push_back(send_of(a));
            }
        }
    }
    return out;
}

}  // namespace pipewright
