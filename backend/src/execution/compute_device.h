#pragma once
// Where a rank computes: the CPU or one CUDA device, and the few things that
// differ between them (choosing the device, waiting for it, its memory).
// The CUDA parts compile only against a LibTorch with CUDA
// (PIPEWRIGHT_WITH_CUDA); a CPU-only LibTorch never reports a GPU, so they
// are never reached there.
#include <cstdint>
#include <string>

#include <torch/torch.h>

namespace pipewright::backend {

// Whether this Pipewright was built against a LibTorch with CUDA.
[[nodiscard]] bool built_with_cuda();

// GPUs this process sees (0 without CUDA).
[[nodiscard]] int visible_gpus();

// The device kind `--device auto|cpu|cuda` means for `local_ranks` ranks on
// this machine: "cuda" when asked for, or for auto when every local rank
// can have a GPU of its own; "cpu" otherwise. Throws BackendError when cuda
// is asked for and cannot be had, saying why.
[[nodiscard]] std::string resolve_device_kind(const std::string& requested, int local_ranks);

// The device of the rank that is `local_rank` on its machine, for a kind
// resolve_device_kind returned. Makes it the thread's current device.
[[nodiscard]] torch::Device rank_device(const std::string& kind, int local_rank);

// Waits until the work queued on `device` has run (no-op on CPU).
void synchronize(const torch::Device& device);

// The name people know the device by: "NVIDIA H200", "CPU".
[[nodiscard]] std::string device_name(const torch::Device& device);

// CUDA: bytes held by tensors now, and the most since reset_peak_memory
// (the caching allocator's statistics). 0 on CPU.
[[nodiscard]] std::int64_t allocated_bytes(const torch::Device& device);
[[nodiscard]] std::int64_t peak_allocated_bytes(const torch::Device& device);
void reset_peak_memory(const torch::Device& device);

}  // namespace pipewright::backend
