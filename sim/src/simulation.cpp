#include "pipewright/sim/simulation.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "concurrent_groups.h"
#include "pipewright/core/profile.h"
#include "pipewright/core/stage_boundary.h"
#include "pipewright/sim/auto_schedule.h"
#include "pipewright/sim/memory_model.h"
#include "pipewright/sim/replica_classes.h"
#include "pipewright/sim/stage_memory.h"

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

std::vector<std::int64_t> static_bytes_per_rank(const AnalyzedProject& project,
                                                const std::vector<StageCost>& stages) {
    std::vector<std::int64_t> bytes(project.ranks.size(), 0);
    for (std::size_t s = 0; s < project.stages.size(); ++s) {
        bytes[static_cast<std::size_t>(project.stages[s].rank)] +=
            stage_static_bytes(stages[s], project.project.training, project.project.data_parallel,
                               project.project.expert_parallel.size);
    }
    return bytes;
}

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
    const auto cpu = [&](int rank) {
        return project.rank_specs[static_cast<std::size_t>(rank)].kind == "cpu";
    };
    for (const Used& u : used) {
        const int index = static_cast<int>(input.links.size());
        LinkSpec spec = u.link.spec;
        if (options.profile != nullptr && options.profile->transfer) {
            spec = *options.profile->transfer;  // measured on the real transport
        }
        const bool one_machine = u.link.link_class == LinkClass::intra_container ||
                                 u.link.link_class == LinkClass::intra_node;
        const bool cpu_pairs = std::all_of(u.pairs.begin(), u.pairs.end(), [&](const RankPair& p) {
            return cpu(p.first) && cpu(p.second);
        });
        // What a profile measured of Gloo between two CPU processes of this
        // machine prices the receives of such pairs only.
        const bool gloo_on_one_machine = one_machine && cpu_pairs;
        const double receive_s = gloo_on_one_machine && options.profile != nullptr
                                     ? options.profile->ready_receive_us.value_or(0) * 1e-6
                                     : 0.0;
        input.links.push_back(
            {u.link.resource + " (" + std::string(to_string(u.link.link_class)) + ")", spec,
             gloo_on_one_machine, group_shares_link(u.link.link_class), receive_s});
        for (const RankPair& pair : u.pairs) {
            input.link_index.set(pair.first, pair.second, index);
        }
    }
}

namespace {

// A real iteration ends with each rank zeroing its gradients and stepping its
// optimizer after its last action; a profile measures what that costs
// (StageCost::optimizer_s, 0 otherwise). Under ZeRO-1/2 the replicas then
// all-gather their updated weight shards (StageCost::step_gather_s). The iteration lasts until the
// last rank has stepped. It is not an action, so the timeline does not show it.
//
// With tied embeddings in two stages, the two ranks first sum the copies'
// gradients (tied_embedding_sync), once both have ended their last action.
double with_optimizer_steps(const MetricsAccumulator& totals, const std::vector<StageCost>& stages,
                            const AnalyzedProject& project,
                            const std::optional<TiedEmbeddingSync>& tied, double iteration_s) {
    const auto n = static_cast<std::size_t>(project.num_ranks());
    std::vector<double> step_s(n, 0);
    for (std::size_t s = 0; s < stages.size(); ++s) {
        step_s[static_cast<std::size_t>(project.stages[s].rank)] +=
            stages[s].optimizer_s + stages[s].step_gather_s;
    }
    if (totals.empty()) {
        return iteration_s;
    }
    // A rank without actions counts as ending where the first action began.
    const double first = totals.first_start_s();
    std::vector<double> end(n, first);
    for (std::size_t r = 0; r < n && r < totals.ranks(); ++r) {
        end[r] = std::max(first, totals.last_end_s(r));
    }
    if (tied) {
        const auto e = static_cast<std::size_t>(tied->embedding_rank);
        const auto h = static_cast<std::size_t>(tied->head_rank);
        end[e] = end[h] = std::max(end[e], end[h]) + tied->seconds;
    }
    for (std::size_t r = 0; r < n; ++r) {
        iteration_s = std::max(iteration_s, end[r] + step_s[r] - totals.begin_s());
    }
    return iteration_s;
}

// A rank stepping its optimizer is busy, not idle: its step counts in its
// busy time, and every bubble is the idle share of the whole iteration
// (which the steps may have lengthened).
void count_optimizer_steps(const std::vector<StageCost>& stages, const AnalyzedProject& project,
                           SimulationReport& report) {
    for (std::size_t s = 0; s < stages.size(); ++s) {
        const auto r = static_cast<std::size_t>(project.stages[s].rank);
        if (r < report.devices.size()) {
            report.devices[r].busy_s += stages[s].optimizer_s;
        }
    }
    const double iteration = report.iteration_time_s;
    double busy = 0;
    for (DeviceMetrics& d : report.devices) {
        d.bubble_fraction = iteration > 0 ? std::max(0.0, 1.0 - d.busy_s / iteration) : 0.0;
        busy += d.busy_s;
    }
    report.bubble_fraction =
        iteration > 0 && !report.devices.empty()
            ? std::max(0.0, 1.0 - busy / (static_cast<double>(report.devices.size()) * iteration))
            : 0.0;
}

// The ring hops of a stage's group of replicas, as links of the
// simulation (shared with the pipeline's transfers where they are the same
// link), and what its collectives cost.
void describe_collectives(const AnalyzedProject& project, const CostModelOptions& options,
                          SimulationInput& input, std::vector<StageCollectiveCost>& costs) {
    const Profile* profile = options.profile;
    const DataParallel& dp = project.project.data_parallel;
    const Training& training = project.project.training;
    const LinkResolver resolver(project.project.topology);
    std::unordered_map<std::string, int> by_name;
    for (std::size_t i = 0; i < input.links.size(); ++i) {
        by_name.emplace(input.links[i].name, static_cast<int>(i));
    }
    const double bucket_bytes = dp.bucket_MiB * 1024 * 1024;
    input.collectives.resize(project.stages.size());
    costs.resize(project.stages.size());
    for (std::size_t s = 0; s < project.stages.size(); ++s) {
        const auto rank = static_cast<std::size_t>(project.stages[s].rank);
        std::vector<DeviceLocation> members;
        for (const auto& replica : project.replicas) {
            members.push_back(replica[rank]);
        }
        std::vector<int> links;
        for (std::size_t k = 0; k < members.size(); ++k) {
            const ResolvedLink hop =
                resolver.between(members[k], members[(k + 1) % members.size()]);
            const std::string name =
                hop.resource + " (" + std::string(to_string(hop.link_class)) + ")";
            const auto [it, fresh] = by_name.emplace(name, static_cast<int>(input.links.size()));
            if (fresh) {
                input.links.push_back({name, hop.spec});
            }
            if (std::find(links.begin(), links.end(), it->second) == links.end()) {
                links.push_back(it->second);
            }
        }
        const CollectiveGroup group =
            replica_collective_group(project, static_cast<int>(rank), ReplicaGrouping::consecutive,
                                     project.data_parallel(), resolver);
        const double bytes = gradient_bytes(input.stages[s].parameters, training);
        // Expert parallelism: the routed experts' gradients average over the
        // replicas that hold the same experts (every E-th), apart from the
        // rest, which average over all of them.
        const int ep = project.project.expert_parallel.size;
        const double expert_bytes =
            ep > 1 ? gradient_bytes(input.stages[s].expert_parameters, training) : 0;
        std::optional<CollectiveGroup> holders;
        if (expert_bytes > 0) {
            holders = replica_collective_group(project, static_cast<int>(rank),
                                               ReplicaGrouping::strided, ep, resolver);
        }
        // One collective of the stage's gradients or weights: the experts'
        // part over their holders after the rest.
        const double expert_fraction = bytes > 0 ? expert_bytes / bytes : 0;
        const auto split_time = [&](CollectiveKind kind, double all_bytes,
                                    const CollectiveGroup& over) {
            CollectiveTime t = collective_time(kind, all_bytes * (1 - expert_fraction), over);
            if (holders) {
                t.seconds += collective_time(kind, all_bytes * expert_fraction, *holders).seconds;
            }
            return t;
        };
        StageCollectiveCost& cost = costs[s];
        // A sharded optimizer needs only its shard of the averaged gradients.
        cost.kind =
            dp.zero_stage >= 1 ? CollectiveKind::reduce_scatter : CollectiveKind::all_reduce;
        CollectiveGroup reduce_group = group;
        if (profile != nullptr && profile->all_reduce) {
            // Priced as measured on the transport a run uses, which averages
            // gradients with an all-reduce at every ZeRO stage (Gloo has no
            // reduce-scatter).
            cost.kind = CollectiveKind::all_reduce;
            reduce_group = with_measured_ring(group, profile->all_reduce->link);
        }
        const CollectiveGroup gather_group =
            profile != nullptr && profile->all_gather
                ? with_measured_ring(group, profile->all_gather->link)
                : group;
        cost.gradient_bytes = bytes;
        cost.expert_gradient_bytes = expert_bytes;
        cost.expert_holders = holders ? holders->members : 0;
        const CollectiveTime whole = split_time(cost.kind, bytes, reduce_group);
        cost.algorithm = whole.algorithm;
        cost.library = group.library;
        cost.protocol = whole.protocol;
        cost.reduce_s = whole.seconds;
        cost.buckets = dp.overlap_gradient_sync && bucket_bytes > 0
                           ? static_cast<int>(std::clamp(std::ceil(bytes / bucket_bytes), 1.0, 1e6))
                           : 1;
        input.stages[s].unsharded_gradient_bytes =
            static_cast<double>(stage_unsharded_gradient_bytes(input.stages[s], training, dp, ep));
        SimCollective& reduce = input.collectives[s].reduce_grad;
        reduce.bytes = bytes;
        reduce.seconds = whole.seconds;
        reduce.buckets = cost.buckets;
        reduce.bucket_seconds = split_time(cost.kind, bytes / cost.buckets, reduce_group).seconds;
        reduce.links = links;
        const CollectiveTime gather = split_time(CollectiveKind::all_gather, bytes, gather_group);
        if (dp.zero_stage == 1 || dp.zero_stage == 2) {
            cost.gather_algorithm = gather.algorithm;
            cost.gather_s = gather.seconds;
            input.stages[s].step_gather_s = gather.seconds;
        }
        if (dp.zero_stage >= 3) {
            cost.gather_algorithm = gather.algorithm;
            cost.gather_s = gather.seconds;
            SimCollective& unshard = input.collectives[s].unshard;
            unshard.bytes = bytes;
            unshard.seconds = gather.seconds;
            unshard.links = links;
            input.stages[s].gathered_bytes =
                static_cast<double>(stage_gathered_bytes(input.stages[s], training, dp, ep));
        }
    }
}

struct ReplicaRun {
    SimulationInput input;
    SimulationOutput output;
    std::optional<TiedEmbeddingSync> tied;
};

// One replica's pipeline (with its collectives waiting for `floors`, the
// other replicas' times, when given), running `schedule` (zb-auto's lists
// for the costs) or else the project's.
ReplicaRun simulate_replica(const AnalyzedProject& project, const CostModelOptions& options,
                            Recording recording, const std::vector<CollectiveTimes>* floors,
                            std::vector<StageCollectiveCost>& costs, const Schedule* schedule) {
    ReplicaRun run;
    SimulationInput& input = run.input;
    input.schedule = schedule != nullptr ? schedule : &project.schedule;
    input.stages = stage_costs(project, options);
    for (const auto& loc : project.ranks) {
        input.rank_devices.push_back(loc.path);
    }
    describe_links(project, options, input);
    if (project.data_parallel() > 1) {
        describe_collectives(project, options, input, costs);
        for (std::size_t s = 0; floors != nullptr && s < floors->size(); ++s) {
            const CollectiveTimes& f = (*floors)[s];
            input.collectives[s].unshard.not_before_s = f.unshard_start_s;
            input.collectives[s].unshard.not_ended_before_s = f.unshard_end_s;
            input.collectives[s].reduce_grad.not_before_s = f.reduce_start_s;
            input.collectives[s].reduce_grad.not_ended_before_s = f.reduce_end_s;
        }
    }
    input.static_bytes = static_bytes_per_rank(project, input.stages);
    input.record_timeline = recording == Recording::timeline;
    run.output = simulate_schedule(input);
    run.tied = tied_embedding_sync(project, options);
    return run;
}

// The report of one replica's run (the whole report without data parallelism).
SimulationReport replica_report(const AnalyzedProject& project, ReplicaRun& run) {
    SimulationInput& input = run.input;
    SimulationOutput& output = run.output;
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
    report.iteration_time_s = with_optimizer_steps(output.totals, input.stages, project, run.tied,
                                                   metrics.iteration_time_s);
    report.tied_embedding_sync = run.tied;
    report.throughput_samples_per_s =
        report.iteration_time_s > 0 ? report.batch_size / report.iteration_time_s : 0;
    report.devices = std::move(metrics.devices);
    count_optimizer_steps(input.stages, project, report);
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

// Appends another replica's lanes to `into`: its devices, events, memory
// and links, with its ranks numbered after those already there.
// Per lane of the timeline (the simulated replicas' ranks, one after the
// other), every device it stands for: its tensor-parallel group, in its
// replica and in each replica that runs as it does.
std::vector<std::vector<std::string>> lane_devices(const AnalyzedProject& project,
                                                   const std::vector<ReplicaTiming>& replicas) {
    std::vector<std::vector<std::string>> out;
    const int ranks = project.num_ranks();
    const auto device_group = [&](int replica, int rank, std::vector<std::string>& into) {
        const auto r = static_cast<std::size_t>(rank);
        if (!project.tensor_groups.empty()) {
            for (const DeviceLocation& loc :
                 project.tensor_groups.at(static_cast<std::size_t>(replica)).at(r)) {
                into.push_back(loc.path);
            }
        } else if (project.data_parallel() > 1) {
            into.push_back(project.replicas.at(static_cast<std::size_t>(replica)).at(r).path);
        } else {
            into.push_back(project.ranks.at(r).path);
        }
    };
    const std::vector<ReplicaTiming> alone{ReplicaTiming{}};
    for (const ReplicaTiming& timing : replicas.empty() ? alone : replicas) {
        for (int rank = 0; rank < ranks; ++rank) {
            auto& devices = out.emplace_back();
            device_group(timing.replica, rank, devices);
            for (const int other : timing.mirrored_by) {
                device_group(other, rank, devices);
            }
        }
    }
    return out;
}

// `link_names` holds the names of into.links (a search per link made
// hundreds of replica kinds quadratic).
void append_replica(SimulationReport& into, SimulationReport&& other,
                    std::unordered_set<std::string>& link_names) {
    const int offset = static_cast<int>(into.devices.size());
    for (DeviceMetrics& d : other.devices) {
        d.rank += offset;
        into.all_fit = into.all_fit && d.fits;
        into.devices.push_back(std::move(d));
    }
    Timeline& t = into.timeline;
    for (TimelineEvent e : other.timeline.events) {
        e.rank += offset;
        e.peer_rank = e.peer_rank >= 0 ? e.peer_rank + offset : e.peer_rank;
        t.events.push_back(e);
    }
    t.devices.insert(t.devices.end(), other.timeline.devices.begin(), other.timeline.devices.end());
    for (auto& curve : other.timeline.memory) {
        t.memory.push_back(std::move(curve));
    }
    for (LinkUsage& l : other.links) {
        if (link_names.insert(l.name).second) {
            into.links.push_back(std::move(l));
        }
    }
}

}  // namespace

SimulationReport simulate_project(const AnalyzedProject& project, const CostModelOptions& options,
                                  Recording recording) {
    const ReplicaClasses classes = replica_classes(project);
    std::vector<StageCollectiveCost> costs;
    std::vector<ReplicaTiming> timings;
    for (std::size_t c = 0; c < classes.size(); ++c) {
        ReplicaTiming timing{classes.representative[c], {}, 0};
        for (std::size_t r = 0; r < classes.class_of.size(); ++r) {
            if (classes.class_of[r] == static_cast<int>(c) &&
                static_cast<int>(r) != timing.replica) {
                timing.mirrored_by.push_back(static_cast<int>(r));
            }
        }
        timings.push_back(std::move(timing));
    }
    // Replicas of one kind wait for no one else: one simulation is exact.
    // Otherwise each kind runs alone first; then again with its collectives
    // starting no earlier, and ending no earlier, than the slowest kind's.
    // Replica 0 is the project as analysed; each other kind is a copy with
    // its own devices, made once for both of its runs.
    std::vector<AnalyzedProject> copies(classes.size());
    for (std::size_t c = 1; c < classes.size(); ++c) {
        copies[c] = as_replica(project, classes.representative[c]);
    }
    const auto kind = [&](std::size_t c) -> const AnalyzedProject& {
        return classes.representative[c] == 0 ? project : copies[c];
    };
    // zb-auto's lists, built once for replica 0's costs: every replica runs
    // them, as every process of a real run builds them from those costs.
    std::optional<Schedule> fitted;
    if (builds_for_costs(project)) {
        fitted = schedule_for_costs(project, options);
    }
    const Schedule* schedule = fitted ? &*fitted : nullptr;
    std::vector<CollectiveTimes> floors;
    if (classes.size() > 1) {
        for (std::size_t c = 0; c < classes.size(); ++c) {
            const AnalyzedProject& replica = kind(c);
            ReplicaRun alone =
                simulate_replica(replica, options, Recording::summary, nullptr, costs, schedule);
            floors.resize(alone.output.collectives.size());
            for (std::size_t s = 0; s < floors.size(); ++s) {
                const CollectiveTimes& t = alone.output.collectives[s];
                CollectiveTimes& f = floors[s];
                f.unshard_start_s = std::max(f.unshard_start_s, t.unshard_start_s);
                f.unshard_end_s = std::max(f.unshard_end_s, t.unshard_end_s);
                f.reduce_start_s = std::max(f.reduce_start_s, t.reduce_start_s);
                f.reduce_end_s = std::max(f.reduce_end_s, t.reduce_end_s);
            }
            timings[c].alone_s = replica_report(replica, alone).iteration_time_s;
        }
    }
    SimulationReport report;
    std::unordered_set<std::string> link_names;
    for (std::size_t c = 0; c < classes.size(); ++c) {
        const AnalyzedProject& replica = kind(c);
        ReplicaRun run = simulate_replica(replica, options, recording,
                                          classes.size() > 1 ? &floors : nullptr, costs, schedule);
        SimulationReport one = replica_report(replica, run);
        if (classes.size() == 1) {
            timings[c].alone_s = one.iteration_time_s;
        }
        if (c == 0) {
            report = std::move(one);
            for (const LinkUsage& l : report.links) {
                link_names.insert(l.name);
            }
        } else {
            report.iteration_time_s = std::max(report.iteration_time_s, one.iteration_time_s);
            append_replica(report, std::move(one), link_names);
        }
    }
    if (classes.size() > 1) {
        // Bubbles and rates over every lane, against the slowest replica's iteration.
        double busy = 0;
        for (DeviceMetrics& d : report.devices) {
            d.bubble_fraction =
                report.iteration_time_s > 0 ? 1.0 - d.busy_s / report.iteration_time_s : 0.0;
            busy += d.busy_s;
        }
        report.bubble_fraction = report.iteration_time_s > 0 && !report.devices.empty()
                                     ? 1.0 - busy / (static_cast<double>(report.devices.size()) *
                                                     report.iteration_time_s)
                                     : 0.0;
        report.throughput_samples_per_s =
            report.iteration_time_s > 0 ? report.batch_size / report.iteration_time_s : 0;
    }
    report.data_parallel = project.data_parallel();
    report.zero_stage = project.project.data_parallel.zero_stage;
    report.tensor_parallel = project.project.tensor_parallel;
    report.expert_parallel = project.project.expert_parallel;
    report.context_parallel = project.project.context_parallel;
    report.stage_ranks = project.stage_ranks();
    if (!project.tensor_groups.empty()) {
        for (const auto& group : project.tensor_groups.front()) {
            auto& paths = report.tensor_groups.emplace_back();
            for (const DeviceLocation& loc : group) {
                paths.push_back(loc.path);
            }
        }
    }
    report.overlap_gradient_sync = project.project.data_parallel.overlap_gradient_sync;
    report.collectives = std::move(costs);
    report.replicas = std::move(timings);
    // The planner's trial layouts carry no replicas: the pipeline is all.
    const std::vector<std::vector<DeviceLocation>> pipeline_only{project.ranks};
    for (const auto& replica : project.data_parallel() <= 1 ? pipeline_only : project.replicas) {
        auto& paths = report.replica_devices.emplace_back();
        for (const DeviceLocation& loc : replica) {
            paths.push_back(loc.path);
        }
    }
    if (recording == Recording::timeline) {
        report.lane_devices = lane_devices(project, report.replicas);
    }
    return report;
}

}  // namespace pipewright
