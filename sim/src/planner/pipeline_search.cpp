// One pipeline's plan, in named steps: the request's search space, the
// split DP's candidates, each simulated under every schedule that applies
// (flat, then looped and V placements), the judgement against the project as
// given, and the uniform split beside it for comparison.
#include <algorithm>
#include <chrono>
#include <limits>
#include <map>

#include "planner/internal.h"

namespace pipewright::planner {

namespace {

class PipelineSearch {
  public:
    PipelineSearch(const Project& project, const PlanOptions& options,
                   const DataParallel& replica_of)
        : started_(std::chrono::steady_clock::now()),
          project_(project),
          options_(options),
          context_(checked(project, options), options, replica_of) {}

    PlanResult run() {
        define_search();
        if (looped_only_) {
            check_looped_possible(context_, spec_.microbatches, looped_);
        }
        context_.throw_if_stopped();
        candidates_ = search_candidates(context_, spec_, result_.statistics);
        result_.statistics.search_s = seconds_since_start();
        simulate_input();
        if (!looped_only_) {
            simulate_flat();
        }
        if (!options_.schedule || looped_only_) {
            simulate_looped();
        }
        tally_schedules();
        judge();
        compare_uniform();
        result_.statistics.elapsed_s = seconds_since_start();
        return std::move(result_);
    }

  private:
    // The project, once the options are known to be usable with it.
    static const Project& checked(const Project& project, const PlanOptions& options) {
        check_plan_options(project, options);
        return project;
    }

    [[nodiscard]] double seconds_since_start() const {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    }

    // Looped schedules (interleaved 1F1B and its kin) are planned as looped
    // variants of the best 1F1B sequences, so a fixed looped schedule
    // searches those first.
    void define_search() {
        const std::optional<ScheduleKind> fixed =
            options_.schedule ? schedule_kind(*options_.schedule) : std::nullopt;
        looped_only_ = fixed && is_looped(*fixed);
        looped_ = looped_only_ ? *fixed : ScheduleKind::interleaved_1f1b;
        spec_.schedule = looped_only_ ? ScheduleKind::one_f_one_b : fixed;
        spec_.keep = static_cast<std::size_t>(std::max(1, options_.simulated_splits));
        if (options_.microbatches) {
            spec_.microbatches = {*options_.microbatches};
        } else if (fixed == ScheduleKind::naive) {
            spec_.microbatches = {1};
        } else {
            spec_.microbatches = divisors(context_.batch());
        }
    }

    // The project as given (with the fixed schedule and micro-batches): what
    // the plan must beat.
    void simulate_input() {
        input_analysis_ = analysis_options(options_);
        input_analysis_.schedule = options_.schedule;
        input_analysis_.microbatches = options_.microbatches;
        simulate_outcome(result_.input, project_, input_analysis_, options_.costs);
        ++result_.statistics.simulations;
    }

    // The simulator is the judge: the DP's bottleneck only ranks the splits.
    void consider(SimulationReport report, std::vector<PlannedStage> stages, ScheduleKind schedule,
                  int microbatches, double bottleneck) {
        ScheduleConsidered& tally = considered_[schedule];
        tally.schedule = std::string(to_string(schedule));
        ++tally.simulated;
        if (report.all_fit &&
            (!tally.iteration_s || report.iteration_time_s < *tally.iteration_s)) {
            tally.iteration_s = report.iteration_time_s;
        }
        if (!report.all_fit || (best_ && report.iteration_time_s >= best_->iteration_time_s)) {
            return;
        }
        chosen_.stages = std::move(stages);
        chosen_.schedule = std::string(to_string(schedule));
        chosen_.microbatches = microbatches;
        chosen_bottleneck_ = bottleneck;
        best_ = std::move(report);
    }

    // Between simulations, outside unless_ruled_out, which drops failed candidates.
    void between_simulations() {
        if (options_.on_progress) {
            options_.on_progress(result_.statistics);
        }
        context_.throw_if_stopped();
    }

    // Each flat candidate under every schedule its memory rule allows.
    void simulate_flat() {
        for (const Candidate& c : candidates_) {
            for (const ScheduleKind schedule :
                 schedules_for(c.rule, spec_.schedule, c.microbatches)) {
                between_simulations();
                // A schedule that cannot run a split is simply not a candidate.
                std::string not_a_candidate;
                const auto simulate = [&](const std::vector<int>& first) {
                    return unless_ruled_out(
                        [&] {
                            return context_.simulate(c.devices, first, c.microbatches, schedule);
                        },
                        not_a_candidate);
                };
                auto report = simulate(c.first);
                if (!report) {
                    continue;
                }
                ++result_.statistics.simulations;
                const MemoryRule own_rule = rule_of(schedule);
                if (!report->all_fit && own_rule != c.rule &&
                    (own_rule == MemoryRule::zb_h1 || own_rule == MemoryRule::zb_h2)) {
                    // Zero bubble keeps weight-gradient inputs longer than
                    // 1F1B (ZB-H2 twice the forwards too): split again under
                    // its own memory rule.
                    const auto problem =
                        context_.problem(context_.table(c.microbatches), c.order,
                                         static_cast<int>(c.devices.size()), own_rule);
                    const auto split = min_bottleneck_split(problem);
                    ++result_.statistics.split_searches;
                    if (split.feasible && split.first != c.first) {
                        report = simulate(split.first);
                        if (report) {
                            ++result_.statistics.simulations;
                            consider(std::move(*report),
                                     stages_of(context_, c.devices, split.first), schedule,
                                     c.microbatches, split.value);
                        }
                        continue;
                    }
                }
                consider(std::move(*report), stages_of(context_, c.devices, c.first), schedule,
                         c.microbatches, c.bottleneck_s);
            }
        }
    }

    // Looping pays only where it shortens the bubble more than its extra
    // transfers cost: unless interleaving is asked for, simulate only the
    // looped splits estimated faster than the best flat one (each
    // simulation is v times larger than a flat one).
    void simulate_looped() {
        const double flat_best = candidates_.empty() || looped_only_
                                     ? std::numeric_limits<double>::infinity()
                                     : candidates_.front().estimate_s;
        // Asked for one looped schedule, that one. Otherwise interleaved 1F1B
        // and its zero-bubble form on the loops, and ZB-V on the V (looped
        // BFS takes as long as interleaved 1F1B at GPipe's memory, so it is
        // only planned when asked for).
        std::vector<std::pair<ScheduleKind, std::vector<ScheduleKind>>> searches;
        if (looped_only_) {
            searches.push_back({looped_, {looped_}});
        } else {
            searches.push_back({ScheduleKind::interleaved_1f1b,
                                {ScheduleKind::interleaved_1f1b, ScheduleKind::interleaved_zb}});
            searches.push_back({ScheduleKind::zbv, {ScheduleKind::zbv, ScheduleKind::dualpipev}});
        }
        for (const auto& [shape, kinds] : searches) {
            bool simulated_one = false;
            for (const auto& c : search_looped(context_, candidates_, spec_.microbatches,
                                               spec_.keep, shape, result_.statistics)) {
                // Best first: past the flat plan's estimate the rest are
                // slower still. The best of each shape is simulated all the
                // same: the estimate ranks splits, the simulator judges, and
                // it has found looped plans faster than estimated.
                if (c.estimate_s >= flat_best && simulated_one) {
                    break;
                }
                simulated_one = true;
                for (const ScheduleKind kind : kinds) {
                    between_simulations();
                    // Not runnable as looped: not a candidate.
                    std::string not_a_candidate;
                    auto report = unless_ruled_out(
                        [&] { return context_.simulate(c.devices, c.first, c.microbatches, kind); },
                        not_a_candidate);
                    if (report) {
                        ++result_.statistics.simulations;
                        consider(std::move(*report), stages_of(context_, c.devices, c.first), kind,
                                 c.microbatches, c.bottleneck_s);
                    }
                }
            }
        }
    }

    // Every schedule simulated, fastest first (those with nothing that fits last).
    void tally_schedules() {
        for (auto& [kind, tally] : considered_) {
            result_.schedules.push_back(std::move(tally));
        }
        std::stable_sort(result_.schedules.begin(), result_.schedules.end(),
                         [](const ScheduleConsidered& a, const ScheduleConsidered& b) {
                             if (a.iteration_s && b.iteration_s) {
                                 return *a.iteration_s < *b.iteration_s;
                             }
                             return a.iteration_s.has_value() && !b.iteration_s;
                         });
    }

    // The plan: the input when nothing beats it, else the fastest that fits,
    // else why nothing fits.
    void judge() {
        const bool input_wins =
            result_.input.report && result_.input.report->all_fit &&
            (!best_ || result_.input.report->iteration_time_s <= best_->iteration_time_s);
        if (input_wins) {
            result_.feasible = true;
            result_.plan = result_.input;
            Diagnostics ignored;
            auto analyzed = analyze_project(project_, input_analysis_, ignored);
            result_.project = analyzed ? analyzed->project : project_;
        } else if (best_) {
            result_.feasible = true;
            result_.bottleneck_s = chosen_bottleneck_;
            result_.project =
                with_placement(project_, chosen_.stages, chosen_.schedule, chosen_.microbatches);
            // The report users see comes from the project exactly as --apply writes it.
            simulate_outcome(chosen_, result_.project, analysis_options(options_), options_.costs);
            ++result_.statistics.simulations;
            if (!chosen_.report) {
                chosen_.report = std::move(best_);
            }
            result_.plan = std::move(chosen_);
        } else {
            result_.why_nothing_fits = explain_infeasible(context_, spec_);
            if (!candidates_.empty()) {
                result_.why_nothing_fits +=
                    "(The planner's memory estimate found splits that fit, but none fits in "
                    "simulation.)\n";
            }
        }
    }

    // A uniform split with the input's schedule, or the plan's when that
    // cannot run one stage per device.
    void compare_uniform() {
        const auto uniform = uniform_split(project_);
        std::vector<std::pair<std::string, int>> settings;
        if (result_.input.report) {
            settings.emplace_back(result_.input.schedule, result_.input.microbatches);
        } else {
            settings.emplace_back(
                options_.schedule.value_or(project_.training.schedule.name),
                options_.microbatches.value_or(project_.training.resolved_microbatches()));
        }
        if (result_.feasible) {
            settings.emplace_back(result_.plan.schedule, result_.plan.microbatches);
        }
        for (const auto& [schedule, microbatches] : settings) {
            between_simulations();
            if (find_schedule(schedule) == nullptr || microbatches < 1) {
                continue;
            }
            PlanOutcome outcome;
            outcome.stages = uniform;
            outcome.schedule = schedule;
            outcome.microbatches = microbatches;
            simulate_outcome(outcome, with_placement(project_, uniform, schedule, microbatches),
                             analysis_options(options_), options_.costs);
            ++result_.statistics.simulations;
            result_.uniform = std::move(outcome);
            if (result_.uniform.report) {
                break;
            }
        }
        if (!result_.uniform.report && result_.uniform.reason.empty()) {
            result_.uniform.reason = "no schedule runs a uniform split";
        }
    }

    std::chrono::steady_clock::time_point started_;
    const Project& project_;
    const PlanOptions& options_;
    Context context_;
    PlanResult result_;
    SearchSpec spec_;
    bool looped_only_ = false;
    ScheduleKind looped_ = ScheduleKind::interleaved_1f1b;
    std::vector<Candidate> candidates_;
    AnalysisOptions input_analysis_;
    std::optional<SimulationReport> best_;
    PlanOutcome chosen_;
    double chosen_bottleneck_ = 0;
    std::map<ScheduleKind, ScheduleConsidered> considered_;
};

}  // namespace

PlanResult plan_one_pipeline(const Project& project, const PlanOptions& options,
                             const DataParallel& replica_of) {
    return PipelineSearch(project, options, replica_of).run();
}

}  // namespace pipewright::planner
