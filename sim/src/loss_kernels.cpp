// The loss's kernels (layer_kernels.h): what a framework runs after the last
// layer, which no layer of the model counts.
#include "pipewright/sim/layer_kernels.h"

namespace pipewright {
namespace {

constexpr double kFloat32 = 4;

Kernel pass(std::string_view name, double bytes) {
    Kernel k;
    k.name = name;
    k.kind = KernelKind::memory;
    k.bytes = bytes;
    return k;
}

}  // namespace

LayerKernels loss_kernels(LossKind loss, double elements, DType dtype) {
    LayerKernels out;
    if (elements <= 0) {
        return out;
    }
    const double e = dtype_bytes(dtype);
    const double n = elements;
    if (loss == LossKind::mse) {
        out.forward.push_back(pass("mse loss", 2 * e * n));  // output and target read
        out.backward_input.push_back(
            pass("mse gradient", 3 * e * n));  // both read, gradient written
        return out;
    }
    // Megatron-LM's (vocabulary-parallel) cross-entropy works in float32.
    if (e != kFloat32) {
        out.forward.push_back(pass("logits to float32", (e + kFloat32) * n));
    }
    out.forward.push_back(pass("softmax max", kFloat32 * n));
    out.forward.push_back(pass("softmax subtract max", 2 * kFloat32 * n));
    out.forward.push_back(pass("softmax exp", 2 * kFloat32 * n));
    out.forward.push_back(pass("softmax sum", kFloat32 * n));
    out.forward.push_back(pass("softmax normalise", 2 * kFloat32 * n));
    out.backward_input.push_back(pass("cross-entropy gradient", 2 * kFloat32 * n));
    if (e != kFloat32) {
        out.backward_input.push_back(pass("logits gradient from float32", (kFloat32 + e) * n));
    }
    return out;
}

double loss_stash_bytes(LossKind loss, double elements, DType dtype) {
    return loss == LossKind::mse ? dtype_bytes(dtype) * elements : kFloat32 * elements;
}

}  // namespace pipewright
