#pragma once

// A GPU that fits with less room to spare than what the memory model does
// not count commonly takes: NCCL's buffers (half a GB and more a
// communicator) and the caching allocator's fragmentation
// (docs/simulator.md). Such a layout fits on paper and may still run out on
// the cluster, so the reports say so beside "every device fits".

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pipewright/core/device_catalog.h"
#include "pipewright/core/timeline_metrics.h"

namespace pipewright {

// 2 GiB: a few communicators' NCCL buffers (0.5–0.7 GB each on NVLinked
// A100s, NVIDIA/nccl#964) and some fragmentation.
inline constexpr std::int64_t kUncountedGpuMemoryBytes = std::int64_t{2} << 30;

struct TightDevice {
    std::string name;  // device path
    std::int64_t spare_bytes = 0;
};

// The GPU with the least memory to spare when it is under
// kUncountedGpuMemoryBytes and every device fits; nothing otherwise (a device
// over capacity is reported as such). A device is a GPU when its spec is one
// of the catalog's GPUs.
[[nodiscard]] std::optional<TightDevice> tightest_gpu(const std::vector<DeviceMetrics>& devices);

// "node0/c0/gpu0 has 1.35 GiB to spare, less than NCCL's buffers and the
// allocator's fragmentation may take (not counted)".
[[nodiscard]] std::string tight_memory_note(const TightDevice& device);

// `catalog` with `bytes` less memory on every GPU (none below 0): a memory
// margin (`--memory-margin`) that every GPU keeps free beside what the model
// counts, so that the analysis and the planner fit within the rest. A
// device's own memory_GiB in a project is taken as given.
[[nodiscard]] DeviceCatalog with_memory_margin(DeviceCatalog catalog, std::int64_t bytes);

}  // namespace pipewright
