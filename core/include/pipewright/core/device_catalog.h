#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipewright/core/attention_kernel.h"
#include "pipewright/core/gemm_correction.h"
#include "pipewright/core/measured_collectives.h"
#include "pipewright/core/tensor.h"

namespace pipewright {

// What a catalog device that does not say reaches of its peaks: the
// measured maximum-achievable-matmul fractions of NVIDIA's data-centre GPUs
// lie between 0.80 and 0.87 (docs/simulator.md), streaming kernels reach
// about as much of the memory bandwidth.
inline constexpr double kDefaultMatmulEfficiency = 0.8;
inline constexpr double kDefaultMemoryEfficiency = 0.8;
// FlashAttention-2 on a device the catalog has no measurement of: the
// A100's measured rates (73 % of peak forward, 52 % backward) as shares of
// its matmul rate (0.869 of peak), applied to the device's matmul rate.
inline constexpr AttentionEfficiency kFlash2ShareOfMatmul{0.84, 0.60};

// One kind of accelerator (or CPU): the vendors' peak figures, and what real
// kernels measurably reach of them (docs/simulator.md cites each figure).
struct DeviceSpec {
    std::string name;  // "A100-80GB"
    std::string description;
    std::string kind;                    // "gpu" or "cpu"
    std::map<DType, double> peak_flops;  // dense FLOP/s per compute dtype
    // Dense tensor-core FLOP/s for TF32 (fp32 convolutions run there, as
    // cuDNN allows by default) and FP8; 0 where the device has none.
    double tf32_flops = 0;
    double fp8_flops = 0;
    std::int64_t memory_bytes = 0;     // usable device memory
    double memory_bandwidth_GBps = 0;  // HBM (or DRAM) bandwidth, datasheet
    // Streaming multiprocessors (cores of a CPU): the tiles of a GEMM run in
    // waves of this many. 0: unknown, no wave quantization.
    int sm_count = 0;
    // Bandwidth from the L2 cache into all SMs together; it limits how fast
    // a small GEMM tile, which reuses little of what it loads, can run.
    // 0: unknown, every tile at the full rate.
    double l2_bandwidth_GBps = 0;
    // Hopper and Blackwell GEMMs run their tiles in clusters of two SMs that
    // share one operand's tile through the TMA's multicast, so each SM draws
    // from L2 its own operand's tile and half of the shared one
    // ("tma_multicast"; docs/simulator.md).
    bool tma_multicast = false;
    // The fraction of peak the best large GEMM reaches (measured maximum
    // achievable matmul FLOP/s over the datasheet's), and of the memory
    // bandwidth a streaming kernel reaches.
    double matmul_efficiency = kDefaultMatmulEfficiency;
    double memory_efficiency = kDefaultMemoryEfficiency;
    // Fixed cost of launching one kernel, which dominates small layers;
    // "kernel_overhead_us" in the catalog.
    double kernel_overhead_s = 0;
    // A GEMM's fixed cost where it was measured ("gemm_overhead_us"): the
    // time the smallest GEMM takes on the device, which sets up and drains
    // its tiles' pipeline besides being launched. 0: unmeasured (gemm_fixed_s()).
    double gemm_overhead_s = 0;
    // FP8 GEMMs read their operands in one layout only (Hopper, Ada): an
    // FP8 tensor the backward reads along its columns needs a transposed
    // copy, which the quantization writes besides ("fp8_transposed_copies").
    // Blackwell reads one layout both ways.
    bool fp8_transposed_copies = false;
    // Measured rates of fused attention kernels ("attention_efficiency" in
    // the catalog); attention_rate() falls back for FlashAttention-2.
    std::map<AttentionKernel, AttentionEfficiency> attention_efficiency;
    // Measured GEMMs of a device calibration (`--calibration`), which
    // correct the modelled GEMM times of their dtype; null: none.
    std::shared_ptr<const GemmCorrection> gemm_correction;
    // Collectives a device calibration measured among the devices of one
    // machine of this type, which price groups inside such a machine; null:
    // none, the links' model prices them.
    std::shared_ptr<const MeasuredCollectives> collectives;
    // CPU: the cores of the machine a device calibration measured and the
    // Torch threads its kernels ran with (0: no calibration said), and how
    // many times as long each kernel takes in a run whose ranks need more
    // threads than those cores, as they take turns (core/core_sharing.h;
    // set by the project's analysis, 1 when every thread has a core).
    int calibrated_cores = 0;
    int calibrated_threads = 0;
    double core_sharing = 1;

    // FLOP/s for a compute dtype; falls back to float32 when not listed.
    [[nodiscard]] double flops_for(DType dtype) const;
    // What a GEMM costs besides its work: the measured smallest GEMM's time,
    // else the launch of any kernel (a calibration's, once calibrated).
    [[nodiscard]] double gemm_fixed_s() const {
        return gemm_overhead_s > 0 ? gemm_overhead_s : kernel_overhead_s;
    }
    // FLOP/s of a matrix product in `dtype`: float32 convolutions on TF32
    // tensor cores when the device has them (`tf32` true), float32 matmuls
    // on the plain FP32 units, as PyTorch defaults.
    [[nodiscard]] double matmul_flops_for(DType dtype, bool tf32) const;
    // What `kernel` reaches here: the measured rate, else for
    // FlashAttention-2 the A100's share of its matmul rate applied to this
    // device's (kFlash2ShareOfMatmul); nullopt for another kernel the
    // catalog has no rate of.
    [[nodiscard]] std::optional<AttentionEfficiency> attention_rate(AttentionKernel kernel) const;
    [[nodiscard]] bool measured_attention(AttentionKernel kernel) const {
        return attention_efficiency.count(kernel) > 0;
    }

    bool operator==(const DeviceSpec&) const = default;
};

class DeviceCatalog {
  public:
    // Parses the catalog format of assets/devices.json; throws InputError.
    static DeviceCatalog from_json(const nlohmann::json& j);
    // The catalog shipped in assets/devices.json (compiled into the program).
    static const DeviceCatalog& builtin();

    [[nodiscard]] const DeviceSpec* find(std::string_view name) const;
    [[nodiscard]] const std::vector<DeviceSpec>& specs() const { return specs_; }
    [[nodiscard]] std::vector<std::string> names() const;
    // A copy with the entry of `spec`'s name replaced by it (a calibrated
    // device); the entry must exist.
    [[nodiscard]] DeviceCatalog with(DeviceSpec spec) const;

  private:
    std::vector<DeviceSpec> specs_;
};

}  // namespace pipewright
