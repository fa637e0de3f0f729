// The candidate search: layer tables per micro-batch count, and a branch and
// bound over (micro-batch count, stage count) that runs the split DP only
// where a lower bound of the estimated iteration time can still beat the
// candidates already kept; the device orders it tries are in
// device_orders.cpp. See docs/planner.md.

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>

#include "pipewright/core/schedule_generators.h"
#include "pipewright/core/stage_boundary.h"
#include "pipewright/core/transformer_dims.h"
#include "pipewright/sim/collective_cost.h"
#include "pipewright/sim/cost_model.h"
#include "pipewright/sim/kernel_cost.h"
#include "pipewright/sim/stage_memory.h"
#include "planner/internal.h"
#include "planner/tensor_groups.h"

namespace pipewright::planner {

namespace {

std::size_t at(int i) {
    return static_cast<std::size_t>(i);
}

// Static bytes per parameter of one replica at its ZeRO stage at its
// activations' peak: the shard of the optimizer state, but the weights and
// gradients whole, as a ZeRO-3 stage's weights are gathered while it runs
// and ZeRO-2/3 gradients add up whole from the first weight gradient until
// their one reduction (stage_unsharded_gradient_bytes), while the
// activations in flight peak. (Exact for a steady 1F1B; above the
// simulation where the peak comes before the first backward ends, as under
// GPipe or with one micro-batch.)
double static_bytes_per_param(const Training& training, const DataParallel& dp) {
    const ParameterBytes each = parameter_bytes(training);
    if (dp.size <= 1 || dp.zero_stage <= 0) {
        return static_cast<double>(each.total());
    }
    return static_cast<double>(each.weight + each.gradient) +
           static_cast<double>(each.optimizer) / dp.size;
}

}  // namespace

Context::Context(const Project& project, const PlanOptions& options, const DataParallel& replica_of)
    : costs_(options.costs), stop_(options.stop) {
    const auto every = project.topology.devices();
    if (every.empty()) {
        throw InputError("topology.nodes", "the topology has no devices to plan for");
    }
    // With tensor parallelism a stage sits on the first device of a group
    // and takes the devices after it: the planner places stages on those
    // first devices only.
    const int tensor = std::max(1, project.tensor_parallel.size);
    std::vector<DeviceLocation> locations;
    for (const int i : tensor_leaders(project.topology, tensor)) {
        locations.push_back(every[at(i)]);
        if (tensor > 1) {
            groups_.emplace_back(every.begin() + i, every.begin() + i + tensor);
        }
    }
    if (locations.empty()) {
        throw InputError("tensor_parallel.size",
                         "no container has " + std::to_string(tensor) +
                             " devices for a tensor-parallel group of that size");
    }
    if (project.model.layers.empty()) {
        throw InputError("model.layers", "the model has no layers to place");
    }
    // Analyse the layers once, on a placement that is valid whatever the
    // input placement says; the planner then only swaps stages and ranks.
    Project single = project;
    StageAssignment all{locations.front().path, {}};
    for (const auto& layer : project.model.layers) {
        all.layers.push_back(layer.name);
    }
    single.placement = {all};
    // Its split prices full recomputation per unit, every unit of a stage
    // (planner/split.cpp): training.recompute_blocks is not planned.
    single.training.recompute_blocks.reset();
    AnalysisOptions analysis;
    analysis.schedule = std::string(to_string(ScheduleKind::naive));
    analysis.catalog = options.catalog;
    analysis.base_dir = options.base_dir;
    analysis.replica_alone = true;
    Diagnostics diagnostics;
    auto analyzed = analyze_project(single, analysis, diagnostics);
    if (!analyzed) {
        throw InputError(diagnostics);
    }
    base_ = std::move(*analyzed);
    work_ = base_;

    const DeviceCatalog& catalog =
        options.catalog != nullptr ? *options.catalog : DeviceCatalog::builtin();
    cluster_.devices = locations;
    for (const auto& loc : locations) {
        DeviceSpec spec = effective_device(project.topology, loc, catalog).spec;
        const auto it = std::find(cluster_.classes.begin(), cluster_.classes.end(), spec);
        cluster_.device_class.push_back(static_cast<int>(it - cluster_.classes.begin()));
        if (it == cluster_.classes.end()) {
            cluster_.classes.push_back(spec);
        }
        cluster_.specs.push_back(std::move(spec));
    }
    const Training& training = base_.project.training;
    checkpointing_ = training.full_recompute();
    bytes_per_param_ = static_bytes_per_param(training, replica_of);
    const int experts = std::max(1, base_.project.expert_parallel.size);
    if (experts > 1 && bytes_per_param_ > 0) {
        expert_param_weight_ =
            static_bytes_per_param(training, expert_holders(replica_of, experts)) /
            bytes_per_param_ / experts;
    }
    // The simulations count the replica's shards too (its collectives are
    // left to the simulation of the whole layout).
    work_.project.data_parallel = replica_of;
    work_.project.data_parallel.replicas.clear();
    class_groups_ = tensor_groups_by_class();
    build_orders();
}

const LayerTable& Context::table(int microbatches) {
    if (auto it = tables_.find(microbatches); it != tables_.end()) {
        return it->second;
    }
    LayerTable t;
    t.microbatches = microbatches;
    t.microbatch_size = batch() / microbatches;
    t.layers = layers();
    work_.microbatch_size = t.microbatch_size;
    const auto n = at(t.layers) + 1;
    t.time.assign(cluster_.classes.size(), std::vector<double>(n, 0.0));
    t.stash.assign(n, 0.0);
    t.weight_stash.assign(n, 0.0);
    t.params.assign(n, 0.0);
    t.output_bytes.assign(n - 1, 0.0);
    t.input_bytes.assign(n - 1, 0.0);
    t.member_output_bytes.assign(n - 1, 0.0);
    t.takes.assign(n - 1, 0.0);
    t.min_time.assign(n - 1, 0.0);
    t.min_prefix.assign(n, 0.0);
    const ModelInput& input = base_.project.model.input;
    const std::vector<CollectiveGroup>& groups = class_groups_;
    const double element_bytes = t.microbatch_size * dtype_bytes(base_.project.training.dtype);
    std::vector<LayerCost> costs(cluster_.classes.size());
    // The loss after the last layer, as the simulator adds it to the last
    // stage: its time to that layer's (never recomputed), its softmax kept.
    const LossKernels loss = project_loss_kernels(work_, costs_);
    t.loss_stash = loss.stash_bytes;
    for (int l = 0; l < t.layers; ++l) {
        const auto i = at(l);
        double fastest = 0;
        // A run of identical blocks is priced once per device class.
        const bool repeat = l > 0 && same_layer_cost(work_, l - 1, l, costs_);
        for (std::size_t c = 0; c < cluster_.classes.size(); ++c) {
            if (!repeat) {
                costs[c] = layer_cost(work_, l, cluster_.classes[c], costs_);
            }
            const LayerCost& cost = costs[c];
            double forward_s = cost.forward_s;
            double backward_s = cost.backward_input_s + cost.backward_weight_s;
            if (!groups.empty()) {
                // The group's all-reduces, as the simulator adds them to F and B.
                const TensorCollectives tc =
                    tensor_collectives(base_.tensor_shares[i], element_bytes, groups[c]);
                forward_s += tc.forward_s;
                backward_s += tc.backward_s;
            }
            double seconds = forward_s + backward_s;
            if (checkpointing_) {
                seconds += forward_s;  // recomputed before the backward
            }
            if (l + 1 == t.layers) {
                const DType dtype = base_.project.training.dtype;
                seconds += kernels_seconds(loss.kernels.forward, cluster_.classes[c], dtype) +
                           kernels_seconds(loss.kernels.backward_input, cluster_.classes[c], dtype);
            }
            t.time[c][i + 1] = t.time[c][i] + seconds;
            fastest = c == 0 ? seconds : std::min(fastest, seconds);
            if (c == 0) {
                // Activation sizes do not depend on the device.
                t.stash[i + 1] = t.stash[i] + cost.stash_bytes;
                t.weight_stash[i + 1] = t.weight_stash[i] + cost.weight_stash_bytes;
                t.output_bytes[i] = cost.output_bytes;
                t.member_output_bytes[i] = cost.output_bytes * boundary_share(work_, l);
            }
        }
        // Each device of a tensor-parallel group holds its share of the weights.
        const double share = base_.tensor_shares.empty() ? 1.0 : base_.tensor_shares[i].parameters;
        double held = static_cast<double>(base_.layers[i].parameters) * share;
        if (expert_param_weight_ != 1 && has_experts(base_.project.model.layers[i])) {
            // This replica holds 1/E of the routed experts (and their state
            // in fewer shards): counted at their weight.
            const int tensor = base_.tensor_shares.empty() ? 1 : base_.project.tensor_parallel.size;
            held += routed_expert_parameters_on(transformer_dims(base_.project.model.layers[i]),
                                                tensor) *
                    (expert_param_weight_ - 1);
        }
        t.params[i + 1] = t.params[i] + held;
        t.input_bytes[i] = l == 0 ? static_cast<double>(numel(input.shape)) * t.microbatch_size *
                                        dtype_bytes(input.dtype)
                                  : t.output_bytes[i - 1];
        t.takes[i] = l == 0 ? t.input_bytes[i] : t.member_output_bytes[i - 1];
        t.min_time[i] = fastest;
        t.min_prefix[i + 1] = t.min_prefix[i] + fastest;
        t.min_total += fastest;
        t.min_largest = std::max(t.min_largest, fastest);
    }
    t.index_units(base_.project.model.layers);
    if (base_.tied) {
        const auto head = static_cast<std::size_t>(base_.tied->head);
        t.tied_params = static_cast<double>(base_.tied->parameters) *
                        (base_.tensor_shares.empty() ? 1.0 : base_.tensor_shares[head].parameters);
    }
    return tables_.emplace(microbatches, std::move(t)).first->second;
}

std::vector<CollectiveGroup> Context::tensor_groups_by_class() const {
    std::vector<CollectiveGroup> out;
    if (groups_.empty()) {
        return out;
    }
    // A class's groups are priced by its first device's group: within a
    // container the groups of one kind of device share their links.
    const LinkResolver links(base_.project.topology);
    const LinkSpec* measured = costs_.profile != nullptr && costs_.profile->all_reduce
                                   ? &costs_.profile->all_reduce->link
                                   : nullptr;
    for (std::size_t c = 0; c < cluster_.classes.size(); ++c) {
        const auto first = std::find(cluster_.device_class.begin(), cluster_.device_class.end(),
                                     static_cast<int>(c));
        out.push_back(tensor_parallel_group(
            groups_[at(static_cast<int>(first - cluster_.device_class.begin()))], links,
            cluster_.classes[c], measured));
    }
    return out;
}

StageLink Context::link(int from, int to) const {
    const auto& topology = base_.project.topology;
    const ResolvedLink resolved =
        topology.link_between(cluster_.devices[at(from)], cluster_.devices[at(to)]);
    StageLink out{resolved.spec, group_shares_link(resolved.link_class)};
    if (costs_.profile != nullptr && costs_.profile->transfer) {
        out.spec = *costs_.profile->transfer;  // as the simulator does with a profile
    }
    return out;
}

SplitProblem Context::problem(const LayerTable& table, std::size_t order, int stages,
                              MemoryRule rule) const {
    SplitProblem p;
    p.table = &table;
    p.checkpointing = checkpointing_;
    p.bytes_per_param = bytes_per_param_;
    const ScheduleKind schedule = rule == MemoryRule::gpipe         ? ScheduleKind::gpipe
                                  : rule == MemoryRule::one_f_one_b ? ScheduleKind::one_f_one_b
                                  : rule == MemoryRule::zb_h1       ? ScheduleKind::zb_h1
                                                                    : ScheduleKind::zb_h2;
    p.split_backward = schedule_info(schedule).splits_backward;
    for (int k = 0; k < stages; ++k) {
        Slot slot;
        slot.device = orders_[order][at(k)];
        slot.cls = cluster_.device_class[at(slot.device)];
        slot.capacity = static_cast<double>(cluster_.specs[at(slot.device)].memory_bytes);
        if (k + 1 < stages) {
            slot.next = order_links_[order][at(k)];
        }
        const InFlight f = activations_in_flight(schedule, k, stages, table.microbatches);
        slot.full = f.full;
        slot.weight_only = f.weight_only;
        p.slots.push_back(slot);
    }
    return p;
}

SimulationReport Context::simulate(const std::vector<int>& devices, const std::vector<int>& first,
                                   int microbatches, ScheduleKind schedule) {
    // work_.project.placement stays the single-device one: the simulator reads
    // the resolved stages and ranks only.
    work_.microbatches = microbatches;
    work_.microbatch_size = batch() / microbatches;
    Training& training = work_.project.training;
    training.microbatches = microbatches;
    training.microbatch_size.reset();
    training.schedule = ScheduleChoice{std::string(to_string(schedule)), ""};
    work_.stages.clear();
    work_.ranks.clear();
    work_.rank_specs.clear();
    // One replica's pipeline: plan_data_parallel simulates the whole layout.
    work_.replicas.clear();
    work_.replica_specs.clear();
    work_.tensor_groups.clear();
    if (!groups_.empty()) {
        work_.tensor_groups.emplace_back();
    }
    std::vector<int> stage_rank;
    std::map<int, int> rank_of;  // device -> rank, in order of first appearance
    for (std::size_t k = 0; k < devices.size(); ++k) {
        const auto [it, added] = rank_of.try_emplace(devices[k], static_cast<int>(rank_of.size()));
        const int rank = it->second;
        if (added) {
            work_.ranks.push_back(cluster_.devices[at(devices[k])]);
            work_.rank_specs.push_back(cluster_.specs[at(devices[k])]);
            if (!groups_.empty()) {
                work_.tensor_groups.front().push_back(groups_[at(devices[k])]);
            }
        }
        work_.stages.push_back({static_cast<int>(k), rank, first[k], first[k + 1] - 1});
        stage_rank.push_back(rank);
    }
    work_.schedule = add_communication(generate_schedule(schedule, stage_rank, microbatches));
    return simulate_project(work_, costs_, Recording::summary);
}

MemoryRule rule_of(ScheduleKind schedule) {
    switch (schedule) {
        case ScheduleKind::one_f_one_b:
            return MemoryRule::one_f_one_b;
        case ScheduleKind::zb_h1:
            return MemoryRule::zb_h1;
        case ScheduleKind::zb_h2:
            return MemoryRule::zb_h2;
        case ScheduleKind::zb_auto:
            // It builds its lists within the memory left; planned as ZB-H1,
            // the least it holds where it matches ZB-H1.
            return MemoryRule::zb_h1;
        case ScheduleKind::naive:
        case ScheduleKind::gpipe:
        case ScheduleKind::looped_bfs:
        case ScheduleKind::interleaved_1f1b:
        case ScheduleKind::interleaved_zb:
        case ScheduleKind::zbv:
        case ScheduleKind::dualpipev:
            break;
    }
    return MemoryRule::gpipe;
}

std::optional<MemoryRule> rule_for(std::optional<ScheduleKind> fixed, int microbatches,
                                   int stages) {
    if (!fixed) {
        // 1F1B holds fewer activations than GPipe for the same speed, so GPipe
        // is only searched where 1F1B cannot run.
        return microbatches >= stages ? MemoryRule::one_f_one_b : MemoryRule::gpipe;
    }
    const MemoryRule rule = rule_of(*fixed);
    if (rule != MemoryRule::gpipe && microbatches < stages) {
        return std::nullopt;
    }
    return rule;
}

std::vector<ScheduleKind> schedules_for(MemoryRule rule, std::optional<ScheduleKind> fixed,
                                        int microbatches) {
    if (fixed) {
        return {*fixed};
    }
    switch (rule) {
        case MemoryRule::gpipe:
            // With one micro-batch GPipe is naive model parallelism.
            return {microbatches == 1 ? ScheduleKind::naive : ScheduleKind::gpipe};
        case MemoryRule::one_f_one_b:
            // One micro-batch on one stage: every schedule is the same.
            if (microbatches == 1) {
                return {ScheduleKind::naive};
            }
            // GPipe too: it holds more activations (the simulation says
            // whether they fit), and where transfers are slow against the
            // stages its batched sends can beat 1F1B.
            return {ScheduleKind::one_f_one_b, ScheduleKind::zb_h1, ScheduleKind::zb_h2,
                    ScheduleKind::gpipe};
        case MemoryRule::zb_h1:
            return {ScheduleKind::zb_h1};
        case MemoryRule::zb_h2:
            return {ScheduleKind::zb_h2};
    }
    return {};
}

std::vector<Candidate> search_candidates(Context& context, const SearchSpec& spec,
                                         PlanStatistics& statistics) {
    struct Pair {
        int microbatches;
        int stages;
        MemoryRule rule;
        double lower;  // no split of this pair estimates below this
    };
    const int most = std::min(context.devices(), context.layers());
    // Per micro-batch count and order: each stage's least send, and their prefix sums.
    std::map<int, std::vector<std::vector<double>>> floors;
    std::map<int, std::vector<std::vector<double>>> floor_sums;
    // Every split of p stages computes at least the fastest total and sends
    // p - 1 times; its slowest stage takes at least the mean.
    const auto through_floor = [&](int m, std::size_t order, int p) {
        return context.table(m).min_total + floor_sums[m][order][at(p - 1)];
    };
    std::vector<Pair> pairs;
    for (int m : spec.microbatches) {
        const LayerTable& t = context.table(m);
        floors[m] = context.send_floors(t);
        for (const auto& sends : floors[m]) {
            std::vector<double> sums(sends.size() + 1, 0.0);
            std::partial_sum(sends.begin(), sends.end(), sums.begin() + 1);
            floor_sums[m].push_back(std::move(sums));
        }
        for (int p = 1; p <= most; ++p) {
            const auto rule = rule_for(spec.schedule, m, p);
            if (!rule) {
                continue;
            }
            double through = -1;
            for (int o : context.distinct_orders(p)) {
                const double x = through_floor(m, at(o), p);
                through = through < 0 ? x : std::min(through, x);
            }
            const double bottleneck = std::max(t.min_largest, through / p);
            pairs.push_back({m, p, *rule, through + (m - 1) * bottleneck});
        }
    }
    std::stable_sort(pairs.begin(), pairs.end(),
                     [](const Pair& a, const Pair& b) { return a.lower < b.lower; });

    std::vector<Candidate> kept;
    for (const Pair& pair : pairs) {
        const bool full = kept.size() >= spec.keep;
        if (full && pair.lower >= kept.back().estimate_s) {
            break;  // every later pair is bounded below by at least this
        }
        const LayerTable& t = context.table(pair.microbatches);
        for (int o : context.distinct_orders(pair.stages)) {
            context.throw_if_stopped();
            if (kept.size() >= spec.keep) {
                // A tighter bound for this order, worth its cost only where
                // the cheap one failed: layers do not split, so the slowest
                // stage is above the mean.
                const auto& sends = floors[pair.microbatches][at(o)];
                const double through = through_floor(pair.microbatches, at(o), pair.stages);
                const double bottleneck =
                    std::max(through / pair.stages,
                             relaxed_bottleneck(t, pair.stages, std::span<const double>(sends)));
                if (through + (pair.microbatches - 1) * bottleneck >= kept.back().estimate_s) {
                    continue;
                }
            }
            const SplitProblem problem =
                context.problem(t, static_cast<std::size_t>(o), pair.stages, pair.rule);
            const Split split = min_bottleneck_split(problem);
            ++statistics.split_searches;
            if (!split.feasible) {
                continue;
            }
            // One micro-batch through every stage, then the rest at the pace
            // of the slowest: the classic pipeline estimate.
            double through = 0;
            for (std::size_t k = 0; k < problem.slots.size(); ++k) {
                through += stage_time(problem, k, split.first[k], split.first[k + 1]);
            }
            Candidate c;
            c.order = static_cast<std::size_t>(o);
            const auto& order = context.orders()[static_cast<std::size_t>(o)];
            c.devices.assign(order.begin(), order.begin() + pair.stages);
            c.first = split.first;
            c.microbatches = pair.microbatches;
            c.rule = pair.rule;
            c.bottleneck_s = split.value;
            c.estimate_s = through + (pair.microbatches - 1) * split.value;
            const auto pos =
                std::upper_bound(kept.begin(), kept.end(), c.estimate_s,
                                 [](double e, const Candidate& k) { return e < k.estimate_s; });
            if (static_cast<std::size_t>(pos - kept.begin()) < spec.keep) {
                kept.insert(pos, std::move(c));
                if (kept.size() > spec.keep) {
                    kept.pop_back();
                }
            }
        }
    }
    return kept;
}

}  // namespace pipewright::planner
