#include "pipewright/sim/layout_comparison.h"

#include <algorithm>
#include <string>
#include <vector>

#include "pipewright/core/quantity_format.h"

namespace pipewright {

namespace {

std::string zero_label(int zero) {
    return zero == 0 ? "" : " · ZeRO-" + std::to_string(zero);
}

// Replicas × the devices (or tensor-parallel groups) of each pipeline, so
// that the figures multiply to the devices used: "4 × 26 stages",
// "2 × 13 groups of 4", and where stages loop over fewer devices,
// "32 × 4 groups of 8 · 16 stages" (1,024 devices, not 4,096).
std::string replicas_label(int replicas, int stages, int devices, int tensor) {
    if (devices <= 0) {
        devices = stages;
    }
    std::string out = std::to_string(replicas) + " × " + std::to_string(devices);
    if (tensor > 1) {
        out += (devices == 1 ? " group of " : " groups of ") + std::to_string(tensor);
    } else if (devices == stages) {
        out += stages == 1 ? " stage" : " stages";
    } else {
        out += devices == 1 ? " device" : " devices";
    }
    if (devices != stages) {
        out += " · " + std::to_string(stages) + (stages == 1 ? " stage" : " stages");
    }
    return out;
}

// Distinct devices of a placement.
int placement_devices(const Project& project) {
    std::vector<std::string> seen;
    for (const auto& stage : project.placement) {
        if (std::find(seen.begin(), seen.end(), stage.device) == seen.end()) {
            seen.push_back(stage.device);
        }
    }
    return static_cast<int>(seen.size());
}

// "8 stages on 4 devices", "2 stages", "26 stages on 13 groups".
std::string pipeline_words(int stages, std::size_t devices, int tensor) {
    std::string out = std::to_string(stages) + (stages == 1 ? " stage" : " stages");
    if (devices > 0 && devices != static_cast<std::size_t>(stages)) {
        const std::string unit = tensor > 1 ? "group" : "device";
        out += " on " + std::to_string(devices) + " " + unit + (devices == 1 ? "" : "s");
    }
    return out;
}

}  // namespace

LayoutComparison compare_replica_layouts(const Project& project, const PlanOptions& options) {
    PlanOptions search = options;
    search.data_parallel = 0;
    search.bound_layouts = false;  // every count's own best, however slow
    const PlanResult result = plan_pipeline(project, search);

    LayoutComparison out;
    out.choice = result.data_parallel_choice;
    ComparisonRow baseline;
    baseline.baseline = true;
    const int stages = static_cast<int>(project.placement.size());
    baseline.label =
        "as set: " +
        replicas_label(project.data_parallel.size, stages, placement_devices(project),
                       project.tensor_parallel.size) +
        zero_label(project.data_parallel.size > 1 ? project.data_parallel.zero_stage : 0);
    baseline.detail = "the project as it is, " + project.training.schedule.name;
    baseline.report = result.input.report;
    baseline.reason = result.input.reason;
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
        const std::size_t devices =
            o.report->replica_devices.empty() ? 0 : o.report->replica_devices.front().size();
        row.label =
            replicas_label(o.replicas, o.stages, static_cast<int>(devices), o.tensor_parallel) +
            zero_label(o.zero_stage);
        row.detail =
            std::to_string(o.replicas) + (o.replicas == 1 ? " replica" : " replicas") +
            (o.context_parallel > 1 ? " (" + std::to_string(o.context_parallel) + " to a sequence)"
                                    : std::string()) +
            (o.expert_parallel > 1 ? " (experts over " + std::to_string(o.expert_parallel) + ")"
                                   : std::string()) +
            " of " + pipeline_words(o.stages, devices, o.tensor_parallel) + ", " + o.schedule +
            " with " + std::to_string(o.microbatches) +
            (o.microbatches == 1 ? " micro-batch" : " micro-batches") +
            (o.replicas == 1 ? "" : " each") +
            (o.activation_checkpointing ? ", activation checkpointing" : "") +
            (o.replicas > 1 ? ", " + o.layout : "") +
            (o.tensor_parallel > 1 ? ", each stage on a tensor-parallel group of " +
                                         std::to_string(o.tensor_parallel) + " devices"
                                   : "");
        row.report = o.report;
        out.rows.push_back(std::move(row));
        out.layouts.push_back(o.project);
    }
    // The gains are over the layout as set, or over one pipeline when the
    // layout as set does not run (a gain over nothing would read 0 %).
    std::size_t base = 0;
    out.baseline = "the layout as set";
    if (!out.rows[0].report) {
        out.rows[0].baseline = false;
        for (std::size_t i = 1; i < out.rows.size(); ++i) {
            if (out.rows[i].report && result.data_parallel[i - 1].replicas == 1) {
                base = i;
                out.rows[i].baseline = true;
                out.baseline = "one pipeline";
            }
        }
    }
    const double base_s = out.rows[base].report ? out.rows[base].report->iteration_time_s : 0;
    for (ComparisonRow& row : out.rows) {
        if (row.report && !row.baseline && base_s > 0 && row.report->iteration_time_s > 0) {
            row.gain_percent = (base_s / row.report->iteration_time_s - 1) * 100;
        }
    }
    return out;
}

}  // namespace pipewright
