#include "plan_json.h"

#include "data_parallel_format.h"
#include "report_format.h"

namespace pipewright::cli {

std::optional<double> gain_over(const PlanOutcome& plan, const PlanOutcome& other) {
    if (!plan.report || !other.report || plan.report->iteration_time_s <= 0) {
        return std::nullopt;
    }
    return (other.report->iteration_time_s / plan.report->iteration_time_s - 1.0) * 100.0;
}

namespace {

std::size_t at(int i) {
    return static_cast<std::size_t>(i);
}

nlohmann::json placement_json(const Project& project, const std::vector<PlannedStage>& stages) {
    nlohmann::json list = nlohmann::json::array();
    for (std::size_t k = 0; k < stages.size(); ++k) {
        const auto& s = stages[k];
        nlohmann::json names = nlohmann::json::array();
        for (int l = s.first_layer; l <= s.last_layer; ++l) {
            names.push_back(project.model.layers[at(l)].name);
        }
        list.push_back({{"stage", k},
                        {"device", s.device},
                        {"first_layer", s.first_layer},
                        {"last_layer", s.last_layer},
                        {"layers", names}});
    }
    return list;
}

// The figures of `simulate --json` plus the placement.
nlohmann::json outcome_json(const Project& project, const PlanOutcome& o) {
    nlohmann::json j = {{"applicable", o.report.has_value()},
                        {"placement", placement_json(project, o.stages)}};
    if (!o.report) {
        j["schedule"] = o.schedule;
        j["reason"] = o.reason;
        return j;
    }
    const nlohmann::json figures = report_to_json(*o.report);
    for (const char* key :
         {"schedule", "batch_size", "microbatches", "microbatch_size", "iteration_time_s",
          "throughput_samples_per_s", "bubble_fraction", "all_fit", "devices"}) {
        j[key] = figures[key];
    }
    return j;
}

}  // namespace

nlohmann::json plan_result_json(const PlanResult& result, const Project& project) {
    nlohmann::json j;
    j["feasible"] = result.feasible;
    j["interrupted"] = result.interrupted;
    if (result.feasible) {
        j.update(outcome_json(project, result.plan));
        j.erase("applicable");
        j["bottleneck_s"] = result.bottleneck_s;
    } else {
        j["reason"] = result.why_nothing_fits;
    }
    for (const auto& [key, outcome] :
         {std::pair<const char*, const PlanOutcome*>{"baseline", &result.input},
          std::pair<const char*, const PlanOutcome*>{"uniform", &result.uniform}}) {
        nlohmann::json o = outcome_json(project, *outcome);
        if (const auto g = gain_over(result.plan, *outcome)) {
            o["gain_percent"] = *g;
        }
        j[key] = std::move(o);
    }
    nlohmann::json schedules = nlohmann::json::array();
    for (const auto& s : result.schedules) {
        schedules.push_back({{"schedule", s.schedule},
                             {"simulated", s.simulated},
                             {"iteration_time_s", s.iteration_s ? nlohmann::json(*s.iteration_s)
                                                                : nlohmann::json(nullptr)}});
    }
    j["schedules"] = std::move(schedules);
    if (!result.recomputation_choice.empty()) {
        j["recomputation"] = result.recomputation_choice;
    }
    if (!result.data_parallel.empty()) {
        j["data_parallel"] = plan_replicas_json(result);
    }
    j["search"] = {{"split_searches", result.statistics.split_searches},
                   {"simulations", result.statistics.simulations},
                   {"layouts_not_planned", result.statistics.bounded},
                   {"elapsed_s", result.statistics.elapsed_s}};
    return j;
}

}  // namespace pipewright::cli
