#include "pipewright/sim/simulation.h"

#include <algorithm>
#include <map>

namespace pipewright {

void describe_links(const AnalyzedProject& project, const CostModelOptions& options,
                    SimulationInput& input) {
    const auto n = static_cast<std::size_t>(project.num_ranks());
    input.link_index.assign(n, std::vector<int>(n, -1));
    input.links.clear();
    std::map<std::string, int> by_resource;
    const Topology& topology = project.project.topology;
    for (std::size_t a = 0; a < n; ++a) {
        for (std::size_t b = 0; b < n; ++b) {
            if (a == b) {
                continue;
            }
            ResolvedLink link = topology.link_between(project.ranks[a], project.ranks[b]);
            if (options.profile != nullptr && options.profile->transfer) {
                link.spec = *options.profile->transfer;  // measured on the real transport
            }
            auto [it, inserted] =
                by_resource.emplace(link.resource, static_cast<int>(input.links.size()));
            if (inserted) {
                input.links.push_back(
                    {link.resource + " (" + std::string(to_string(link.link_class)) + ")",
                     link.spec});
            }
            input.link_index[a][b] = it->second;
        }
    }
}

namespace {

// A real iteration ends with each rank zeroing its gradients and stepping its
// optimizer after its last action; a profile measures what that costs
// (StageCost::optimizer_s, 0 otherwise). The iteration lasts until the last
// rank has stepped. It is not an action, so the timeline does not show it.
double with_optimizer_steps(const Timeline& timeline, const std::vector<StageCost>& stages,
                            const AnalyzedProject& project, double iteration_s) {
    const auto n = static_cast<std::size_t>(project.num_ranks());
    std::vector<double> step_s(n, 0);
    for (std::size_t s = 0; s < stages.size(); ++s) {
        step_s[static_cast<std::size_t>(project.stages[s].rank)] += stages[s].optimizer_s;
    }
    if (timeline.events.empty()) {
        return iteration_s;
    }
    double begin = timeline.events.front().start_s;
    std::vector<double> end(n, begin);
    for (const auto& e : timeline.events) {
        begin = std::min(begin, e.start_s);
        const auto r = static_cast<std::size_t>(e.rank);
        if (r < n) {
            end[r] = std::max(end[r], e.end_s);
        }
    }
    for (std::size_t r = 0; r < n; ++r) {
        iteration_s = std::max(iteration_s, end[r] + step_s[r] - begin);
    }
    return iteration_s;
}

}  // namespace

SimulationReport simulate_project(const AnalyzedProject& project, const CostModelOptions& options) {
    SimulationInput input;
    input.schedule = &project.schedule;
    input.stages = stage_costs(project, options);
    for (const auto& loc : project.ranks) {
        input.rank_devices.push_back(loc.path);
    }
    describe_links(project, options, input);
    SimulationOutput output = simulate_schedule(input);

    std::vector<std::int64_t> static_bytes(project.ranks.size(), 0);
    for (std::size_t s = 0; s < project.stages.size(); ++s) {
        static_bytes[static_cast<std::size_t>(project.stages[s].rank)] +=
            static_memory_bytes(input.stages[s].parameters, project.project.training);
    }
    std::vector<RankMemory> memory = memory_over_time(output.timeline, input.stages, static_bytes);
    TimelineMetrics metrics = timeline_metrics(output.timeline);

    SimulationReport report;
    report.schedule = project.schedule.name;
    report.batch_size = project.project.training.batch_size;
    report.microbatches = project.microbatches;
    report.microbatch_size = project.microbatch_size;
    report.iteration_time_s =
        with_optimizer_steps(output.timeline, input.stages, project, metrics.iteration_time_s);
    report.throughput_samples_per_s =
        report.iteration_time_s > 0 ? report.batch_size / report.iteration_time_s : 0;
    report.bubble_fraction = metrics.bubble_fraction;
    report.devices = std::move(metrics.devices);
    for (std::size_t r = 0; r < report.devices.size(); ++r) {
        auto& d = report.devices[r];
        d.spec = project.rank_specs[r].name;
        d.peak_memory_bytes = memory[r].peak_bytes;
        d.memory_capacity_bytes = project.rank_specs[r].memory_bytes;
        d.fits = d.peak_memory_bytes <= d.memory_capacity_bytes;
        report.all_fit = report.all_fit && d.fits;
        output.timeline.memory.push_back(std::move(memory[r].curve));
    }
    report.links = std::move(output.links);
    report.stages = std::move(input.stages);
    report.timeline = std::move(output.timeline);
    return report;
}

}  // namespace pipewright
