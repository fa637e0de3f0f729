#include "pipewright/sim/layout_comparison.h"

#include "pipewright/core/quantity_format.h"

namespace pipewright {

namespace {

std::string zero_label(int zero) {
    return zero == 0 ? "" : " · ZeRO-" + std::to_string(zero);
}

std::string replicas_label(int replicas, int stages) {
    return std::to_string(replicas) + " × " + std::to_string(stages) +
           (stages == 1 ? " stage" : " stages");
}

}  // namespace

LayoutComparison compare_replica_layouts(const Project& project, const PlanOptions& options) {
    PlanOptions search = options;
    search.data_parallel = 0;
    const PlanResult result = plan_pipeline(project, search);

    LayoutComparison out;
    out.choice = result.data_parallel_choice;
    ComparisonRow baseline;
    baseline.baseline = true;
    const int stages = static_cast<int>(project.placement.size());
    baseline.label =
        "as set: " + replicas_label(project.data_parallel.size, stages) +
        zero_label(project.data_parallel.size > 1 ? project.data_parallel.zero_stage : 0);
    baseline.detail = "the project as it is, " + project.training.schedule.name;
    baseline.report = result.input.report;
    baseline.reason = result.input.reason;
    const double base_s = baseline.report ? baseline.report->iteration_time_s : 0;
    out.rows.push_back(std::move(baseline));
    out.layouts.emplace_back();

    for (const DataParallelOption& o : result.data_parallel) {
        ComparisonRow row;
        if (!o.report) {
            row.label = std::to_string(o.replicas) + (o.replicas == 1 ? " replica" : " replicas");
            row.reason = o.reason;
            out.rows.push_back(std::move(row));
            out.layouts.emplace_back();
            continue;
        }
        row.label = replicas_label(o.replicas, o.stages) + zero_label(o.zero_stage);
        row.detail = std::to_string(o.replicas) + (o.replicas == 1 ? " replica" : " replicas") +
                     " of a " + std::to_string(o.stages) + "-stage pipeline, " + o.schedule +
                     " with " + std::to_string(o.microbatches) + " micro-batches each" +
                     (o.activation_checkpointing ? ", activation checkpointing" : "") +
                     (o.replicas > 1 ? ", " + o.layout : "");
        row.report = o.report;
        row.gain_percent = base_s > 0 && o.report->iteration_time_s > 0
                               ? (base_s / o.report->iteration_time_s - 1) * 100
                               : 0;
        out.rows.push_back(std::move(row));
        out.layouts.push_back(o.project);
    }
    return out;
}

}  // namespace pipewright
