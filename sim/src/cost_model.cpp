#include "pipewright/sim/cost_model.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <utility>

#include "concurrent_groups.h"
#include "pipewright/core/diagnostics.h"
#include "pipewright/core/profile.h"
#include "pipewright/core/quantity_format.h"
#include "pipewright/core/recomputation_units.h"
#include "pipewright/core/stage_boundary.h"
#include "pipewright/core/transformer_dims.h"
#include "pipewright/sim/collective_cost.h"
#include "pipewright/sim/kernel_cost.h"
#include "pipewright/sim/profile_coverage.h"

namespace pipewright {

namespace {

// The share of every sample's tokens one rank of a context-parallel group
// runs (1 without context parallelism).
double token_share(const AnalyzedProject& project) {
    return 1.0 / std::max(1, project.project.context_parallel.size);
}

// What layer `layer` is fed per sample.
const Shape& layer_input_shape(const AnalyzedProject& project, int layer) {
    return layer == 0 ? project.project.model.input.shape
                      : project.layers.at(static_cast<std::size_t>(layer - 1)).output_shape;
}

// Memory figures end as 64-bit byte counts (the memory model, the report):
// a stage whose activations for every micro-batch could not be counted is
// refused instead of wrapping to a small, "fitting" figure.
void check_stage_bytes(const StageCost& s, int stage, int microbatches) {
    constexpr double kMaxBytes = 0x1p62;  // 4 EiB, a margin below 2^63
    const double in_flight = (s.stash_bytes + s.weight_stash_bytes) * std::max(1, microbatches);
    if (!(in_flight <= kMaxBytes) || !(s.input_bytes <= kMaxBytes) ||
        !(s.output_bytes <= kMaxBytes)) {
        throw InputError("model.layers",
                         "stage " + std::to_string(stage) + " would keep more than " +
                             format_bytes(kMaxBytes) + " of activations for " +
                             std::to_string(microbatches) +
                             " micro-batches, more than Pipewright can count; check the "
                             "layers' (or the profile's) activation_bytes and the batch size");
    }
}

}  // namespace

LayerKernels project_layer_kernels(const AnalyzedProject& project, int layer) {
    const auto i = static_cast<std::size_t>(layer);
    const Project& p = project.project;
    const Shape& input = layer_input_shape(project, layer);
    const TensorShare* share =
        project.tensor_shares.empty() ? nullptr : &project.tensor_shares.at(i);
    KernelContext context;
    context.microbatch_size = project.microbatch_size;
    context.dtype = p.training.dtype;
    context.float8 = p.training.float8;
    context.attention_kernel = p.training.attention_kernel;
    context.tensor_parallel = p.tensor_parallel.size;
    context.sequence_parallel = p.tensor_parallel.sequence_parallel;
    context.expert_parallel = p.expert_parallel.size;
    context.context_parallel = p.context_parallel.size;
    LayerKernels kernels =
        layer_kernels(p.model.layers.at(i), project.layers.at(i), input, share, context);
    // Unfused accumulation, over the parameters this member holds.
    if (p.training.gradient_accumulation == GradientAccumulation::add &&
        project.layers.at(i).parameters > 0) {
        const double held = share != nullptr ? share->parameters : 1.0;
        kernels.backward_weight.push_back(gradient_accumulation_kernel(
            static_cast<double>(project.layers.at(i).parameters) * held, p.training.dtype,
            p.training.gradients()));
    }
    return kernels;
}

namespace {

// Selective recomputation: the layer keeps no attention scores, and before
// its input gradient runs the attention core's forward kernels again (priced
// as kernels whatever priced the rest of the layer: a profile measured the
// layer without recomputation). A layer given its own activation_bytes
// keeps what it says.
void recompute_attention_core(const AnalyzedProject& project, int layer, const DeviceSpec& device,
                              const std::vector<Kernel>& forward, LayerCost& c) {
    const auto i = static_cast<std::size_t>(layer);
    const Training& training = project.project.training;
    if (!project.project.model.layers.at(i).activation_bytes) {
        const double share = project.tensor_shares.empty() ? 1.0 : project.tensor_shares[i].stash;
        const double freed = project.layers.at(i).recomputable_elements * project.microbatch_size *
                             token_share(project) * dtype_bytes(training.dtype) * share;
        c.stash_bytes = std::max(0.0, c.stash_bytes - freed);
    }
    double recompute_s = 0;
    for (const Kernel& k : forward) {
        if (k.attention_core) {
            recompute_s += kernel_time(k, device, training.dtype).seconds;
        }
    }
    c.backward_input_s += recompute_s;
    if (c.backward_full_s > 0) {
        c.backward_full_s += recompute_s;
    }
}

}  // namespace

bool same_layer_cost(const AnalyzedProject& project, int a, int b,
                     const CostModelOptions& options) {
    const auto& layers = project.project.model.layers;
    const LayerSpec& x = layers.at(static_cast<std::size_t>(a));
    const LayerSpec& y = layers.at(static_cast<std::size_t>(b));
    if (x.cost || y.cost || x.type != y.type || x.activation_bytes != y.activation_bytes ||
        x.params != y.params) {
        return false;
    }
    if (options.profile != nullptr &&
        (options.profile->find(x.name) != nullptr || options.profile->find(y.name) != nullptr)) {
        return false;
    }
    if (layer_input_shape(project, a) != layer_input_shape(project, b)) {
        return false;
    }
    return project.tensor_shares.empty() ||
           project.tensor_shares.at(static_cast<std::size_t>(a)) ==
               project.tensor_shares.at(static_cast<std::size_t>(b));
}

LayerCost layer_cost(const AnalyzedProject& project, int layer, const DeviceSpec& device,
                     const CostModelOptions& options) {
    const auto& spec = project.project.model.layers.at(static_cast<std::size_t>(layer));
    const auto& analysis = project.layers.at(static_cast<std::size_t>(layer));
    const Training& training = project.project.training;
    const double mb = project.microbatch_size;
    const double element_bytes = dtype_bytes(training.dtype);

    // Lowered once, for the analytic times and for selective recomputation;
    // not at all for a layer the profile measured and nothing recomputes.
    std::optional<LayerKernels> lowered;
    const auto kernels = [&]() -> const LayerKernels& {
        if (!lowered) {
            lowered = project_layer_kernels(project, layer);
        }
        return *lowered;
    };
    const LayerProfile* measured =
        options.profile != nullptr ? options.profile->find(spec.name) : nullptr;

    LayerCost c;
    if (options.flat_efficiency) {
        const double flops_per_s = device.flops_for(training.dtype) * *options.flat_efficiency;
        if (flops_per_s > 0) {
            // A part with no work (a flatten, the weight gradient of a ReLU) launches nothing.
            auto time = [&](double flops) {
                return flops > 0 ? flops * mb / flops_per_s + device.kernel_overhead_s : 0.0;
            };
            c.forward_s = time(analysis.forward_flops);
            c.backward_input_s = time(analysis.backward_input_flops);
            c.backward_weight_s = time(analysis.backward_weight_flops);
        }
    } else if (measured == nullptr) {
        // The kernels price the tensor-parallel slice themselves.
        c.forward_s = kernels_seconds(kernels().forward, device, training.dtype);
        c.backward_input_s = kernels_seconds(kernels().backward_input, device, training.dtype);
        c.backward_weight_s = kernels_seconds(kernels().backward_weight, device, training.dtype);
    }
    if (analysis.parameters > 0) {
        c.optimizer_s = kernel_time(optimizer_step_kernel(static_cast<double>(analysis.parameters),
                                                          training.optimizer, training.dtype,
                                                          training.gradients()),
                                    device, training.dtype)
                            .seconds;
    }
    c.stash_bytes = analysis.stashed_elements * mb * element_bytes;
    c.weight_stash_bytes = analysis.weight_stashed_elements * mb * element_bytes;
    c.output_bytes = analysis.output_elements * mb * element_bytes;

    if (measured != nullptr) {
        // Read at this micro-batch size from the sizes measured, stretched
        // where the run's CPU ranks outnumber the machine's cores.
        const LayerTimesAtSize times = layer_times_at(*options.profile, *measured, mb);
        const double seconds_per_ms = profile_core_sharing(*options.profile, project) * 1e-3;
        c.forward_s = times.forward_ms * seconds_per_ms;
        c.backward_input_s = times.backward_input_ms * seconds_per_ms;
        c.backward_weight_s = times.backward_weight_ms * seconds_per_ms;
        c.backward_full_s = times.backward_ms.value_or(0) * seconds_per_ms;
        // Activations do grow in proportion to the samples.
        const double scale = mb / options.profile->microbatch_size;
        // Weights do not grow with the micro-batch: no scaling.
        if (measured->optimizer_ms) {
            c.optimizer_s = *measured->optimizer_ms * seconds_per_ms;
        }
        if (measured->activation_bytes) {
            const double ratio = c.stash_bytes > 0 ? c.weight_stash_bytes / c.stash_bytes : 0;
            c.stash_bytes = static_cast<double>(*measured->activation_bytes) * scale;
            c.weight_stash_bytes = c.stash_bytes * ratio;
        }
        c.source = LayerCost::Source::profile;
    }
    if (spec.cost) {
        // An override of either backward part replaces the measured whole.
        if (spec.cost->backward_input_ms || spec.cost->backward_weight_ms) {
            c.backward_full_s = 0;
        }
        if (spec.cost->forward_ms) {
            c.forward_s = *spec.cost->forward_ms * 1e-3;
        }
        if (spec.cost->backward_input_ms) {
            c.backward_input_s = *spec.cost->backward_input_ms * 1e-3;
        }
        if (spec.cost->backward_weight_ms) {
            c.backward_weight_s = *spec.cost->backward_weight_ms * 1e-3;
        }
        c.source = LayerCost::Source::override_;
    }
    if (spec.activation_bytes) {
        const double ratio = c.stash_bytes > 0 ? c.weight_stash_bytes / c.stash_bytes : 0;
        c.stash_bytes = static_cast<double>(*spec.activation_bytes);
        c.weight_stash_bytes = c.stash_bytes * ratio;
    }
    const double tokens = token_share(project);
    if (tokens < 1) {
        // Each rank of a context-parallel group runs its share of every
        // sequence. The kernels were lowered for it already; measured and
        // given times are the whole sequence's.
        if (c.source != LayerCost::Source::analytic || options.flat_efficiency) {
            c.forward_s *= tokens;
            c.backward_input_s *= tokens;
            c.backward_weight_s *= tokens;
            c.backward_full_s *= tokens;
        }
        c.stash_bytes *= tokens;
        c.weight_stash_bytes *= tokens;
        c.output_bytes *= tokens;
        for (const Kernel& k : kernels().forward) {
            c.attention_forward_s +=
                k.attention() ? kernel_time(k, device, training.dtype).seconds : 0.0;
        }
        for (const Kernel& k : kernels().backward_input) {
            c.attention_backward_s +=
                k.attention() ? kernel_time(k, device, training.dtype).seconds : 0.0;
        }
    }
    if (!project.tensor_shares.empty()) {
        // Each device of the group runs its share of the whole layer's work
        // (measured, given or estimated) and keeps its share of the stash.
        const TensorShare& share = project.tensor_shares.at(static_cast<std::size_t>(layer));
        // The kernels were already sliced; measured and given times are the
        // whole layer's.
        if (c.source != LayerCost::Source::analytic || options.flat_efficiency) {
            c.forward_s *= share.compute;
            c.backward_input_s *= share.compute;
            c.backward_weight_s *= share.compute;
            c.backward_full_s *= share.compute;
        }
        c.optimizer_s *= share.parameters;
        c.stash_bytes *= share.stash;
        c.weight_stash_bytes *= share.weight_stash;
    }
    if (training.recompute == Recompute::selective && analysis.recomputable_elements > 0) {
        recompute_attention_core(project, layer, device, kernels().forward, c);
    }
    return c;
}

namespace {

// The all-reduces of one micro-batch through `stage`'s tensor-parallel
// group (forward, backward), over the group's links, or over the profile's
// measured all-reduce link when it has one; and of the forward, the share of
// the layers `rebuilt` flags (one flag a layer of the stage; none when
// empty): what a partial recomputation runs again.
struct StageCollectives {
    double forward_s = 0;
    double backward_s = 0;
    double rebuilt_forward_s = 0;
};

StageCollectives tensor_collectives_s(const AnalyzedProject& project, const PipelineStage& stage,
                                      const CostModelOptions& options, const LinkResolver& links,
                                      const std::vector<bool>& rebuilt) {
    const auto& members = project.tensor_groups[0].at(static_cast<std::size_t>(stage.rank));
    const CollectiveGroup group = tensor_parallel_group(
        members, links, project.rank_specs.at(static_cast<std::size_t>(stage.rank)),
        options.profile != nullptr && options.profile->all_reduce
            ? &options.profile->all_reduce->link
            : nullptr);
    const double element_bytes = project.microbatch_size * token_share(project) *
                                 dtype_bytes(project.project.training.dtype);
    StageCollectives out;
    for (int l = stage.first_layer; l <= stage.last_layer; ++l) {
        const TensorCollectives c = tensor_collectives(
            project.tensor_shares.at(static_cast<std::size_t>(l)), element_bytes, group);
        out.forward_s += c.forward_s;
        out.backward_s += c.backward_s;
        if (!rebuilt.empty() && rebuilt[static_cast<std::size_t>(l - stage.first_layer)]) {
            out.rebuilt_forward_s += c.forward_s;
        }
    }
    return out;
}

// A mixture of experts' block as expert parallelism sees it: its routed
// experts on each device of the tensor-parallel group (0 when the layer
// has none), and the bytes of token copies each all-to-all moves.
struct ExpertLayer {
    double routed_parameters = 0;
    double dispatch_bytes = 0;
};

ExpertLayer expert_layer(const AnalyzedProject& project, int layer) {
    const LayerSpec& spec = project.project.model.layers.at(static_cast<std::size_t>(layer));
    // Checked first: reading a block's dimensions is not free, and the
    // planner prices many layouts.
    if (!has_experts(spec)) {
        return {};
    }
    const TransformerDims d = transformer_dims(spec);
    const TensorParallel& tp = project.project.tensor_parallel;
    const int t = project.tensor_shares.empty() ? 1 : tp.size;
    const double sequence = static_cast<double>(layer_input_shape(project, layer).front());
    const double tokens = project.microbatch_size * sequence * token_share(project) /
                          (t > 1 && tp.sequence_parallel ? t : 1);
    return {routed_expert_parameters_on(d, t),
            tokens * d.routed_rows() * d.hidden * dtype_bytes(project.project.training.dtype)};
}

// An expert- or context-parallel group of `stage`: its device in each of
// the first `size` replicas (Megatron-LM's groups are consecutive
// data-parallel ranks). Every stage exchanges inside its forward and
// backward, so the groups of all stages may cross a node's network at
// once: each gets its share of every link they cross together (an upper
// bound where the exchanges are a small part of the compute, and near the
// truth where they bound it, as under DualPipe).
CollectiveGroup replica_group(const AnalyzedProject& project, const PipelineStage& stage, int size,
                              const LinkResolver& links, std::optional<LinkSharing>& sharing) {
    if (!sharing) {
        std::vector<int> ranks(static_cast<std::size_t>(project.num_ranks()));
        std::iota(ranks.begin(), ranks.end(), 0);
        sharing.emplace(replica_groups(project, ranks, ReplicaGrouping::consecutive, size), links);
    }
    return replica_collective_group(project, stage.rank, ReplicaGrouping::consecutive, size, links,
                                    *sharing);
}

// The keys and values of one micro-batch that attention in `layer` holds
// on this rank (its tokens, its heads): 0 for a layer without attention.
double context_kv_bytes(const AnalyzedProject& project, int layer) {
    const LayerSpec& spec = project.project.model.layers.at(static_cast<std::size_t>(layer));
    if (spec.type != "transformer_block") {
        return 0;
    }
    const TransformerDims d = transformer_dims(spec);
    const int t = project.tensor_shares.empty() ? 1 : project.project.tensor_parallel.size;
    // MLA's attention reads every head's key and value, not the latent.
    const double width =
        d.latent() ? (d.query_width() + d.value_width()) / t : 2.0 * tensor_kv_width(d, t);
    const double sequence = static_cast<double>(layer_input_shape(project, layer).front());
    return project.microbatch_size * sequence * token_share(project) * width *
           dtype_bytes(project.project.training.dtype);
}

// The other ranks' keys and values one layer's attention holds beyond its
// own `kv_bytes`, forward and backward, one layer at a time. A ring holds
// the chunk in hand and the next in flight (backward: the next chunk and
// the dK and dV passed along with it); an all-gather the other C − 1
// chunks (backward: those again, and the whole sequence's dK and dV before
// their reduce-scatter).
std::pair<double, double> context_transient_bytes(const ContextParallel& cp, double kv_bytes) {
    if (cp.size <= 1 || kv_bytes <= 0) {
        return {0, 0};
    }
    const double c = cp.size;
    if (cp.exchange == ContextExchange::all_gather) {
        return {(c - 1) * kv_bytes, (2 * c - 1) * kv_bytes};
    }
    return {kv_bytes, 3 * kv_bytes};
}

struct ContextExchangeTime {
    double forward_s = 0;
    double backward_s = 0;
};

// What the exchange of `kv_bytes` (this rank's keys and values) costs a
// micro-batch beyond the attention it overlaps, through `group`. A ring of
// C ranks passes the chunks around in C − 1 steps, each beside the
// attention of the chunk in hand (the backward passes the gradients of
// keys and values too); an all-gather collects them before attention, and
// the backward gathers them again and reduce-scatters their gradients.
ContextExchangeTime context_exchange_time(ContextExchange exchange, double kv_bytes,
                                          const LayerCost& layer, const CollectiveGroup& group) {
    const double c = group.members;
    const double gathered = kv_bytes * c;
    const double gather_s = collective_time(CollectiveKind::all_gather, gathered, group).seconds;
    if (exchange == ContextExchange::all_gather) {
        return {
            gather_s,
            gather_s + collective_time(CollectiveKind::reduce_scatter, gathered, group).seconds};
    }
    const double overlapped = (c - 1) / c;  // the last chunk's attention has nothing to hide
    const double both_s = collective_time(CollectiveKind::all_gather, 2 * gathered, group).seconds;
    return {std::max(0.0, gather_s - layer.attention_forward_s * overlapped),
            std::max(0.0, both_s - layer.attention_backward_s * overlapped)};
}

}  // namespace

LossKernels project_loss_kernels(const AnalyzedProject& project, const CostModelOptions& options) {
    const auto& layers = project.project.model.layers;
    if (layers.empty() || options.flat_efficiency || layers.back().cost ||
        (options.profile != nullptr && options.profile->find(layers.back().name) != nullptr)) {
        return {};
    }
    const Training& training = project.project.training;
    // Under tensor parallelism with the head's output split over the
    // vocabulary, each member computes the loss over its 1/t of the logits.
    const double vocabulary_share =
        !project.tensor_shares.empty() &&
                project.tensor_shares.back().split == TensorSplit::vocabulary_output
            ? 1.0 / project.project.tensor_parallel.size
            : 1.0;
    const double elements = project.layers.back().output_elements * project.microbatch_size *
                            token_share(project) * vocabulary_share;
    const LossKind loss = project.project.model.loss;
    return {loss_kernels(loss, elements, training.dtype),
            loss_stash_bytes(loss, elements, training.dtype)};
}

std::vector<StageCost> stage_costs(const AnalyzedProject& project,
                                   const CostModelOptions& options) {
    const Training& training = project.project.training;
    const double element_bytes = dtype_bytes(training.dtype);
    const double mb = project.microbatch_size;
    std::vector<StageCost> out;
    out.reserve(project.stages.size());
    // Resolved once for every stage's tensor-parallel group.
    std::optional<LinkResolver> tensor_links;
    if (!project.tensor_shares.empty() && !project.tensor_groups.empty()) {
        tensor_links.emplace(project.project.topology);
    }
    const int ep = project.project.expert_parallel.size;
    std::optional<LinkResolver> group_links;
    std::optional<LinkSharing> expert_sharing;
    std::optional<LinkSharing> context_sharing;
    const ContextParallel& cp = project.project.context_parallel;
    if (ep > 1 || cp.size > 1) {
        group_links.emplace(project.project.topology);
    }
    for (const auto& stage : project.stages) {
        const DeviceSpec& device = project.rank_specs.at(static_cast<std::size_t>(stage.rank));
        StageCost s;
        bool measured_full = false;
        double full_s = 0;
        LayerCost c;
        ExpertLayer moe;
        std::optional<CollectiveGroup> experts;
        double all_to_all_s = 0;
        std::optional<CollectiveGroup> context;
        double kv_bytes = 0;
        ContextExchangeTime exchange;
        double largest_kv_bytes = 0;  // of one layer: what the exchange brings in at once
        // Full recomputation (core/recomputation_units.h): the inputs of
        // the stage's units after its first, and the largest stash one unit
        // rebuilds.
        double kept_inside = 0;
        double unit_stash = 0;
        double largest_unit_stash = 0;
        // Partial recomputation (training.recompute_blocks): what the units
        // it leaves alone keep, and the forward of those it rebuilds.
        const bool partial = training.full_recompute() && training.recompute_blocks.has_value();
        const std::vector<bool> rebuilt =
            partial ? rebuilt_layers(project.project.model.layers, stage.first_layer,
                                     stage.last_layer, training.recompute_blocks)
                    : std::vector<bool>{};
        double kept_stash = 0;
        double rebuilt_forward_s = 0;
        for (int l = stage.first_layer; l <= stage.last_layer; ++l) {
            const bool rebuilds =
                !partial || rebuilt[static_cast<std::size_t>(l - stage.first_layer)];
            // A run of identical blocks is priced once.
            if (l == stage.first_layer || !same_layer_cost(project, l - 1, l, options)) {
                c = layer_cost(project, l, device, options);
                moe = expert_layer(project, l);
                if (moe.routed_parameters > 0 && ep > 1) {
                    if (!experts) {
                        experts = replica_group(project, stage, ep, *group_links, expert_sharing);
                    }
                    all_to_all_s =
                        collective_time(CollectiveKind::all_to_all, moe.dispatch_bytes, *experts)
                            .seconds;
                } else {
                    all_to_all_s = 0;
                }
                kv_bytes = cp.size > 1 ? context_kv_bytes(project, l) : 0;
                if (kv_bytes > 0) {
                    if (!context) {
                        context =
                            replica_group(project, stage, cp.size, *group_links, context_sharing);
                    }
                    exchange = context_exchange_time(cp.exchange, kv_bytes, c, *context);
                } else {
                    exchange = {};
                }
            }
            s.forward_s += c.forward_s;
            s.backward_input_s += c.backward_input_s;
            s.backward_weight_s += c.backward_weight_s;
            // Layers without a measured whole backward count as I + W.
            measured_full = measured_full || c.backward_full_s > 0;
            full_s += c.backward_full_s > 0 ? c.backward_full_s
                                            : c.backward_input_s + c.backward_weight_s;
            const double whole =
                static_cast<double>(project.layers[static_cast<std::size_t>(l)].parameters);
            const double held =
                project.tensor_shares.empty()
                    ? whole
                    : whole * project.tensor_shares[static_cast<std::size_t>(l)].parameters;
            // Expert parallelism leaves 1/E of the routed experts here.
            const double elsewhere = moe.routed_parameters * (1 - 1.0 / ep);
            s.parameters += static_cast<std::int64_t>(std::llround(held - elsewhere));
            s.expert_parameters +=
                static_cast<std::int64_t>(std::llround(moe.routed_parameters / ep));
            s.optimizer_s += held > 0 ? c.optimizer_s * (held - elsewhere) / held : c.optimizer_s;
            // Dispatch and combine, forward; their gradients, backward.
            s.expert_forward_s += 2 * all_to_all_s;
            s.expert_backward_s += 2 * all_to_all_s;
            s.context_forward_s += exchange.forward_s;
            s.context_backward_s += exchange.backward_s;
            s.context_kv_bytes += kv_bytes;
            largest_kv_bytes = std::max(largest_kv_bytes, kv_bytes);
            if (l > stage.first_layer &&
                begins_recomputation_unit(project.project.model.layers, l)) {
                if (rebuilds) {
                    kept_inside += s.output_bytes * boundary_share(project, l - 1);
                }
                unit_stash = 0;
            }
            if (rebuilds) {
                unit_stash += c.stash_bytes;
                largest_unit_stash = std::max(largest_unit_stash, unit_stash);
                rebuilt_forward_s += c.forward_s + 2 * all_to_all_s + exchange.forward_s;
            } else {
                kept_stash += c.stash_bytes;
            }
            s.stash_bytes += c.stash_bytes;
            s.weight_stash_bytes += c.weight_stash_bytes;
            s.output_bytes = c.output_bytes;
        }
        if (stage_shares_tied_weight(project.tied, stage.first_layer, stage.last_layer)) {
            // The head (the stage's last layer, `c`, all weight) reuses the
            // embedding's tensor: no copy to hold or to step.
            const auto head = static_cast<std::size_t>(project.tied->head);
            s.parameters -= static_cast<std::int64_t>(std::llround(
                static_cast<double>(project.tied->parameters) *
                (project.tensor_shares.empty() ? 1.0 : project.tensor_shares[head].parameters)));
            s.optimizer_s -= c.optimizer_s;
        }
        const auto [transient_forward, transient_backward] =
            context_transient_bytes(cp, largest_kv_bytes);
        s.transient_forward_bytes = transient_forward;
        s.transient_backward_bytes = transient_backward;
        s.transient_backward_input_bytes = transient_backward;
        const StageCollectives tensor =
            tensor_links ? tensor_collectives_s(project, stage, options, *tensor_links, rebuilt)
                         : StageCollectives{};
        rebuilt_forward_s += tensor.rebuilt_forward_s;
        s.tensor_forward_s = tensor.forward_s;
        s.tensor_backward_s = tensor.backward_s;
        s.forward_s += tensor.forward_s + s.expert_forward_s + s.context_forward_s;
        const double backward_exchanges_s =
            tensor.backward_s + s.expert_backward_s + s.context_backward_s;
        s.backward_input_s += backward_exchanges_s;
        if (measured_full) {
            s.backward_full_s = full_s + backward_exchanges_s;
        }
        if (stage.first_layer > 0) {
            s.input_bytes =
                project.layers[static_cast<std::size_t>(stage.first_layer - 1)].output_elements *
                mb * element_bytes;
            s.input_share = boundary_share(project, stage.first_layer - 1);
        } else {
            s.input_bytes = static_cast<double>(numel(project.project.model.input.shape)) * mb *
                            dtype_bytes(project.project.model.input.dtype);
        }
        s.input_bytes *= token_share(project);
        if (static_cast<std::size_t>(stage.last_layer) + 1 < project.layers.size()) {
            s.output_share = boundary_share(project, stage.last_layer);
        }
        if (training.full_recompute()) {
            // Each unit of recomputation keeps only its input, as it crossed
            // the boundary or as its first layer takes it (under sequence
            // parallelism 1/t of the sequence, core/stage_boundary.h). A
            // whole backward recomputes the units one at a time, from the
            // last, each just before its own backward, so it holds one
            // unit's activations at once, as Pipewright's runs do. A split
            // backward recomputes the whole stage for I, and W needs its
            // graph.
            //
            // With training.recompute_blocks only the first blocks' units
            // are rebuilt, and the others keep what their backward needs, as
            // without recomputation; a split backward's I rebuilds those
            // units alone and W needs their graphs.
            const double again_s = partial ? rebuilt_forward_s : s.forward_s;
            const bool first_rebuilt = !partial || rebuilt.front();
            s.transient_backward_bytes += largest_unit_stash;
            s.transient_backward_input_bytes += s.stash_bytes - kept_stash;
            s.stash_bytes =
                (first_rebuilt ? s.input_bytes * s.input_share : 0) + kept_inside + kept_stash;
            s.recompute_s = again_s;
            s.backward_input_s += again_s;
            if (s.backward_full_s > 0) {
                s.backward_full_s += again_s;
            }
        }
        // After the recomputation: the loss's softmax is kept, not recomputed.
        if (static_cast<std::size_t>(stage.last_layer) + 1 == project.layers.size()) {
            const LossKernels loss = project_loss_kernels(project, options);
            const double backward_s =
                kernels_seconds(loss.kernels.backward_input, device, training.dtype);
            s.forward_s += kernels_seconds(loss.kernels.forward, device, training.dtype);
            s.backward_input_s += backward_s;
            if (s.backward_full_s > 0) {
                s.backward_full_s += backward_s;
            }
            s.stash_bytes += loss.stash_bytes;
        }
        check_stage_bytes(s, stage.index, project.microbatches);
        out.push_back(s);
    }
    return out;
}

}  // namespace pipewright
