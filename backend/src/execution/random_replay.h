#pragma once
// Random state for activation checkpointing: a recomputed forward must draw
// the dropout masks the first forward drew.
#include <torch/torch.h>

namespace pipewright::backend {

// The current state of `device`'s default generator.
[[nodiscard]] torch::Tensor random_state(const torch::Device& device);

// Sets the device's default generator to `state` (nothing when undefined)
// and puts the previous state back when it goes, so that the draws after the
// recomputation are the ones they would have been without it.
class ReplayRandomState {
  public:
    ReplayRandomState(const torch::Device& device, const torch::Tensor& state);
    ~ReplayRandomState();
    ReplayRandomState(const ReplayRandomState&) = delete;
    ReplayRandomState& operator=(const ReplayRandomState&) = delete;

  private:
    at::Generator generator_;
    torch::Tensor saved_;
};

}  // namespace pipewright::backend
