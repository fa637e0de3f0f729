#include "run_handoff.h"

#include <filesystem>

#include "pipewright/core/project_io.h"
#include "pipewright/core/schedule_generators.h"
#include "pipewright/sim/auto_schedule.h"

namespace pipewright::cli {

AnalysisOptions run_analysis_options(const RunArgs& a) {
    AnalysisOptions options;
    options.schedule = a.schedule;
    options.schedule_csv = a.schedule_csv;
    options.microbatches = a.microbatches;
    options.batch_size = a.batch_size;
    options.data_parallel = a.data_parallel;
    options.tensor_parallel = a.tensor_parallel;
    options.expert_parallel = a.expert_parallel;
    options.base_dir = std::filesystem::path(a.project).parent_path();
    return options;
}

std::vector<std::string> schedule_cost_arguments(const RunArgs& a) {
    const auto is_auto = [](const std::string& name) {
        return schedule_kind(name) == ScheduleKind::zb_auto;
    };
    if (a.schedule_csv || a.schedule_costs || (a.schedule && !is_auto(*a.schedule))) {
        return {};
    }
    const LoadedProject loaded = load_project_file(a.project);
    // Analysed only for zb-auto: every other run starts without this work.
    if (!loaded.project || (!a.schedule && !is_auto(loaded.project->training.schedule.name))) {
        return {};
    }
    Diagnostics problems;
    const auto analyzed = analyze_project(*loaded.project, run_analysis_options(a), problems);
    if (!analyzed || !problems.empty() || !builds_for_costs(*analyzed)) {
        return {};
    }
    return {"--schedule-costs", auto_costs_text(auto_costs_for(*analyzed, CostModelOptions{}))};
}

}  // namespace pipewright::cli
