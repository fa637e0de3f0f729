// After the search: a plan that recomputes every block, narrowed to the
// fewest blocks at the start of each stage with which it still fits
// (training.recompute_blocks), or to no recomputation at all. The search's
// split prices recomputation per stage, every unit of it, so a layout it set
// aside for memory may be the faster once narrowed: the project's own layout
// is narrowed too, and the faster of the two taken. Only the recomputation
// moves; each step is simulated whole.
#include <algorithm>
#include <optional>
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

// `layout` recomputing the first `blocks` blocks of each stage (0: nothing).
Project with_recomputed_blocks(const Project& layout, int blocks) {
    Project out = layout;
    if (blocks == 0) {
        out.training.recompute = Recompute::none;
        out.training.recompute_blocks.reset();
    } else {
        out.training.recompute_blocks = blocks;
    }
    return out;
}

struct Narrowed {
    int blocks = 0;
    Project project;
    PlanOutcome outcome;
};

// The fewest blocks `layout` (which recomputes every unit) can recompute and
// still fit, from none to all but one of its fullest stage's: fewer blocks
// take less time and more memory, so bisection finds them. Nullopt when no
// fewer fit, or the layout has no blocks.
std::optional<Narrowed> fewest_blocks(const Project& layout, const AnalysisOptions& analysis,
                                      const PlanOptions& options, PlanStatistics& statistics) {
    Diagnostics ignored;
    const auto analyzed = analyze_project(layout, analysis, ignored);
    if (!analyzed) {
        return std::nullopt;
    }
    std::optional<Narrowed> fewest;
    int low = 0;  // fewest blocks not known not to fit
    int high = most_blocks_in_a_stage(*analyzed) - 1;
    while (low <= high && !options.stop.stop_requested()) {
        const int blocks = low + (high - low) / 2;
        Narrowed candidate{blocks, with_recomputed_blocks(analyzed->project, blocks), {}};
        simulate_outcome(candidate.outcome, candidate.project, analysis, options.costs);
        ++statistics.simulations;
        if (candidate.outcome.report && candidate.outcome.report->all_fit) {
            fewest = std::move(candidate);
            high = blocks - 1;
        } else {
            low = blocks + 1;
        }
    }
    return fewest;
}

std::string recomputed_words(int blocks) {
    return blocks == 0 ? std::string("nothing, which fits")
                       : "the first " + std::to_string(blocks) + " block" +
                             (blocks == 1 ? "" : "s") + " of each stage, the fewest that fit";
}

bool recomputes_every_unit(const Training& t) {
    return t.full_recompute() && !t.recompute_blocks;
}

}  // namespace

void narrow_recomputation(PlanResult& result, const Project& given, const PlanOptions& options) {
    if (!result.feasible || !result.plan.report ||
        !recomputes_every_unit(result.project.training)) {
        return;
    }
    AnalysisOptions analysis = analysis_options(options);
    analysis.replica_alone = false;  // the whole layout, every replica with it
    const double before = result.plan.report->iteration_time_s;
    std::optional<Narrowed> best =
        fewest_blocks(result.project, analysis, options, result.statistics);
    bool as_given = false;
    // The project's own layout, where the plan's options left it as it is.
    const bool layout_kept = !options.data_parallel && !options.tensor_parallel &&
                             !options.sequence_parallel && !options.expert_parallel &&
                             !options.context_parallel;
    if (layout_kept && recomputes_every_unit(given.training) && result.project != given) {
        AnalysisOptions own = analysis;
        own.schedule = options.schedule;
        own.microbatches = options.microbatches;
        auto narrowed = fewest_blocks(given, own, options, result.statistics);
        if (narrowed && (!best || narrowed->outcome.report->iteration_time_s <
                                      best->outcome.report->iteration_time_s)) {
            best = std::move(narrowed);
            as_given = true;
        }
    }
    if (!best || best->outcome.report->iteration_time_s >= before) {
        result.recomputation_choice =
            "every unit of each stage: recomputing fewer blocks does not fit";
        return;
    }
    const double after = best->outcome.report->iteration_time_s;
    result.recomputation_choice = (as_given ? "the project's own layout, recomputing " : "") +
                                  recomputed_words(best->blocks) + ": " + format_duration(after) +
                                  " per iteration, against " + format_duration(before) +
                                  " for the search's plan recomputing every unit";
    result.project = std::move(best->project);
    result.plan.stages = std::move(best->outcome.stages);
    result.plan.schedule = std::move(best->outcome.schedule);
    result.plan.microbatches = best->outcome.microbatches;
    result.plan.report = std::move(best->outcome.report);
}

}  // namespace pipewright::planner
