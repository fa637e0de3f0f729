#include "execution/boundary_receives.h"

#include "pipewright/core/stage_boundary.h"
#include "transport/transfer_channels.h"

namespace pipewright::backend {

namespace {

// RECV action `a`: the stage whose output crosses (activations of the
// previous stage, or this stage's own output's gradient).
int boundary_of(const Action& a) {
    return a.type == ActionType::recv_forward ? a.stage - 1 : a.stage;
}

}  // namespace

BoundaryReceives::BoundaryReceives(const AnalyzedProject& project, int rank, Transport& transport,
                                   torch::Dtype dtype, torch::Device device, int context_size)
    : project_(project),
      rank_(rank),
      transport_(transport),
      dtype_(dtype),
      device_(device),
      context_size_(context_size),
      next_on_channel_(next_receive_on_channel(actions())) {}

const std::vector<Action>& BoundaryReceives::actions() const {
    return project_.schedule.ranks.at(static_cast<std::size_t>(rank_));
}

int BoundaryReceives::peer(const Action& a) const {
    return project_.schedule.stage_rank.at(static_cast<std::size_t>(peer_stage(a)));
}

int BoundaryReceives::tag(const Action& a) const {
    return transfer_tag(boundary_of(a), a.microbatch, a.type == ActionType::recv_backward,
                        project_.schedule.num_microbatches);
}

// Of this rank's tokens (1/size of the sequence under context
// parallelism), and of those its slice under sequence parallelism
// (core/stage_boundary.h).
torch::Tensor BoundaryReceives::boundary_like(int stage) const {
    const auto& st = project_.stages.at(static_cast<std::size_t>(stage));
    const Shape& shape = project_.layers.at(static_cast<std::size_t>(st.last_layer)).output_shape;
    std::vector<std::int64_t> sizes{project_.microbatch_size};
    sizes.insert(sizes.end(), shape.begin(), shape.end());
    if (const int parts = context_size_ * boundary_slices(project_, st.last_layer); parts > 1) {
        sizes.at(1) /= parts;
    }
    return torch::empty(sizes, torch::TensorOptions(dtype_).device(device_));
}

std::unique_ptr<PendingRecv> BoundaryReceives::post(const Action& a) {
    return transport_.post_recv(boundary_like(boundary_of(a)), peer(a), tag(a));
}

torch::Tensor BoundaryReceives::take(std::size_t index) {
    const Action& a = actions().at(index);
    std::unique_ptr<PendingRecv> mine;
    if (auto node = ahead_.extract(tag(a)); !node.empty()) {
        mine = std::move(node.mapped());
    } else {
        mine = post(a);
    }
    if (const int next = next_on_channel_.at(index); next >= 0) {
        const Action& n = actions().at(static_cast<std::size_t>(next));
        ahead_.emplace(tag(n), post(n));
    }
    return mine->wait();
}

}  // namespace pipewright::backend
