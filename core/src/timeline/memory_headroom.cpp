#include "pipewright/core/memory_headroom.h"

#include <algorithm>
#include <utility>

#include "pipewright/core/device_catalog.h"
#include "pipewright/core/quantity_format.h"

namespace pipewright {

std::optional<TightDevice> tightest_gpu(const std::vector<DeviceMetrics>& devices) {
    std::optional<TightDevice> tightest;
    for (const DeviceMetrics& d : devices) {
        if (!d.fits) {
            return std::nullopt;
        }
        const DeviceSpec* spec = DeviceCatalog::builtin().find(d.spec);
        if (spec == nullptr || spec->kind != "gpu") {
            continue;
        }
        const std::int64_t spare = d.memory_capacity_bytes - d.peak_memory_bytes;
        if (spare < kUncountedGpuMemoryBytes && (!tightest || spare < tightest->spare_bytes)) {
            tightest = TightDevice{d.name, spare};
        }
    }
    return tightest;
}

std::string tight_memory_note(const TightDevice& device) {
    return device.name + " has " + format_bytes(static_cast<double>(device.spare_bytes)) +
           " to spare, less than NCCL's buffers and the allocator's fragmentation may take "
           "(not counted)";
}

DeviceCatalog with_memory_margin(DeviceCatalog catalog, std::int64_t bytes) {
    const std::vector<DeviceSpec> specs = catalog.specs();
    for (DeviceSpec spec : specs) {
        if (spec.kind == "gpu") {
            spec.memory_bytes = std::max<std::int64_t>(0, spec.memory_bytes - bytes);
            catalog = catalog.with(std::move(spec));
        }
    }
    return catalog;
}

}  // namespace pipewright
