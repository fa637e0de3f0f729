#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "pipewright/core/attention_kernel.h"
#include "pipewright/core/tensor.h"

namespace pipewright {

enum class OptimizerKind { sgd, adam, adamw };

[[nodiscard]] std::string_view to_string(OptimizerKind k);
[[nodiscard]] std::optional<OptimizerKind> parse_optimizer(std::string_view s);

struct OptimizerConfig {
    OptimizerKind type = OptimizerKind::sgd;
    double lr = 0.001;
    double momentum = 0;
    double weight_decay = 0;

    // Optimizer state per parameter, in bytes (fp32 state).
    [[nodiscard]] int state_bytes_per_param() const;

    bool operator==(const OptimizerConfig&) const = default;
};

// Either a generator by name ("1f1b") or a CSV file of actions per rank.
struct ScheduleChoice {
    std::string name = "gpipe";
    std::string csv_path;  // when set, the schedule comes from this file

    [[nodiscard]] bool from_csv() const { return !csv_path.empty(); }
    bool operator==(const ScheduleChoice&) const = default;
};

// What the backward recomputes instead of keeping from the forward
// (training.activation_checkpointing).
enum class Recompute {
    none,       // everything is kept (false)
    selective,  // the attention core's scores (Korthikanti et al. 2022): "selective"
    full,       // only each stage's input per micro-batch (true, "full")
};

[[nodiscard]] std::string_view to_string(Recompute r);

// How each micro-batch's weight gradients join the iteration's accumulated
// gradient (training.gradient_accumulation).
enum class GradientAccumulation {
    // The weight-gradient GEMM accumulates into it in place, with no kernel
    // of its own: Megatron-LM's gradient_accumulation_fusion, Pipewright's
    // own runs ("fused").
    fused,
    // A kernel of its own adds each micro-batch's gradient, reading it and
    // the sum and writing the sum, in the training dtype: PyTorch's
    // AccumulateGrad, Megatron-LM's data-parallel hook of 2021 ("add").
    add,
};

[[nodiscard]] std::string_view to_string(GradientAccumulation g);

struct Training {
    int batch_size = 1;
    // Exactly one of the two is normally given; microbatches wins if both are.
    std::optional<int> microbatches;
    std::optional<int> microbatch_size;  // the seeds' "split_size"
    ScheduleChoice schedule;
    OptimizerConfig optimizer;
    int steps = 10;
    DType dtype = DType::float32;  // compute precision
    // FP8 training ("dtype": "float8" in a project): the GEMMs of the
    // blocks' linear layers run on FP8 tensor cores, as TransformerEngine's
    // recipe runs them; everything else (attention, the head, weights,
    // activations, gradients, communication) stays in `dtype`, bfloat16.
    bool float8 = false;
    // Full: keep only each stage's input per micro-batch and recompute the
    // rest during backward (one more forward per backward). Selective:
    // recompute only the attention core, whose scores grow with the square
    // of the sequence.
    Recompute recompute = Recompute::none;
    // With full recomputation, how many blocks at the start of each stage
    // (each model chunk) recompute their forward; the stage's other layers
    // keep their activations (training.recompute_blocks: Megatron-LM's
    // --recompute-method block --recompute-num-layers). Unset: every unit.
    std::optional<int> recompute_blocks;
    GradientAccumulation gradient_accumulation = GradientAccumulation::fused;
    // The precision the gradients are accumulated, held and reduced in
    // (training.gradient_dtype): unset, the compute dtype; float32 under
    // 16-bit training is what Megatron-LM (its fp32 main gradients),
    // DeepSpeed's BF16 optimizer and torchtitan's fp32 reduction keep.
    std::optional<DType> gradient_dtype;
    // The fused kernel the blocks with flash_attention run
    // (training.attention_kernel); the unfused attention ignores it.
    AttentionKernel attention_kernel = AttentionKernel::flash2;
    int seed = 0;

    [[nodiscard]] bool full_recompute() const { return recompute == Recompute::full; }
    [[nodiscard]] DType gradients() const { return gradient_dtype.value_or(dtype); }
    // How a project file names the precision: "float8", or dtype's name.
    [[nodiscard]] std::string_view precision_name() const;
    // Number of micro-batches implied by the settings (1 if neither is set).
    [[nodiscard]] int resolved_microbatches() const;

    bool operator==(const Training&) const = default;
};

// Micro-batches for a new project of `stages` stages: the largest divisor
// of the batch from the stages to twice them (enough to keep a pipeline
// busy), or 1.
[[nodiscard]] int default_microbatches(int batch, int stages);

}  // namespace pipewright
