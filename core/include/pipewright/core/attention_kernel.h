#pragma once

// Which fused attention kernel a project's flash-attention blocks run
// (training.attention_kernel). On one GPU the implementations differ by up
// to 1.8 × (FlashAttention-2 reaches a third of an H100's peak,
// FlashAttention-3 three fifths), so the device catalog gives each its own
// measured rate (DeviceSpec::attention_efficiency, docs/simulator.md).

#include <optional>
#include <string_view>

namespace pipewright {

enum class AttentionKernel {
    flash2,  // FlashAttention-2: flash-attn 2.x, PyTorch SDPA's flash backend
    cudnn,   // cuDNN's fused attention: TransformerEngine's default on Hopper
    flash3,  // FlashAttention-3 (Hopper only)
};

// "flash2", "cudnn", "flash3": how a project file names it.
[[nodiscard]] std::string_view to_string(AttentionKernel k);
[[nodiscard]] std::optional<AttentionKernel> parse_attention_kernel(std::string_view s);
// "FlashAttention-2", "cuDNN fused attention", "FlashAttention-3".
[[nodiscard]] std::string_view display_name(AttentionKernel k);

// The fractions of a device's dense 16-bit peak an attention kernel reaches
// (head dimension 128, long causal sequences), forward and backward, as the
// FlashAttention papers count their FLOPs (the backward's 2.5 × the
// forward's, the recomputed scores included).
struct AttentionEfficiency {
    double forward = 0;
    double backward = 0;

    bool operator==(const AttentionEfficiency&) const = default;
};

}  // namespace pipewright
