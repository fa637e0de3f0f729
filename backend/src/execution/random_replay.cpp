#include "execution/random_replay.h"

#include <mutex>

namespace pipewright::backend {

torch::Tensor random_state(const torch::Device& device) {
    at::Generator generator = at::globalContext().defaultGenerator(device);
    const std::lock_guard lock(generator.mutex());
    return generator.get_state();
}

ReplayRandomState::ReplayRandomState(const torch::Device& device, const torch::Tensor& state)
    : generator_(at::globalContext().defaultGenerator(device)) {
    if (state.defined()) {
        const std::lock_guard lock(generator_.mutex());
        saved_ = generator_.get_state();
        generator_.set_state(state);
    }
}

ReplayRandomState::~ReplayRandomState() {
    if (saved_.defined()) {
        const std::lock_guard lock(generator_.mutex());
        generator_.set_state(saved_);
    }
}

}  // namespace pipewright::backend
