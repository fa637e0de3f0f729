#include <vector>

#include "pipewright/core/schedule_generators.h"

namespace pipewright {

namespace {

bool is_backward(ActionType t) {
    return t == ActionType::backward || t == ActionType::backward_input ||
           t == ActionType::backward_weight;
}

}  // namespace

// Mirrors torch's pipelining passes (_add_unshard_reshard, _add_reduce_grad):
// a stage's parameters are gathered before its first compute and freed after
// its last, and its gradients are reduced once its last weight gradient is
// done.
Schedule add_collectives(const Schedule& schedule, const CollectivePlan& plan) {
    if (schedule.has_collectives()) {
        return schedule;
    }
    Schedule out = schedule;
    const auto stages = static_cast<std::size_t>(schedule.num_stages);
    for (std::size_t r = 0; r < schedule.ranks.size(); ++r) {
        const auto& in = schedule.ranks[r];
        // The position of each stage's last compute (every backward ends a
        // stage's work on a micro-batch, and the last one ends the
        // iteration's gradient), and the stages in the order they first run.
        std::vector<std::size_t> last_compute(stages, in.size());
        std::vector<int> first_use;
        std::vector<bool> seen(stages, false);
        for (std::size_t i = 0; i < in.size(); ++i) {
            const Action& a = in[i];
            if (!is_compute(a.type) || a.stage < 0 || static_cast<std::size_t>(a.stage) >= stages) {
                continue;
            }
            const auto st = static_cast<std::size_t>(a.stage);
            if (is_backward(a.type)) {
                last_compute[st] = i;
            }
            if (!seen[st]) {
                seen[st] = true;
                first_use.push_back(a.stage);
            }
        }
        std::vector<Action> lowered;
        lowered.reserve(in.size() + 3 * first_use.size());
        if (plan.shard_parameters) {
            for (const int st : first_use) {
                lowered.push_back({st, ActionType::unshard, 0});
            }
        }
        std::vector<int> reduce_at_end;
        for (std::size_t i = 0; i < in.size(); ++i) {
            lowered.push_back(in[i]);
            const Action& a = in[i];
            if (!is_compute(a.type) || a.stage < 0 || static_cast<std::size_t>(a.stage) >= stages ||
                last_compute[static_cast<std::size_t>(a.stage)] != i) {
                continue;
            }
            if (plan.overlap_gradient_sync) {
                lowered.push_back({a.stage, ActionType::reduce_grad, 0});
            } else {
                reduce_at_end.push_back(a.stage);
            }
            if (plan.shard_parameters) {
                lowered.push_back({a.stage, ActionType::reshard, 0});
            }
        }
        for (const int st : reduce_at_end) {
            lowered.push_back({st, ActionType::reduce_grad, 0});
        }
        out.ranks[r] = std::move(lowered);
    }
    return out;
}

}  // namespace pipewright
