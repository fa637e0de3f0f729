#pragma once
// The receives of a rank's RECV actions: the tensors that cross the stage
// boundaries into its stages (activations forward, their gradients
// backward). Each is posted one ahead on its channel, so that its data
// moves while the rank computes, as the simulator's links deliver a message
// as soon as it is sent.

#include <cstddef>
#include <map>
#include <memory>
#include <vector>

#include <torch/torch.h>

#include "pipewright/backend/transport.h"
#include "pipewright/core/analysis.h"

namespace pipewright::backend {

class BoundaryReceives {
  public:
    // Rank `rank`'s receives over `transport`, into tensors of `dtype` on
    // `device`; its stages hold 1/`context_size` of every sequence.
    BoundaryReceives(const AnalyzedProject& project, int rank, Transport& transport,
                     torch::Dtype dtype, torch::Device device, int context_size);

    // The tensor of the RECV action at `index` of the rank's list, once it
    // has arrived. The next receive on the same channel is posted before
    // waiting: one buffer per channel is in flight ahead.
    [[nodiscard]] torch::Tensor take(std::size_t index);

    // The rank that sends RECV action `a`'s tensor.
    [[nodiscard]] int peer(const Action& a) const;

  private:
    [[nodiscard]] const std::vector<Action>& actions() const;
    [[nodiscard]] int tag(const Action& a) const;
    // An empty tensor shaped like what crosses the boundary after stage
    // `stage` for one micro-batch.
    [[nodiscard]] torch::Tensor boundary_like(int stage) const;
    [[nodiscard]] std::unique_ptr<PendingRecv> post(const Action& a);

    const AnalyzedProject& project_;
    int rank_;
    Transport& transport_;
    torch::Dtype dtype_;
    torch::Device device_;
    int context_size_;
    std::vector<int> next_on_channel_;
    std::map<int, std::unique_ptr<PendingRecv>> ahead_;  // by tag
};

}  // namespace pipewright::backend
