#include "kernel_report.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "pipewright/core/printable_name.h"
#include "pipewright/sim/kernel_breakdown.h"
#include "report_format.h"

namespace pipewright::cli {
namespace {

nlohmann::json pass_json(const PassKernels& pass) {
    nlohmann::json kernels = nlohmann::json::array();
    for (const KernelShare& k : pass.kernels) {
        kernels.push_back({{"name", k.name},
                           {"kind", std::string(to_string(k.kind))},
                           {"launches", k.count},
                           {"seconds", k.seconds},
                           {"flops", k.flops},
                           {"bytes", k.bytes},
                           {"memory_bound_launches", k.memory_bound}});
    }
    return kernels;
}

// "312.4 TFLOP/s" of a kernel group's executed FLOPs over its time.
// What the input gradient runs again before its kernels, in words.
std::string recompute_words(const Training& t) {
    if (t.recompute == Recompute::selective) {
        return " recomputing the attention core (selective recomputation)";
    }
    if (t.recompute_blocks) {
        return " recomputing the forward of the stage's first " +
               std::to_string(*t.recompute_blocks) + " blocks (activation checkpointing)";
    }
    return " recomputing the forward (activation checkpointing)";
}

std::string rate(const KernelShare& k) {
    if (k.flops <= 0 || k.seconds <= 0) {
        return "-";
    }
    const double per_s = k.flops / k.seconds;
    const auto [scale, unit] = per_s >= 1e12  ? std::pair{1e12, "TFLOP/s"}
                               : per_s >= 1e9 ? std::pair{1e9, "GFLOP/s"}
                                              : std::pair{1e6, "MFLOP/s"};
    std::array<char, 32> text{};
    std::snprintf(text.data(), text.size(), "%.1f %s", per_s / scale, unit);
    return text.data();
}

}  // namespace

nlohmann::json stages_json(const AnalyzedProject& project, const SimulationReport& report,
                           const std::vector<StageKernels>& kernels) {
    nlohmann::json out = nlohmann::json::array();
    for (std::size_t s = 0; s < project.stages.size(); ++s) {
        const PipelineStage& stage = project.stages[s];
        nlohmann::json j = {
            {"stage", stage.index},
            {"rank", stage.rank},
            {"first_layer", stage.first_layer},
            {"last_layer", stage.last_layer},
        };
        if (static_cast<std::size_t>(stage.rank) < report.devices.size()) {
            j["device"] = report.devices[static_cast<std::size_t>(stage.rank)].name;
        }
        if (s < report.stages.size()) {
            const StageCost& c = report.stages[s];
            j["forward_s"] = c.forward_s;
            j["backward_input_s"] = c.backward_input_s;
            j["backward_weight_s"] = c.backward_weight_s;
            j["tensor_forward_s"] = c.tensor_forward_s;
            j["tensor_backward_s"] = c.tensor_backward_s;
            j["expert_forward_s"] = c.expert_forward_s;
            j["expert_backward_s"] = c.expert_backward_s;
            j["context_forward_s"] = c.context_forward_s;
            j["context_backward_s"] = c.context_backward_s;
            // Full recomputation's forward again, within backward_input_s.
            j["recompute_s"] = c.recompute_s;
            // What one micro-batch holds: from its forward until its
            // backward, of which from I until W, and on top while a forward,
            // a whole backward or an I runs (the unit or stage that
            // recomputation rebuilds, context parallelism's keys and values).
            j["stash_bytes"] = c.stash_bytes;
            j["weight_stash_bytes"] = c.weight_stash_bytes;
            j["transient_forward_bytes"] = c.transient_forward_bytes;
            j["transient_backward_bytes"] = c.transient_backward_bytes;
            j["transient_backward_input_bytes"] = c.transient_backward_input_bytes;
        }
        const StageKernels& k = kernels[s];
        j["kernels"] = {{"forward", pass_json(k.forward)},
                        {"backward_input", pass_json(k.backward_input)},
                        {"backward_weight", pass_json(k.backward_weight)}};
        j["layers_without_kernels"] = k.not_kernels;
        out.push_back(std::move(j));
    }
    return out;
}

void print_kernels(std::ostream& out, const AnalyzedProject& project,
                   const SimulationReport& report, const CostModelOptions& costs) {
    if (project.stages.empty() || report.stages.size() != project.stages.size()) {
        return;
    }
    // The busiest stage sets the pace of the pipeline.
    std::size_t busiest = 0;
    auto busy = [&report](std::size_t s) {
        const StageCost& c = report.stages[s];
        return c.forward_s + c.backward_input_s + c.backward_weight_s;
    };
    for (std::size_t s = 1; s < report.stages.size(); ++s) {
        if (busy(s) > busy(busiest)) {
            busiest = s;
        }
    }
    const PipelineStage& stage = project.stages[busiest];
    const StageKernels k = stage_kernels(project, costs)[busiest];
    const StageCost& c = report.stages[busiest];
    out << "\nWhere the time goes: stage " << stage.index << " ("
        << layer_range(project.project.model, stage.first_layer, stage.last_layer)
        << ", the busiest), one micro-batch\n";
    if (!k.not_kernels.empty()) {
        out << "  not as kernels ("
            << (costs.flat_efficiency ? "the flat model" : "measured or given")
            << "): " << k.not_kernels.size() << " layer" << (k.not_kernels.size() == 1 ? "" : "s")
            << "\n";
    }
    // With recomputation the input gradient first runs the forward again
    // (full) or the attention core (selective) (cost_model.cpp): its time,
    // not kernels of its own.
    const Recompute recompute = project.project.training.recompute;
    const double recompute_s =
        recompute == Recompute::full ? c.recompute_s
        : recompute == Recompute::selective
            ? std::max(0.0, c.backward_input_s - k.backward_input.seconds - c.tensor_backward_s -
                                c.expert_backward_s - c.context_backward_s)
            : 0;
    const struct {
        const char* name;
        const PassKernels* pass;
        double total_s;
        double collectives_s;
        double all_to_all_s;
        double context_s;
        double recompute_s;
    } passes[] = {{"forward", &k.forward, c.forward_s, c.tensor_forward_s, c.expert_forward_s,
                   c.context_forward_s, 0},
                  {"input gradient", &k.backward_input, c.backward_input_s, c.tensor_backward_s,
                   c.expert_backward_s, c.context_backward_s, recompute_s},
                  {"weight gradient", &k.backward_weight, c.backward_weight_s, 0, 0, 0, 0}};
    for (const auto& p : passes) {
        if (p.pass->kernels.empty()) {
            continue;
        }
        out << "\n  " << p.name << ": " << format_duration(p.total_s);
        std::vector<std::string> parts;
        if (p.collectives_s > 0) {
            parts.push_back(format_duration(p.collectives_s) +
                            " in the tensor-parallel all-reduces");
        }
        if (p.all_to_all_s > 0) {
            parts.push_back(format_duration(p.all_to_all_s) +
                            " in the experts' all-to-alls (expert parallelism)");
        }
        if (p.context_s > 0) {
            parts.push_back(format_duration(p.context_s) +
                            " waiting for keys and values (context parallelism)");
        }
        if (p.recompute_s > 0) {
            parts.push_back(format_duration(p.recompute_s) +
                            recompute_words(project.project.training));
        }
        for (std::size_t i = 0; i < parts.size(); ++i) {
            out << (i == 0 ? ", of which " : " and ") << parts[i];
        }
        out << '\n';
        TextTable table({"kernel", "launches", "time", "share", "rate", "bound by"});
        for (const KernelShare& s : p.pass->kernels) {
            const std::string bound = s.memory_bound == s.count ? "memory"
                                      : s.memory_bound == 0     ? "compute"
                                                                : "both";
            table.add_row({printable_name(s.name), std::to_string(s.count),
                           format_duration(s.seconds), format_percent(s.seconds / p.pass->seconds),
                           rate(s), bound});
        }
        for (std::size_t col : {1U, 2U, 3U, 4U}) {
            table.right_align(col);
        }
        table.print(out, "  ");
    }
}

nlohmann::json kernel_pace_json(const KernelPace& pace) {
    return {{"stage", pace.stage},
            {"device", pace.device},
            {"launches", pace.launches},
            {"seconds_per_kernel", pace.seconds_per_kernel},
            {"likely_host_bound", pace.likely_host_bound()}};
}

}  // namespace pipewright::cli
