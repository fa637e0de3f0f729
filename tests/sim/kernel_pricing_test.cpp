// Each kernel priced from the device, as docs/simulator.md says: a
// memory-bound kernel's bytes, a GEMM's roofline, its waves of tiles, its
// split depth, and the L2 bandwidth that feeds its tiles.
#include <gtest/gtest.h>

#include <algorithm>

#include "pipewright/core/device_catalog.h"
#include "pipewright/sim/kernel_cost.h"

namespace pipewright {
namespace {

// A device without measured figures' surprises: 100 SMs, no L2 limit.
DeviceSpec plain_gpu() {
    DeviceSpec d;
    d.name = "G";
    d.kind = "gpu";
    d.peak_flops[DType::float32] = 10e12;
    d.peak_flops[DType::bfloat16] = 100e12;
    d.memory_bandwidth_GBps = 1000;
    d.memory_efficiency = 0.8;
    d.matmul_efficiency = 0.8;
    d.kernel_overhead_s = 3e-6;
    d.sm_count = 100;
    return d;
}

Kernel gemm(double m, double n, double k) {
    return gemm_kernel("gemm", 1, m, n, k, 2);
}

TEST(KernelCost, AMemoryBoundKernelCostsItsBytesOverTheAchievableBandwidth) {
    const DeviceSpec d = plain_gpu();
    Kernel k;
    k.name = "layernorm";
    k.kind = KernelKind::memory;
    k.bytes = 800e6;
    const KernelTime t = kernel_time(k, d, DType::bfloat16);
    EXPECT_NEAR(t.seconds, 800e6 / (1000e9 * 0.8) + 3e-6, 1e-12);
    EXPECT_TRUE(t.memory_bound());
    // Nothing to do launches nothing.
    EXPECT_EQ(kernel_time(Kernel{}, d, DType::bfloat16).seconds, 0);
}

// Where the catalog measured the smallest GEMM's time, every GEMM pays it
// as its fixed cost in place of an empty kernel's launch; other kernels
// keep the launch.
TEST(KernelCost, AGemmPaysTheSmallestMeasuredGemmsTimeWhereTheCatalogHasIt) {
    DeviceSpec d = plain_gpu();
    const Kernel tiny = gemm(256, 256, 256);
    Kernel norm;
    norm.name = "layernorm";
    norm.kind = KernelKind::memory;
    norm.bytes = 1e6;
    const double gemm_before = kernel_time(tiny, d, DType::bfloat16).seconds;
    const double norm_before = kernel_time(norm, d, DType::bfloat16).seconds;
    d.gemm_overhead_s = 5e-6;
    EXPECT_NEAR(kernel_time(tiny, d, DType::bfloat16).seconds - gemm_before, 2e-6, 1e-15);
    EXPECT_DOUBLE_EQ(kernel_time(norm, d, DType::bfloat16).seconds, norm_before);
    // A GEMM with nothing to do still launches nothing.
    Kernel empty = tiny;
    empty.flops = 0;
    empty.executed_flops = 0;
    empty.bytes = 0;
    EXPECT_EQ(kernel_time(empty, d, DType::bfloat16).seconds, 0);
}

// The roofline: a large square GEMM runs at the measured large-GEMM rate;
// one with a depth of 16 is limited by its bytes instead.
TEST(KernelCost, AGemmRunsAtTheMatmulRateOrItsBytesWhicheverIsSlower) {
    const DeviceSpec d = plain_gpu();
    const Kernel big = gemm(12800, 12800, 8192);  // 100 × 100 tiles of 128: 100 full waves
    const KernelTime t = kernel_time(big, d, DType::bfloat16);
    EXPECT_NEAR(t.compute_s, big.flops / (100e12 * 0.8), 1e-9 * t.compute_s);
    EXPECT_FALSE(t.memory_bound());
    EXPECT_NEAR(t.tiling.utilization, 1.0, 1e-12);

    const Kernel thin = gemm(12800, 12800, 16);
    const KernelTime u = kernel_time(thin, d, DType::bfloat16);
    EXPECT_TRUE(u.memory_bound());
    EXPECT_NEAR(u.seconds, thin.bytes / (1000e9 * 0.8) + 3e-6, 1e-12);
    // float32 matmuls run on the FP32 units; float32 convolutions on TF32.
    DeviceSpec tf = d;
    tf.tf32_flops = 50e12;
    Kernel conv = big;
    EXPECT_NEAR(kernel_time(conv, tf, DType::float32).compute_s, big.flops / (10e12 * 0.8),
                1e-9 * big.flops / 8e12);
    conv.tf32 = true;
    EXPECT_NEAR(kernel_time(conv, tf, DType::float32).compute_s, big.flops / (50e12 * 0.8),
                1e-9 * big.flops / 40e12);
}

// One more row than fills the SMs' last wave costs a step, not a sliver:
// 100 tiles of 128 × 128 fill one wave; 101 rows of tiles need a second
// wave of some tiling (the best is 64 × 64: 5 quarter-size waves).
TEST(KernelCost, WaveQuantizationMakesTimeAStepFunctionOfTheShape) {
    const DeviceSpec d = plain_gpu();
    const double full = kernel_time(gemm(12800, 128, 4096), d, DType::bfloat16).compute_s;
    const double over = kernel_time(gemm(12801, 128, 4096), d, DType::bfloat16).compute_s;
    const double step_end = kernel_time(gemm(12800 + 64, 128, 4096), d, DType::bfloat16).compute_s;
    EXPECT_NEAR(over / full, 1.25, 1e-9);
    EXPECT_DOUBLE_EQ(step_end, over);  // flat across the step
    // Half the rows: smaller tiles fill the SMs again, in half the time.
    const KernelTime half = kernel_time(gemm(6400, 128, 4096), d, DType::bfloat16);
    EXPECT_NEAR(half.compute_s, full / 2, 1e-12 * full);
    EXPECT_NEAR(half.tiling.utilization, 1, 1e-9);
    // One tile's work cannot spread: one SM of 100 computes.
    const KernelTime lone = kernel_time(gemm(64, 64, 256), d, DType::bfloat16);
    EXPECT_NEAR(lone.tiling.utilization, 0.01, 1e-12);
}

// A shallow-K, small-output GEMM (a weight gradient of a thin layer) splits K
// to fill the device, paying for the partial sums.
TEST(KernelCost, ASmallWeightGradientSplitsItsDepth) {
    const DeviceSpec d = plain_gpu();
    const KernelTime t = kernel_time(gemm(256, 256, 65536), d, DType::bfloat16);
    EXPECT_GT(t.tiling.split_k, 1);
    const double unsplit_waves_s = 2.0 * 64 * 64 * 65536 / (100e12 * 0.8 / 100);
    EXPECT_LT(t.compute_s, unsplit_waves_s);
}

// The L2 limit: a 64 × 64 tile loads too much per FLOP to keep an A100's
// SM busy (each K step: 2·64·64 FLOPs for 128 bf16 elements from L2), so
// the shape that 64 × 64 tiles would fill best pays for it.
TEST(KernelCost, SmallTilesRunSlowerWhereTheL2BandwidthSaysSo) {
    const DeviceSpec* a100 = DeviceCatalog::builtin().find("A100-80GB");
    ASSERT_NE(a100, nullptr);
    const double rate = 312e12 * 0.869;
    const double one_wave = 2.0 * 128 * 128 * 4096 / (rate / 108);  // a 128 × 128 tile each
    // 28 × 4 tiles of 128 (two waves); 55 × 8 = 440 tiles of 64 (5 waves of a quarter).
    const KernelTime t = kernel_time(gemm(3520, 512, 4096), *a100, DType::bfloat16);
    EXPECT_EQ(t.tiling.tile_m, 64);
    EXPECT_EQ(t.tiling.tile_n, 64);
    const double l2_share = 32.0 * 7219e9 / rate;  // 64 × 64 tile's FLOP/byte × L2 over the rate
    EXPECT_NEAR(t.compute_s, 1.25 * one_wave / l2_share, 1e-12);
    EXPECT_LT(l2_share, 0.9);
    // 27 × 4 tiles of 128 fill one wave exactly: at the full rate.
    EXPECT_NEAR(kernel_time(gemm(3456, 512, 4096), *a100, DType::bfloat16).compute_s, one_wave,
                1e-12);
}

// Hopper's TMA multicast: a cluster of two SMs loads the larger operand's
// tile once for both, so a 128 × 128 tile draws 128 + 64 elements a K step
// from L2 instead of 256, and a 256 × 128 one 128 + 128 instead of 384.
// The same shapes without multicast (an A100's way) pay the full loads.
TEST(KernelCost, TmaMulticastHalvesTheSharedOperandsL2Traffic) {
    const DeviceSpec* h100 = DeviceCatalog::builtin().find("H100-SXM");
    ASSERT_NE(h100, nullptr);
    ASSERT_TRUE(h100->tma_multicast);
    DeviceSpec without = *h100;
    without.tma_multicast = false;
    const double rate = 989e12 * 0.803;
    const double per_sm = rate / 132;
    const double per_sm_l2 = 8986e9 / 132;
    const auto share = [&](double flop_per_byte) {
        return std::min(1.0, flop_per_byte * per_sm_l2 / per_sm);
    };
    // 132 tiles of 128 × 128 (12 × 11), one wave; K = 4096, too shallow to split.
    const Kernel g = gemm(12 * 128, 11 * 128, 4096);
    const double one_tile = 2.0 * 128 * 128 * 4096 / per_sm;
    const KernelTime with_mc = kernel_time(g, *h100, DType::bfloat16);
    const KernelTime plain = kernel_time(g, without, DType::bfloat16);
    ASSERT_EQ(plain.tiling.tile_m, 128);
    ASSERT_EQ(plain.tiling.split_k, 1);
    EXPECT_NEAR(plain.compute_s, one_tile / share(2.0 * 128 * 128 / (256 * 2)), 1e-9 * one_tile);
    ASSERT_EQ(with_mc.tiling.tile_m, 128);
    ASSERT_EQ(with_mc.tiling.split_k, 1);
    EXPECT_NEAR(with_mc.compute_s, one_tile / share(2.0 * 128 * 128 / (192 * 2)), 1e-9 * one_tile);
    EXPECT_LT(with_mc.compute_s, 0.8 * plain.compute_s);
    // A device without an L2 figure runs every tile at the full rate either way.
    DeviceSpec unknown_l2 = *h100;
    unknown_l2.l2_bandwidth_GBps = 0;
    EXPECT_NEAR(kernel_time(g, unknown_l2, DType::bfloat16).compute_s, one_tile, 1e-9 * one_tile);
}

}  // namespace
}  // namespace pipewright
