// After the search: a plan that recomputes every block, narrowed to the
// fewest blocks at the start of each stage with which it still fits
// (training.recompute_blocks), or to no recomputation at all. The search's
// split prices recomputation per stage, every unit of it; the layout it
// chose is kept and only the recomputation moves, each step simulated whole.
#include <algorithm>
#include <string>

#include "internal.h"
#include "pipewright/core/quantity_format.h"
#include "pipewright/core/recomputation_units.h"

namespace pipewright::planner {

namespace {

// The most blocks any stage of `analyzed` holds.
int most_blocks_in_a_stage(const AnalyzedProject& analyzed) {
    const auto& layers = analyzed.project.model.layers;
    int most = 0;
    for (const auto& stage : analyzed.stages) {
        int blocks = 0;
        for (int l = stage.first_layer; l <= stage.last_layer; ++l) {
            blocks += checkpointed_alone(layers[static_cast<std::size_t>(l)].type) ? 1 : 0;
        }
        most = std::max(most, blocks);
    }
    return most;
}

// `plan` recomputing the first `blocks` blocks of each stage (0: nothing).
Project with_recomputed_blocks(const Project& plan, int blocks) {
    Project out = plan;
    if (blocks == 0) {
        out.training.recompute = Recompute::none;
        out.training.recompute_blocks.reset();
    } else {
        out.training.recompute_blocks = blocks;
    }
    return out;
}

}  // namespace

void narrow_recomputation(PlanResult& result, const PlanOptions& options) {
    if (!result.feasible || !result.plan.report || !result.project.training.full_recompute() ||
        result.project.training.recompute_blocks) {
        return;
    }
    AnalysisOptions analysis = analysis_options(options);
    analysis.replica_alone = false;  // the whole layout, every replica with it
    Diagnostics ignored;
    const auto analyzed = analyze_project(result.project, analysis, ignored);
    if (!analyzed) {
        return;
    }
    const int most = most_blocks_in_a_stage(*analyzed);
    if (most == 0) {
        return;  // no blocks: each stage recomputes as one unit
    }
    // Fewer blocks recomputed: less time and more memory, so the fewest
    // that fit are found by bisection, from none to all but one of the
    // fullest stage's.
    std::optional<PlanOutcome> fastest;
    int chosen = -1;
    int low = 0;  // fewest blocks not known not to fit
    int high = most - 1;
    while (low <= high) {
        if (options.stop.stop_requested()) {
            break;  // the fewest found so far stand
        }
        const int blocks = low + (high - low) / 2;
        PlanOutcome outcome;
        simulate_outcome(outcome, with_recomputed_blocks(result.project, blocks), analysis,
                         options.costs);
        ++result.statistics.simulations;
        if (outcome.report && outcome.report->all_fit) {
            fastest = std::move(outcome);
            chosen = blocks;
            high = blocks - 1;
        } else {
            low = blocks + 1;
        }
    }
    const double before = result.plan.report->iteration_time_s;
    if (!fastest || fastest->report->iteration_time_s >= before) {
        result.recomputation_choice =
            "every unit of each stage: recomputing fewer blocks does not fit";
        return;
    }
    result.project = with_recomputed_blocks(result.project, chosen);
    result.plan.report = std::move(fastest->report);
    result.recomputation_choice =
        (chosen == 0 ? std::string("nothing, which fits")
                     : "the first " + std::to_string(chosen) + " block" + (chosen == 1 ? "" : "s") +
                           " of each stage, the fewest that fit") +
        ": " + format_duration(result.plan.report->iteration_time_s) + " per iteration, against " +
        format_duration(before) + " recomputing every unit";
}

}  // namespace pipewright::planner
