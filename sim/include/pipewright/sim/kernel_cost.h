#pragma once

// Prices one kernel on one device (docs/simulator.md, "Kernels"):
// - a GEMM runs its padded tiles in waves over the device's SMs, each SM at
//   its share of the measured large-GEMM rate, the tile's rate limited by
//   how much it reuses what it loads (its arithmetic intensity against the
//   L2 bandwidth); the fastest tiling and split of K is taken, as cuBLAS's
//   heuristics aim to; and never faster than its bytes over the memory
//   bandwidth (a roofline);
// - a flash-attention kernel likewise, over blocks of 128 queries per head,
//   at the rate its implementation measurably reaches on the device;
// - a memory-bound kernel costs its bytes over the achievable bandwidth;
// - every kernel pays the device's launch overhead.

#include <vector>

#include "pipewright/core/device_catalog.h"
#include "pipewright/sim/layer_kernels.h"

namespace pipewright {

// How a GEMM was tiled: `tiles` output tiles of tile_m × tile_n (times the
// K split) in `waves` rounds over the SMs; `utilization` is the share of the
// SMs' work that is not padding or an idle tail.
struct GemmTiling {
    int tile_m = 0;
    int tile_n = 0;
    int split_k = 1;
    double tiles = 0;
    double waves = 0;
    double utilization = 1;
};

struct KernelTime {
    double seconds = 0;    // what the kernel costs, launch included
    double compute_s = 0;  // at the device's rate for its kind
    double memory_s = 0;   // its bytes over the achievable bandwidth
    GemmTiling tiling;     // GEMMs and attention on a device with a known SM count

    [[nodiscard]] bool memory_bound() const { return memory_s > compute_s; }
};

[[nodiscard]] KernelTime kernel_time(const Kernel& kernel, const DeviceSpec& device, DType dtype);
// The sum over `kernels`.
[[nodiscard]] double kernels_seconds(const std::vector<Kernel>& kernels, const DeviceSpec& device,
                                     DType dtype);

}  // namespace pipewright
