#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipewright/core/tensor.h"

namespace pipewright {

// Peak figures of one kind of accelerator (or CPU), as vendors publish them.
struct DeviceSpec {
    std::string name;  // "A100-80GB"
    std::string description;
    std::string kind;                    // "gpu" or "cpu"
    std::map<DType, double> peak_flops;  // dense FLOP/s per compute dtype
    std::int64_t memory_bytes = 0;       // usable device memory
    double memory_bandwidth_GBps = 0;    // for information and future models
    // Fixed cost of launching one layer's kernels (per forward or backward
    // part), which dominates small layers; "kernel_overhead_us" in the catalog.
    double kernel_overhead_s = 0;

    // FLOP/s for a compute dtype; falls back to float32 when not listed.
    [[nodiscard]] double flops_for(DType dtype) const;

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

  private:
    std::vector<DeviceSpec> specs_;
};

}  // namespace pipewright
