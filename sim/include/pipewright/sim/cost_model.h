#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "pipewright/core/analysis.h"
#include "pipewright/core/profile.h"
#include "pipewright/sim/layer_kernels.h"

namespace pipewright {

struct CostModelOptions {
    // Set: the flat model instead of the kernels, every layer's FLOPs at this
    // fraction of peak plus one launch per part (--efficiency).
    std::optional<double> flat_efficiency;
    const Profile* profile = nullptr;  // measured costs, when given
};

// Cost of one layer for one micro-batch on one device.
struct LayerCost {
    double forward_s = 0;
    double backward_input_s = 0;
    double backward_weight_s = 0;
    double backward_full_s = 0;     // whole backward (B) measured as one pass; 0: I + W
    double optimizer_s = 0;         // per iteration: the optimizer's step over its parameters
    double stash_bytes = 0;         // held from its forward until its backward
    double weight_stash_bytes = 0;  // of which held after I until W
    double output_bytes = 0;
    // Of the times above, attention between queries and keys (forward, and
    // in the input gradient): what a ring of context-parallel ranks hides
    // its key/value exchange behind. 0 unless context-parallel.
    double attention_forward_s = 0;
    double attention_backward_s = 0;
    enum class Source { analytic, override_, profile } source = Source::analytic;
};

// What one stage costs for one micro-batch.
struct StageCost {
    double forward_s = 0;
    double backward_input_s = 0;
    double backward_weight_s = 0;
    // The whole backward (B) when it was measured as one pass; 0: I + W.
    double backward_full_s = 0;
    // Full recomputation: the forward the backward runs again first (the
    // whole stage's, or with training.recompute_blocks its first blocks'),
    // included in backward_input_s (and backward_full_s).
    double recompute_s = 0;
    // Once per iteration after the last action: the optimizer step over the
    // stage's parameters (measured, or its bytes over the memory bandwidth).
    double optimizer_s = 0;
    // ZeRO-1/2: after its optimizer step each replica holds only its shard
    // of the updated weights; all-gathering them takes this long.
    double step_gather_s = 0;
    // What crosses the stage's boundaries per micro-batch: the activation
    // sent to the next stage and the gradient sent back to the previous one,
    // as links carry them for a tensor-parallel group (the whole tensor:
    // under sequence parallelism the t members' slices together, and
    // without it one copy, as Megatron-LM of 2021 scattered it over the
    // members' network ports and gathered it over NVLink).
    double output_bytes = 0;
    double input_bytes = 0;
    // The share of each that one member sends or receives
    // (core/stage_boundary.h): 1/t under sequence parallelism, else 1.
    double output_share = 1;
    double input_share = 1;
    double stash_bytes = 0;
    double weight_stash_bytes = 0;
    // ZeRO-3: the weights UNSHARD gathers from the other replicas, held
    // until RESHARD.
    double gathered_bytes = 0;
    // ZeRO-2 and 3: the gradients beyond the replica's shard, held from the
    // end of the stage's first weight gradient of the iteration (B, or W),
    // as the first micro-batch's activations go, until its reduction ends
    // (stage_unsharded_gradient_bytes).
    double unsharded_gradient_bytes = 0;
    std::int64_t parameters = 0;  // on each device of its tensor-parallel group
    // Of `parameters`, the routed experts' share this device holds under
    // expert parallelism: their gradients average over the replicas that
    // hold the same experts.
    std::int64_t expert_parameters = 0;
    // Tensor parallelism: the group's all-reduces in one micro-batch's
    // forward and backward, included in forward_s and backward_input_s.
    double tensor_forward_s = 0;
    double tensor_backward_s = 0;
    // Expert parallelism: the all-to-alls that dispatch the tokens to their
    // experts and combine them again, in one micro-batch's forward and
    // backward, included in forward_s and backward_input_s.
    double expert_forward_s = 0;
    double expert_backward_s = 0;
    // Context parallelism: the exchange of attention's keys and values
    // between the ranks that share each sequence, what of it the attention
    // does not hide in one micro-batch's forward and backward (included in
    // forward_s and backward_input_s), and the bytes of keys and values this
    // rank holds for one micro-batch (what each exchange step moves).
    double context_forward_s = 0;
    double context_backward_s = 0;
    double context_kv_bytes = 0;
    // Held only while a forward or a backward runs, on top of what it
    // stashes: the other ranks' keys and values (and in the backward their
    // gradients) that context parallelism's exchange brings in for the
    // layer in hand.
    double transient_forward_bytes = 0;
    double transient_backward_bytes = 0;
    // The same for the input-gradient pass of a split backward (I). Under
    // full recomputation a whole backward (B) recomputes one layer at a time
    // and holds one layer's activations, but I recomputes the whole stage,
    // whose graph W needs later.
    double transient_backward_input_bytes = 0;

    [[nodiscard]] double backward_s() const {
        return backward_full_s > 0 ? backward_full_s : backward_input_s + backward_weight_s;
    }
};

[[nodiscard]] LayerCost layer_cost(const AnalyzedProject& project, int layer,
                                   const DeviceSpec& device, const CostModelOptions& options);
// Whether layers `a` and `b` cost the same on any device (so that a run of
// identical blocks is priced once): the same type, hyper-parameters, input,
// tensor-parallel split and activation override, and no cost of their own
// (given, or measured in the options' profile).
[[nodiscard]] bool same_layer_cost(const AnalyzedProject& project, int a, int b,
                                   const CostModelOptions& options);
// The kernels `layer` launches for one micro-batch on one device of its
// tensor-parallel group, as the analytic cost prices them.
[[nodiscard]] LayerKernels project_layer_kernels(const AnalyzedProject& project, int layer);
// The loss's kernels after the model's last layer for one micro-batch on one
// device (layer_kernels.h: loss_kernels), run by the stage that holds that
// layer: over 1/t of the logits when a tensor-parallel group of t keeps the
// head's output split over the vocabulary (TensorSplit::vocabulary_output;
// the loss's all-reduces are that layer's forward reductions); none when the last layer is not
// priced by its kernels (measured in the options' profile, given its own cost, or the flat model),
// whose times stand for what was measured or given. `stash_bytes`: what the loss keeps from its
// forward to its backward.
struct LossKernels {
    LayerKernels kernels;
    double stash_bytes = 0;
};
[[nodiscard]] LossKernels project_loss_kernels(const AnalyzedProject& project,
                                               const CostModelOptions& options);
[[nodiscard]] std::vector<StageCost> stage_costs(const AnalyzedProject& project,
                                                 const CostModelOptions& options);

}  // namespace pipewright
