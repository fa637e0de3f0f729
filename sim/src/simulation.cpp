#include "pipewright/sim/simulation.h"

#include <algorithm>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "pipewright/sim/memory_model.h"

namespace pipewright {

namespace {

using RankPair = std::pair<int, int>;

// Rank pairs that exchange data: the ranks of neighbouring stages, both ways.
// Only these get a link; all pairs made simulating 10⁴ devices O(N²) in time
// and memory (issue 18).
std::vector<RankPair> communicating_pairs(const AnalyzedProject& project) {
    std::vector<RankPair> pairs;
    for (std::size_t s = 0; s + 1 < project.stages.size(); ++s) {
        const int a = project.stages[s].rank;
        const int b = project.stages[s + 1].rank;
        if (a != b) {
            pairs.emplace_back(a, b);
            pairs.emplace_back(b, a);
        }
    }
    std::sort(pairs.begin(), pairs.end());
    pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
    return pairs;
}

// Links are listed (and numbered) in the order of the first (from, to) rank
// pair, over all pairs, that uses each, as when every pair was resolved. A
// link of its own pair comes at that pair; a link shared by the devices of
// two nodes (or two containers) at the first pair of ranks from the two
// groups that no override takes off it.
class LinkOrder {
  public:
    LinkOrder(const AnalyzedProject& project, const LinkResolver& resolver)
        : ranks_(project.ranks), resolver_(resolver) {
        for (std::size_t r = 0; r < ranks_.size(); ++r) {
            by_node_[ranks_[r].node].push_back(static_cast<int>(r));
            by_container_[{ranks_[r].node, ranks_[r].container}].push_back(static_cast<int>(r));
        }
    }

    [[nodiscard]] RankPair first_pair(const RankPair& pair, LinkClass link_class) const {
        const DeviceLocation& a = ranks_[static_cast<std::size_t>(pair.first)];
        const DeviceLocation& b = ranks_[static_cast<std::size_t>(pair.second)];
        if (link_class == LinkClass::inter_node) {
            return first_free(by_node_.at(a.node), by_node_.at(b.node), pair);
        }
        if (link_class == LinkClass::intra_node) {
            return first_free(by_container_.at({a.node, a.container}),
                              by_container_.at({b.node, b.container}), pair);
        }
        return pair;
    }

  private:
    // Each rejected pair is an override, so this ends after at most as many
    // steps as there are overrides, plus one per rank of `from`.
    RankPair first_free(const std::vector<int>& from, const std::vector<int>& to,
                        const RankPair& fallback) const {
        for (const int a : from) {
            for (const int b : to) {
                if (!resolver_.overridden(ranks_[static_cast<std::size_t>(a)].path,
                                          ranks_[static_cast<std::size_t>(b)].path)) {
                    return {a, b};
                }
            }
        }
        return fallback;
    }

    const std::vector<DeviceLocation>& ranks_;
    const LinkResolver& resolver_;
    std::map<int, std::vector<int>> by_node_;                       // ranks, ascending
    std::map<std::pair<int, int>, std::vector<int>> by_container_;  // (node, container)
};

}  // namespace

void describe_links(const AnalyzedProject& project, const CostModelOptions& options,
                    SimulationInput& input) {
    input.link_index = LinkIndex{};
    input.links.clear();
    const LinkResolver resolver(project.project.topology);
    const LinkOrder order(project, resolver);
    struct Used {
        RankPair first;  // listing order
        ResolvedLink link;
        std::vector<RankPair> pairs;
    };
    std::vector<Used> used;
    std::unordered_map<std::string, std::size_t> by_resource;
    for (const RankPair& pair : communicating_pairs(project)) {
        ResolvedLink link = resolver.between(project.ranks[static_cast<std::size_t>(pair.first)],
                                             project.ranks[static_cast<std::size_t>(pair.second)]);
        const auto [it, inserted] = by_resource.emplace(link.resource, used.size());
        if (inserted) {
            used.push_back({order.first_pair(pair, link.link_class), std::move(link), {}});
        }
        used[it->second].pairs.push_back(pair);
    }
    std::sort(used.begin(), used.end(),
              [](const Used& a, const Used& b) { return a.first < b.first; });
    for (const Used& u : used) {
        const int index = static_cast<int>(input.links.size());
        LinkSpec spec = u.link.spec;
        if (options.profile != nullptr && options.profile->transfer) {
            spec = *options.profile->transfer;  // measured on the real transport
        }
        input.links.push_back(
            {u.link.resource + " (" + std::string(to_string(u.link.link_class)) + ")", spec});
        for (const RankPair& pair : u.pairs) {
            input.link_index.set(pair.first, pair.second, index);
        }
    }
}

namespace {

// A real iteration ends with each rank zeroing its gradients and stepping its
// optimizer after its last action; a profile measures what that costs
// (StageCost::optimizer_s, 0 otherwise). The iteration lasts until the last
// rank has stepped. It is not an action, so the timeline does not show it.
double with_optimizer_steps(const MetricsAccumulator& totals, const std::vector<StageCost>& stages,
                            const AnalyzedProject& project, double iteration_s) {
    const auto n = static_cast<std::size_t>(project.num_ranks());
    std::vector<double> step_s(n, 0);
    for (std::size_t s = 0; s < stages.size(); ++s) {
        step_s[static_cast<std::size_t>(project.stages[s].rank)] += stages[s].optimizer_s;
    }
    if (totals.empty()) {
        return iteration_s;
    }
    // A rank without actions counts as ending where the first action began.
    const double first = totals.first_start_s();
    for (std::size_t r = 0; r < n; ++r) {
        const double end = r < totals.ranks() ? std::max(first, totals.last_end_s(r)) : first;
        iteration_s = std::max(iteration_s, end + step_s[r] - totals.begin_s());
    }
    return iteration_s;
}

}  // namespace

SimulationReport simulate_project(const AnalyzedProject& project, const CostModelOptions& options,
                                  Recording recording) {
    SimulationInput input;
    input.schedule = &project.schedule;
    input.stages = stage_costs(project, options);
    for (const auto& loc : project.ranks) {
        input.rank_devices.push_back(loc.path);
    }
    describe_links(project, options, input);
    input.static_bytes.assign(project.ranks.size(), 0);
    for (std::size_t s = 0; s < project.stages.size(); ++s) {
        input.static_bytes[static_cast<std::size_t>(project.stages[s].rank)] +=
            static_memory_bytes(input.stages[s].parameters, project.project.training);
    }
    input.record_timeline = recording == Recording::timeline;
    SimulationOutput output = simulate_schedule(input);

    std::vector<RankMemory> memory;
    if (input.record_timeline) {
        memory = memory_over_time(output.timeline, input.stages, input.static_bytes);
    }
    TimelineMetrics metrics = output.totals.metrics(output.timeline.devices);

    SimulationReport report;
    report.schedule = project.schedule.name;
    report.batch_size = project.project.training.batch_size;
    report.microbatches = project.microbatches;
    report.microbatch_size = project.microbatch_size;
    report.iteration_time_s =
        with_optimizer_steps(output.totals, input.stages, project, metrics.iteration_time_s);
    report.throughput_samples_per_s =
        report.iteration_time_s > 0 ? report.batch_size / report.iteration_time_s : 0;
    report.bubble_fraction = metrics.bubble_fraction;
    report.devices = std::move(metrics.devices);
    for (std::size_t r = 0; r < report.devices.size(); ++r) {
        auto& d = report.devices[r];
        d.spec = project.rank_specs[r].name;
        d.peak_memory_bytes = output.peak_memory_bytes[r];
        d.memory_capacity_bytes = project.rank_specs[r].memory_bytes;
        d.fits = d.peak_memory_bytes <= d.memory_capacity_bytes;
        report.all_fit = report.all_fit && d.fits;
        if (r < memory.size()) {
            output.timeline.memory.push_back(std::move(memory[r].curve));
        }
    }
    report.links = std::move(output.links);
    report.stages = std::move(input.stages);
    report.timeline = std::move(output.timeline);
    return report;
}

}  // namespace pipewright
