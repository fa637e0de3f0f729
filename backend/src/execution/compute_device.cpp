#include "execution/compute_device.h"

#include <c10/core/DeviceGuard.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#ifdef PIPEWRIGHT_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDACachingAllocator.h>
#endif

#include "pipewright/backend/modules.h"

namespace pipewright::backend {

bool built_with_cuda() {
#ifdef PIPEWRIGHT_WITH_CUDA
    return true;
#else
    return false;
#endif
}

int visible_gpus() {
    return torch::cuda::is_available() ? static_cast<int>(torch::cuda::device_count()) : 0;
}

std::string resolve_device_kind(const std::string& requested, int local_ranks) {
    if (requested == "cpu") {
        return "cpu";
    }
    const int gpus = visible_gpus();
    if (requested == "auto") {
        return gpus > 0 && gpus >= local_ranks ? "cuda" : "cpu";
    }
    if (requested != "cuda") {
        throw BackendError("--device must be auto, cpu or cuda, not \"" + requested + "\"");
    }
    if (!built_with_cuda()) {
        throw BackendError(
            "--device cuda: this Pipewright is built against a LibTorch without CUDA; build it "
            "against a CUDA LibTorch (docs/real-runs.md, \"GPUs\") or use --device cpu");
    }
    if (gpus == 0) {
        throw BackendError(
            "--device cuda: no GPU is visible (check the driver with nvidia-smi and "
            "CUDA_VISIBLE_DEVICES); use --device cpu");
    }
    if (gpus < local_ranks) {
        throw BackendError("--device cuda: " + std::to_string(local_ranks) +
                           " ranks on this machine need a GPU each, but " + std::to_string(gpus) +
                           (gpus == 1 ? " is" : " are") +
                           " visible; use fewer devices in the project, more nodes "
                           "(--nnodes), or --device cpu");
    }
    return "cuda";
}

torch::Device rank_device(const std::string& kind, int local_rank) {
    if (kind != "cuda") {
        return torch::Device(torch::kCPU);
    }
    const torch::Device device(torch::kCUDA, static_cast<c10::DeviceIndex>(local_rank));
    // Kernels, the caching allocator and NCCL use the thread's current device.
    c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA)->setDevice(device);
    return device;
}

void synchronize(const torch::Device& device) {
    if (device.is_cuda()) {
        torch::cuda::synchronize(device.index());
    }
}

std::string device_name(const torch::Device& device) {
#ifdef PIPEWRIGHT_WITH_CUDA
    if (device.is_cuda()) {
        return at::cuda::getDeviceProperties(device.index())->name;
    }
#endif
    return device.is_cuda() ? "CUDA device " + std::to_string(device.index()) : "CPU";
}

#ifdef PIPEWRIGHT_WITH_CUDA
namespace {
// Stat and StatType moved out of c10::cuda::CUDACachingAllocator during 2.x
// (to c10::CachingAllocator by 2.15); DeviceStats is there in 1.13 and 2.x
// alike, so only it is named. Index 0 is StatType::AGGREGATE in both.
const auto& allocated_stat(const c10::cuda::CUDACachingAllocator::DeviceStats& stats) {
    return stats.allocated_bytes[0];
}
}  // namespace
#endif

std::int64_t allocated_bytes(const torch::Device& device) {
#ifdef PIPEWRIGHT_WITH_CUDA
    if (device.is_cuda()) {
        return allocated_stat(c10::cuda::CUDACachingAllocator::getDeviceStats(device.index()))
            .current;
    }
#endif
    (void)device;
    return 0;
}

std::int64_t peak_allocated_bytes(const torch::Device& device) {
#ifdef PIPEWRIGHT_WITH_CUDA
    if (device.is_cuda()) {
        return allocated_stat(c10::cuda::CUDACachingAllocator::getDeviceStats(device.index())).peak;
    }
#endif
    (void)device;
    return 0;
}

void reset_peak_memory(const torch::Device& device) {
#ifdef PIPEWRIGHT_WITH_CUDA
    if (device.is_cuda()) {
        c10::cuda::CUDACachingAllocator::resetPeakStats(device.index());
    }
#endif
    (void)device;
}

}  // namespace pipewright::backend
