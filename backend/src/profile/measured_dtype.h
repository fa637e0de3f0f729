#pragma once
// The Torch dtype `calibrate` measures its kernels and collectives in. Unlike
// a run's (layers/modules.h: torch_dtype), float16 is measured too: a
// calibration describes the device, not a training run on it.
#include <torch/torch.h>

#include "pipewright/core/tensor.h"

namespace pipewright::backend {

inline torch::ScalarType measured_scalar_type(DType dtype) {
    switch (dtype) {
        case DType::float16:
            return torch::kFloat16;
        case DType::bfloat16:
            return torch::kBFloat16;
        default:
            return torch::kFloat32;
    }
}

}  // namespace pipewright::backend
