#include "data_parallel_format.h"

#include <algorithm>

#include "pipewright/core/quantity_format.h"
#include "report_format.h"

namespace pipewright::cli {

std::string number_ranges(const std::vector<int>& sorted) {
    std::string out;
    for (std::size_t i = 0; i < sorted.size();) {
        std::size_t j = i;
        while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) {
            ++j;
        }
        out += (out.empty() ? "" : ", ") + std::to_string(sorted[i]);
        if (j > i) {
            out += (j == i + 1 ? ", " : "–") + std::to_string(sorted[j]);
        }
        i = j + 1;
    }
    return out;
}

namespace {

// "full", "selective" or "no": what the option recomputes (the planner tries
// full recomputation against the project's own choice).
std::string recompute_word(const DataParallelOption& o) {
    if (o.activation_checkpointing) {
        return "full";
    }
    return o.project && o.project->training.recompute == Recompute::selective ? "selective" : "no";
}

std::string zero_words(int zero_stage) {
    switch (zero_stage) {
        case 0:
            return "gradients all-reduced (ZeRO off)";
        case 1:
            return "ZeRO-1: optimizer state sharded";
        case 2:
            return "ZeRO-2: optimizer state and gradients sharded";
        default:
            return "ZeRO-3: parameters, gradients and optimizer state sharded";
    }
}

void print_reductions(std::ostream& out, const SimulationReport& r) {
    TextTable table({"stage", "gradients", "reduction", "time", "buckets", "weight all-gather"});
    for (std::size_t c : {1u, 3u, 4u, 5u}) {
        table.right_align(c);
    }
    // Stages in a row that cost the same share one line ("0-63").
    std::vector<std::string> previous;
    std::size_t first = 0;
    const auto flush = [&](std::size_t last) {
        if (!previous.empty()) {
            previous[0] = std::to_string(first) + (last > first ? "–" + std::to_string(last) : "");
            table.add_row(previous);
        }
    };
    for (std::size_t s = 0; s < r.collectives.size(); ++s) {
        const StageCollectiveCost& c = r.collectives[s];
        std::vector<std::string> row{
            "",
            format_bytes(c.gradient_bytes),
            std::string(to_string(c.algorithm)) + " " + std::string(to_string(c.kind)) +
                (c.library == CollectiveLibrary::nccl &&
                         c.algorithm != CollectiveAlgorithm::measured
                     ? " (NCCL " + std::string(to_string(c.protocol)) + ")"
                     : ""),
            format_duration(c.reduce_s),
            std::to_string(c.buckets),
            r.zero_stage >= 1 ? format_duration(c.gather_s) +
                                    (r.zero_stage >= 3 ? " (before use)" : " (after the step)")
                              : "-"};
        if (previous.empty() || !std::equal(row.begin() + 1, row.end(), previous.begin() + 1)) {
            flush(s == 0 ? 0 : s - 1);
            previous = std::move(row);
            first = s;
        }
    }
    flush(r.collectives.empty() ? 0 : r.collectives.size() - 1);
    table.print(out);
    for (std::size_t s = 0; s < r.collectives.size(); ++s) {
        const StageCollectiveCost& c = r.collectives[s];
        if (c.expert_gradient_bytes > 0) {
            out << "Experts'    gradients (stage " << s << ": "
                << format_bytes(c.expert_gradient_bytes) << " of them) average over the "
                << c.expert_holders << " replica" << (c.expert_holders == 1 ? "" : "s")
                << " holding the same experts, the rest over all " << r.data_parallel << '\n';
            break;
        }
    }
}

}  // namespace

void print_data_parallel(std::ostream& out, const SimulationReport& r) {
    if (r.data_parallel <= 1) {
        return;
    }
    const std::size_t lanes = r.replicas.empty() ? 0 : r.devices.size() / r.replicas.size();
    out << "Replicas    " << r.data_parallel << " × this pipeline";
    if (r.context_parallel.size > 1) {
        out << ", " << r.context_parallel.size << " to a sequence (context parallelism)";
    }
    out << " · " << zero_words(r.zero_stage) << " · "
        << (r.overlap_gradient_sync ? "reduced while the last backward runs"
                                    : "reduced after the last action")
        << '\n';
    for (const ReplicaTiming& t : r.replicas) {
        out << "            replica " << t.replica << " simulated";
        if (!t.mirrored_by.empty()) {
            const bool one = t.mirrored_by.size() == 1;
            out << "; " << (one ? "replica " : "replicas ") << number_ranges(t.mirrored_by)
                << (one ? " runs alike" : " run alike");
        }
        out << '\n';
    }
    if (r.replicas.size() > 1) {
        const auto slowest = std::max_element(
            r.replicas.begin(), r.replicas.end(),
            [](const ReplicaTiming& a, const ReplicaTiming& b) { return a.alone_s < b.alone_s; });
        const auto fastest = std::min_element(
            r.replicas.begin(), r.replicas.end(),
            [](const ReplicaTiming& a, const ReplicaTiming& b) { return a.alone_s < b.alone_s; });
        if (slowest->alone_s <= fastest->alone_s * (1 + 1e-9)) {
            out << "            the replicas' devices or links differ, but not their times\n";
            out << '\n';
            print_reductions(out, r);
            return;
        }
        const auto index = static_cast<std::size_t>(slowest - r.replicas.begin());
        const std::string first_device =
            index * lanes < r.devices.size() ? r.devices[index * lanes].name : std::string();
        out << "Straggler   replica " << slowest->replica << " (from " << first_device
            << "): alone it takes " << format_duration(slowest->alone_s) << ", replica "
            << fastest->replica << " " << format_duration(fastest->alone_s)
            << "; every replica waits for it at each gradient reduction\n";
    }
    out << '\n';
    print_reductions(out, r);
}

nlohmann::json data_parallel_json(const SimulationReport& r) {
    nlohmann::json replicas = nlohmann::json::array();
    for (const ReplicaTiming& t : r.replicas) {
        replicas.push_back(
            {{"replica", t.replica}, {"mirrored_by", t.mirrored_by}, {"alone_s", t.alone_s}});
    }
    nlohmann::json collectives = nlohmann::json::array();
    for (std::size_t s = 0; s < r.collectives.size(); ++s) {
        const StageCollectiveCost& c = r.collectives[s];
        collectives.push_back({{"stage", s},
                               {"reduction", to_string(c.kind)},
                               {"algorithm", to_string(c.algorithm)},
                               {"library", c.library == CollectiveLibrary::nccl ? "nccl" : "gloo"},
                               {"protocol", to_string(c.protocol)},
                               {"gradient_bytes", c.gradient_bytes},
                               {"expert_gradient_bytes", c.expert_gradient_bytes},
                               {"expert_holders", c.expert_holders},
                               {"reduce_s", c.reduce_s},
                               {"buckets", c.buckets},
                               {"gather_s", c.gather_s}});
    }
    return {{"size", r.data_parallel},
            {"zero_stage", r.zero_stage},
            {"overlap_gradient_sync", r.overlap_gradient_sync},
            {"replicas", replicas},
            {"collectives", collectives}};
}

void print_plan_replicas(std::ostream& out, const PlanResult& result) {
    if (!result.data_parallel_choice.empty()) {
        out << "Replicas    " << result.data_parallel_choice << '\n';
    }
    if (result.data_parallel.size() < 2) {
        return;
    }
    out << '\n';
    // A tensor column only where some layout has groups.
    const bool tensor =
        std::any_of(result.data_parallel.begin(), result.data_parallel.end(),
                    [](const DataParallelOption& o) { return o.tensor_parallel > 1; });
    // Context and expert columns only where some layout has them.
    const bool context =
        std::any_of(result.data_parallel.begin(), result.data_parallel.end(),
                    [](const DataParallelOption& o) { return o.context_parallel > 1; });
    const bool experts =
        std::any_of(result.data_parallel.begin(), result.data_parallel.end(),
                    [](const DataParallelOption& o) { return o.expert_parallel > 1; });
    std::vector<std::string> columns{"replicas",      "stages",      "schedule",
                                     "micro-batches", "ZeRO",        "recompute",
                                     "side by side",  "peak memory", "iteration"};
    std::vector<std::string> leading;
    if (tensor) {
        leading.emplace_back("tensor");
    }
    if (context) {
        leading.emplace_back("context");
    }
    if (experts) {
        leading.emplace_back("experts");
    }
    columns.insert(columns.begin(), leading.begin(), leading.end());
    TextTable table(columns);
    for (std::size_t c : {0u, 1u, 3u, 6u, 7u, 8u}) {
        table.right_align(c + leading.size());
    }
    for (std::size_t c = 0; c < leading.size(); ++c) {
        table.right_align(c);
    }
    std::vector<std::string> reasons;
    bool bounded = false;
    for (const DataParallelOption& o : result.data_parallel) {
        std::vector<std::string> row;
        if (o.floor_s) {
            row = {std::to_string(o.replicas),        "-", "-", "-", "-", "-", "-", "-",
                   "≥ " + format_duration(*o.floor_s)};
            bounded = true;
        } else if (!o.iteration_s) {
            // The reason goes below the table: a sentence in a cell would
            // stretch the whole table.
            row = {std::to_string(o.replicas), "-", "-", "-", "-", "-", "-", "-", "n/a"};
            reasons.push_back(
                (tensor ? "tensor " + std::to_string(o.tensor_parallel) + ", " : std::string()) +
                (context ? "context " + std::to_string(o.context_parallel) + ", " : std::string()) +
                (experts ? "experts " + std::to_string(o.expert_parallel) + ", " : std::string()) +
                std::to_string(o.replicas) + (o.replicas == 1 ? " replica: " : " replicas: ") +
                o.reason);
        } else {
            row = {std::to_string(o.replicas),
                   std::to_string(o.stages),
                   o.schedule,
                   std::to_string(o.microbatches),
                   std::to_string(o.zero_stage),
                   recompute_word(o),
                   std::to_string(o.adjacent),
                   format_bytes(o.peak_memory_bytes),
                   format_duration(*o.iteration_s)};
        }
        std::vector<std::string> sizes;
        if (tensor) {
            sizes.push_back(std::to_string(o.tensor_parallel) +
                            (o.sequence_parallel ? " + SP" : ""));
        }
        if (context) {
            sizes.push_back(std::to_string(o.context_parallel));
        }
        if (experts) {
            sizes.push_back(std::to_string(o.expert_parallel));
        }
        row.insert(row.begin(), sizes.begin(), sizes.end());
        table.add_row(row);
    }
    table.print(out);
    out << "(side by side: how many replicas of each stage sit on neighbouring "
        << (tensor ? "devices or groups" : "devices")
        << (tensor ? "; tensor: devices of each stage's group, SP: sequence parallel" : "")
        << (context ? "; context: replicas each sequence is split over" : "")
        << (experts ? "; experts: replicas each block's experts are split over" : "") << ")\n";
    if (bounded) {
        out << "(≥: not planned: spread evenly over its devices, its work alone takes that long, "
               "more than a layout already found)\n";
    }
    for (const std::string& r : reasons) {
        out << "  " << r << '\n';
    }
}

nlohmann::json plan_replicas_json(const PlanResult& result) {
    nlohmann::json options = nlohmann::json::array();
    for (const DataParallelOption& o : result.data_parallel) {
        nlohmann::json j = {{"replicas", o.replicas},
                            {"tensor_parallel", o.tensor_parallel},
                            {"sequence_parallel", o.sequence_parallel},
                            {"expert_parallel", o.expert_parallel},
                            {"context_parallel", o.context_parallel},
                            {"fits", o.iteration_s.has_value()}};
        if (o.iteration_s) {
            j["stages"] = o.stages;
            j["schedule"] = o.schedule;
            j["microbatches"] = o.microbatches;
            j["zero_stage"] = o.zero_stage;
            j["adjacent_replicas"] = o.adjacent;
            j["activation_checkpointing"] = o.activation_checkpointing;
            j["recompute"] = recompute_word(o);
            j["layout"] = o.layout;
            j["iteration_time_s"] = *o.iteration_s;
            j["throughput_samples_per_s"] = o.throughput_samples_per_s;
            j["peak_memory_bytes"] = o.peak_memory_bytes;
            j["memory_capacity_bytes"] = o.memory_capacity_bytes;
            nlohmann::json by_zero = nlohmann::json::array();
            for (const auto& t : o.by_zero_stage) {
                by_zero.push_back(t ? nlohmann::json(*t) : nlohmann::json(nullptr));
            }
            j["iteration_time_s_by_zero_stage"] = by_zero;
        } else {
            j["reason"] = o.reason;
            if (o.floor_s) {
                j["iteration_time_floor_s"] = *o.floor_s;
            }
        }
        options.push_back(std::move(j));
    }
    return {{"choice", result.data_parallel_choice},
            {"options", options},
            {"tensor_parallel_skipped", result.tensor_parallel_skipped},
            {"expert_parallel_skipped", result.expert_parallel_skipped},
            {"context_parallel_skipped", result.context_parallel_skipped}};
}

}  // namespace pipewright::cli
