#include "pipewright/sim/schedule_comparison.h"

#include <algorithm>

#include "pipewright/core/schedule_generators.h"
#include "pipewright/sim/event_simulator.h"

namespace pipewright {

Project single_device_project(const Project& project, const std::string& spec) {
    Project single = project;
    single.topology.nodes = {Node{"node0", {Container{"c0", {Device{"dev0", spec, {}}}}}}};
    single.topology.link_overrides.clear();
    StageAssignment all{"node0/c0/dev0", {}};
    for (const auto& layer : project.model.layers) {
        all.layers.push_back(layer.name);
    }
    single.placement = {all};
    single.training.schedule = ScheduleChoice{"naive", ""};
    single.data_parallel = DataParallel{};        // the whole batch, on the one device
    single.tensor_parallel = TensorParallel{};    // every layer whole on it
    single.expert_parallel = ExpertParallel{};    // every expert on it
    single.context_parallel = ContextParallel{};  // every sequence whole on it
    return single;
}

bool has_gains(const std::vector<ComparisonRow>& rows) {
    return std::any_of(rows.begin(), rows.end(), [](const ComparisonRow& row) {
        return row.baseline && row.report && row.report->iteration_time_s > 0;
    });
}

namespace {

std::string first_stage_spec(const Project& project) {
    if (project.placement.empty()) {
        return {};
    }
    if (auto loc = project.topology.find_device(project.placement.front().device)) {
        return project.topology.device_at(*loc).spec;
    }
    return {};
}

void simulate_row(ComparisonRow& row, const Project& project, const AnalysisOptions& analysis,
                  const CostModelOptions& costs) {
    Diagnostics diagnostics;
    auto analyzed = analyze_project(project, analysis, diagnostics);
    if (!analyzed) {
        row.reason =
            diagnostics.items().empty() ? "not applicable" : diagnostics.items().front().message;
        return;
    }
    // The errors that make a schedule not applicable here; anything else is
    // a defect and propagates.
    try {
        row.report = simulate_project(*analyzed, costs, Recording::summary);
    } catch (const ScheduleError& e) {
        row.reason = e.what();
    } catch (const SimulationError& e) {
        row.reason = e.what();
    } catch (const InputError& e) {
        row.reason = e.what();
    }
}

}  // namespace

std::vector<ComparisonRow> compare_schedules(const Project& project,
                                             const AnalysisOptions& analysis,
                                             const CostModelOptions& costs) {
    std::vector<ComparisonRow> rows;
    ComparisonRow baseline{"single device", true, std::nullopt, "", 0, ""};
    const std::string spec = first_stage_spec(project);
    AnalysisOptions base_options = analysis;
    base_options.schedule = "naive";
    base_options.schedule_csv.reset();
    base_options.microbatches.reset();
    base_options.data_parallel.reset();
    base_options.tensor_parallel.reset();
    base_options.sequence_parallel.reset();
    base_options.expert_parallel.reset();
    base_options.context_parallel.reset();
    base_options.context_exchange.reset();
    simulate_row(baseline, single_device_project(project, spec), base_options, costs);
    if (baseline.report) {
        baseline.label = "single device (" + spec + ")";
        if (!baseline.report->all_fit) {
            baseline.reason = "does not fit in one " + spec + "'s memory";
        }
    }
    rows.push_back(std::move(baseline));

    for (const auto& info : schedule_catalog()) {
        ComparisonRow row{info.name, false, std::nullopt, "", 0, ""};
        AnalysisOptions options = analysis;
        options.schedule = info.name;
        options.schedule_csv.reset();
        simulate_row(row, project, options, costs);
        rows.push_back(std::move(row));
    }
    // Gains are over the single device; when the model does not fit there
    // (GPT-3: 482 min and 2.55 TiB gave "+84215.1 %"), over the slowest
    // schedule that fits, so that the gains say what the faster ones buy.
    std::size_t reference = 0;
    if (!rows.front().report || !rows.front().report->all_fit) {
        for (std::size_t i = 1; i < rows.size(); ++i) {
            const auto& r = rows[i].report;
            if (r && r->all_fit && r->iteration_time_s > 0 &&
                (reference == 0 ||
                 r->iteration_time_s > rows[reference].report->iteration_time_s)) {
                reference = i;
            }
        }
        if (reference != 0) {
            rows.front().baseline = false;
            rows[reference].baseline = true;
        }
    }
    const auto& base = rows[reference].report;
    for (auto& row : rows) {
        if (base && row.report && row.report->iteration_time_s > 0) {
            row.gain_percent =
                (base->iteration_time_s / row.report->iteration_time_s - 1.0) * 100.0;
        }
    }
    return rows;
}

}  // namespace pipewright
