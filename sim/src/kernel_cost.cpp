#include "pipewright/sim/kernel_cost.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace pipewright {

namespace {

struct Tile {
    int m;
    int n;
};
// The CTA tiles of cuBLAS's and CUTLASS's tensor-core kernels.
constexpr std::array<Tile, 6> kTiles{
    {{256, 128}, {128, 256}, {128, 128}, {128, 64}, {64, 128}, {64, 64}}};
constexpr std::array<int, 5> kSplits{1, 2, 4, 8, 16};
// A K split leaves each part at least this deep a main loop.
constexpr double kMinSplitDepth = 256;
// Flash attention's blocks of queries, one per CTA (FlashAttention-2).
constexpr double kQueryBlock = 128;

double memory_rate(const DeviceSpec& d) {
    return d.memory_bandwidth_GBps * 1e9 * d.memory_efficiency;
}

// The rate a tile of tm × tn reaches of the SM's matmul rate: each step of
// K loads (tm + tn) elements from L2 for 2·tm·tn FLOPs. With the TMA's
// multicast, a cluster of two SMs loads the longer side's tile once for
// both (the kernel orients its cluster to share the larger operand).
double tile_efficiency(const Tile& t, double element_bytes, double per_sm_flops,
                       const DeviceSpec& d) {
    if (d.l2_bandwidth_GBps <= 0 || d.sm_count <= 0) {
        return 1;
    }
    const double loaded = t.m + t.n - (d.tma_multicast ? std::max(t.m, t.n) / 2.0 : 0.0);
    const double intensity = 2.0 * t.m * t.n / (loaded * element_bytes);  // FLOP per byte
    const double per_sm_l2 = d.l2_bandwidth_GBps * 1e9 / d.sm_count;
    return std::min(1.0, intensity * per_sm_l2 / per_sm_flops);
}

// Seconds for the GEMM's FLOPs on the matrix units, and how it tiles.
std::pair<double, GemmTiling> gemm_compute(const Kernel& k, const DeviceSpec& d, double rate,
                                           double element_bytes) {
    const double sms = d.sm_count;
    if (sms <= 0 || k.m <= 0 || k.n <= 0 || k.k <= 0) {
        return {k.work_flops() / rate, GemmTiling{}};
    }
    const double per_sm = rate / sms;
    double best = std::numeric_limits<double>::infinity();
    GemmTiling plan;
    for (const Tile& tile : kTiles) {
        const double efficiency = tile_efficiency(tile, element_bytes, per_sm, d);
        const double grid = k.batch * std::ceil(k.m / tile.m) * std::ceil(k.n / tile.n);
        for (int split : kSplits) {
            if (split > 1 && k.k / split < kMinSplitDepth) {
                break;
            }
            const double tiles = grid * split;
            const double waves = std::ceil(tiles / sms);
            double seconds = waves * 2.0 * tile.m * tile.n * (k.k / split) / (per_sm * efficiency);
            if (split > 1) {
                // The partial products are written in fp32 and summed.
                seconds += k.batch * k.m * k.n * (4.0 * 2 * split + element_bytes) /
                           std::max(memory_rate(d), 1.0);
            }
            if (seconds < best) {
                best = seconds;
                plan = {
                    tile.m,
                    tile.n,
                    split,
                    tiles,
                    waves,
                    2 * k.batch * k.m * k.n * k.k / (waves * sms * 2.0 * tile.m * tile.n * (k.k / split))};
            }
        }
    }
    return {best, plan};
}

// A flash kernel: one CTA per block of queries of each head.
std::pair<double, GemmTiling> attention_compute(const Kernel& k, const DeviceSpec& d, double rate) {
    const double sms = d.sm_count;
    if (sms <= 0 || k.m <= 0) {
        return {k.work_flops() / rate, GemmTiling{}};
    }
    const double blocks = k.batch * std::ceil(k.m / kQueryBlock);
    const double waves = std::ceil(blocks / sms);
    // Causal blocks differ in length; the waves are counted as if equal.
    const double per_block = k.work_flops() / blocks;
    GemmTiling plan{static_cast<int>(kQueryBlock), 0, 1, blocks, waves, blocks / (waves * sms)};
    return {waves * per_block / (rate / sms), plan};
}

}  // namespace

KernelTime kernel_time(const Kernel& k, const DeviceSpec& d, DType dtype) {
    KernelTime t;
    if (k.kind == KernelKind::memory && k.fp8 && d.fp8_flops <= 0) {
        return t;  // no FP8 GEMMs here: nothing is quantized
    }
    const double element_bytes = dtype_bytes(dtype);
    const double bandwidth = memory_rate(d);
    const double bytes = k.bytes + (k.fp8 && d.fp8_transposed_copies ? k.fp8_transpose_bytes : 0);
    t.memory_s = bandwidth > 0 ? bytes / bandwidth : 0;
    switch (k.kind) {
        case KernelKind::gemm: {
            // FP8 operands: twice the bf16 rate on the same tensor cores,
            // reaching the same fraction of it (docs/simulator.md), and half
            // the bytes to feed each tile.
            const bool fp8 = k.fp8 && d.fp8_flops > 0;
            const double rate =
                (fp8 ? d.fp8_flops : d.matmul_flops_for(dtype, k.tf32)) * d.matmul_efficiency;
            if (rate > 0) {
                std::tie(t.compute_s, t.tiling) = gemm_compute(k, d, rate, fp8 ? 1 : element_bytes);
            }
            break;
        }
        case KernelKind::attention:
        case KernelKind::attention_backward: {
            // A kernel without a rate here is refused by the project's
            // analysis; priced as FlashAttention-2 should one come through.
            auto efficiency = d.attention_rate(k.implementation);
            if (!efficiency) {
                efficiency = d.attention_rate(AttentionKernel::flash2);
            }
            const double share = k.kind == KernelKind::attention_backward ? efficiency->backward
                                                                          : efficiency->forward;
            const double rate = d.matmul_flops_for(dtype, false) * share;
            if (rate > 0) {
                std::tie(t.compute_s, t.tiling) = attention_compute(k, d, rate);
            }
            break;
        }
        case KernelKind::memory: {
            // Element-wise arithmetic runs on the plain FP32 units.
            const double rate = d.flops_for(DType::float32);
            t.compute_s = rate > 0 ? k.work_flops() / rate : 0;
            break;
        }
    }
    const bool work = k.work_flops() > 0 || k.bytes > 0;
    // A GEMM's fixed cost is the smallest GEMM's measured time where the
    // catalog has it (docs/simulator.md), more than an empty kernel's launch.
    const double overhead = k.kind == KernelKind::gemm ? d.gemm_fixed_s() : d.kernel_overhead_s;
    t.seconds = work ? std::max(t.compute_s, t.memory_s) + overhead : 0;
    // CPU ranks that take turns on the cores each wait out the others'.
    if (d.core_sharing > 1) {
        t.seconds *= d.core_sharing;
        t.compute_s *= d.core_sharing;
        t.memory_s *= d.core_sharing;
    }
    // A calibrated device's GEMMs cost what its measured ones did at their
    // shape. Its grid is of single GEMMs: batched ones (the unfused
    // attention's) and TF32 convolutions keep the model's price.
    if (k.kind == KernelKind::gemm && d.gemm_correction && d.gemm_correction->dtype == dtype &&
        k.batch == 1 && !k.tf32 && !k.fp8 && work) {
        const double ratio = d.gemm_correction->ratio(k.m, k.n, k.k);
        t.seconds *= ratio;
        t.compute_s *= ratio;
        t.memory_s *= ratio;
    }
    return t;
}

double kernels_seconds(const std::vector<Kernel>& kernels, const DeviceSpec& device, DType dtype) {
    double s = 0;
    for (const Kernel& k : kernels) {
        s += kernel_time(k, device, dtype).seconds;
    }
    return s;
}

}  // namespace pipewright
