#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "pipewright/core/diagnostics.h"
#include "pipewright/core/topology.h"

namespace pipewright {

// How the pipeline is replicated: `size` copies of it, each on its own
// devices and its share of the global batch, whose gradients are averaged
// across the copies before the optimizer steps (as Megatron-LM's
// --data-parallel-size, DeepSpeed's ZeRO and PyTorch's FSDP do).
struct DataParallel {
    int size = 1;
    // ZeRO stage: 0 all-reduces the gradients; 1 also shards the optimizer
    // state; 2 reduce-scatters the gradients and keeps only a shard; 3 (FSDP)
    // shards the parameters too and all-gathers each stage's before use.
    int zero_stage = 0;
    // Reduce a stage's gradients in buckets while its last backward still
    // runs (DDP), rather than after the rank's last action.
    bool overlap_gradient_sync = true;
    double bucket_MiB = 25;  // DDP's default bucket
    // The devices of replicas 1, 2, ...: each lists one device per rank of
    // the pipeline (the placement's devices in order of first appearance).
    // Empty: the default layout (docs/formats.md).
    std::vector<std::vector<std::string>> replicas;

    bool operator==(const DataParallel&) const = default;
};

inline constexpr int kMaxZeroStage = 3;

// The devices of every replica, each listing one device per rank of the
// pipeline; the first is `pipeline` itself. `size` replaces dp.size (the
// command line's --data-parallel, named by `size_path`). Without explicit
// replicas, replica r takes the devices r spans further on in topology
// order, where a span runs from the pipeline's first device to its last:
// the next devices of the node, or the same positions in the next nodes.
// Reports every problem (a replica too short, a missing device, a device
// used twice) to `d` and returns fewer than `size` replicas then. With
// tensor parallelism each device leads a group of `group_size` (it and the
// devices after it), which a default replica's span covers too.
[[nodiscard]] std::vector<std::vector<DeviceLocation>> replica_devices(
    const DataParallel& dp, int size, std::string_view size_path, const DeviceLookup& lookup,
    const std::vector<DeviceLocation>& pipeline, Diagnostics& d, int group_size = 1);

}  // namespace pipewright
