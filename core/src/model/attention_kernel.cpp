#include "pipewright/core/attention_kernel.h"

namespace pipewright {

std::string_view to_string(AttentionKernel k) {
    switch (k) {
        case AttentionKernel::flash2:
            return "flash2";
        case AttentionKernel::cudnn:
            return "cudnn";
        case AttentionKernel::flash3:
            return "flash3";
    }
    return "flash2";
}

std::optional<AttentionKernel> parse_attention_kernel(std::string_view s) {
    for (AttentionKernel k :
         {AttentionKernel::flash2, AttentionKernel::cudnn, AttentionKernel::flash3}) {
        if (s == to_string(k)) {
            return k;
        }
    }
    return std::nullopt;
}

std::string_view display_name(AttentionKernel k) {
    switch (k) {
        case AttentionKernel::flash2:
            return "FlashAttention-2";
        case AttentionKernel::cudnn:
            return "cuDNN fused attention";
        case AttentionKernel::flash3:
            return "FlashAttention-3";
    }
    return "FlashAttention-2";
}

}  // namespace pipewright
