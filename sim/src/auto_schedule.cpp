#include "pipewright/sim/auto_schedule.h"

#include <algorithm>
#include <cstddef>

#include "pipewright/core/schedule_generators.h"
#include "pipewright/core/zero_bubble_auto.h"
#include "pipewright/sim/simulation.h"

namespace pipewright {

namespace {

AutoTransfer transfer_over(const SimulationInput& input, int from, int to, double bytes,
                           double share) {
    const int link = input.link_index.find(from, to);
    if (link < 0) {
        return {};
    }
    const SimLink& l = input.links[static_cast<std::size_t>(link)];
    return {l.spec.wire_seconds(l.carried_bytes(bytes, share)), l.spec.latency_us * 1e-6};
}

}  // namespace

bool builds_for_costs(const AnalyzedProject& project) {
    return !project.schedule_from_csv &&
           schedule_kind(project.schedule.name) == ScheduleKind::zb_auto;
}

AutoScheduleCosts auto_costs_for(const AnalyzedProject& project, const SimulationInput& input) {
    const std::vector<int> stage_rank = project.stage_ranks();
    AutoScheduleCosts costs;
    costs.stages.resize(input.stages.size());
    for (std::size_t s = 0; s < input.stages.size(); ++s) {
        const StageCost& c = input.stages[s];
        AutoStageCosts& a = costs.stages[s];
        a.forward_s = c.forward_s;
        a.input_s = c.backward_input_s;
        a.weight_s = c.backward_weight_s;
        if (c.backward_full_s > 0 && a.input_s + a.weight_s <= 0) {
            a.input_s = a.weight_s = c.backward_full_s / 2;  // a profile of whole backwards
        }
        a.stash_bytes = c.stash_bytes;
        a.weight_stash_bytes = c.weight_stash_bytes;
        const int rank = stage_rank[s];
        const auto r = static_cast<std::size_t>(rank);
        const double held =
            r < input.static_bytes.size() ? static_cast<double>(input.static_bytes[r]) : 0.0;
        const double capacity = static_cast<double>(project.rank_specs[r].memory_bytes);
        // A forward or backward holds its transient bytes on top of the
        // stashes (the recomputed stage, context parallelism's keys and
        // values). Activations that do not fit at all are shown as not
        // fitting, as for every schedule, rather than refused here.
        const double transient = std::max({c.transient_forward_bytes, c.transient_backward_bytes,
                                           c.transient_backward_input_bytes});
        a.memory_limit_bytes =
            std::max(capacity - held - transient, std::max(a.stash_bytes, a.weight_stash_bytes));
        if (s + 1 < input.stages.size()) {
            a.to_next =
                transfer_over(input, rank, stage_rank[s + 1], c.output_bytes, c.output_share);
        }
        if (s > 0) {
            a.to_previous =
                transfer_over(input, rank, stage_rank[s - 1], c.input_bytes, c.input_share);
        }
    }
    return costs;
}

AutoScheduleCosts auto_costs_for(const AnalyzedProject& project, const CostModelOptions& options) {
    SimulationInput input;
    input.stages = stage_costs(project, options);
    describe_links(project, options, input);
    input.static_bytes = static_bytes_per_rank(project, input.stages);
    return auto_costs_for(project, input);
}

Schedule schedule_for_costs(const AnalyzedProject& project, const CostModelOptions& options) {
    if (!builds_for_costs(project)) {
        return project.schedule;
    }
    return with_project_communication(project,
                                      generate_zb_auto(project.stage_ranks(), project.microbatches,
                                                       auto_costs_for(project, options)));
}

}  // namespace pipewright
