#pragma once
// Time stamps of a rank's actions on the machine's steady clock.
//
// On a CPU the work runs when it is issued, so a stamp is the clock itself.
// A GPU runs behind the thread that queues its kernels: reading the clock
// when an action is issued would time the launch, not the work. There a
// stamp is a CUDA event recorded on the rank's stream, and resolve() turns
// the events into steady-clock times after the iteration, through an anchor
// event whose steady-clock time is known.
#include <cstddef>
#include <memory>
#include <vector>

#include <torch/torch.h>

namespace pipewright::backend {

class ActionClock {
  public:
    virtual ~ActionClock() = default;
    // Starts a new iteration's stamps (waits for the device first).
    virtual void begin_iteration() = 0;
    // A stamp at this point of the rank's work; its index into resolve().
    [[nodiscard]] virtual std::size_t stamp() = 0;
    // Steady-clock seconds of every stamp since begin_iteration, in order.
    // Waits for the device to reach the last one.
    [[nodiscard]] virtual std::vector<double> resolve() = 0;
};

// The steady clock on a CPU device; CUDA events on a CUDA device.
[[nodiscard]] std::unique_ptr<ActionClock> make_action_clock(const torch::Device& device);

}  // namespace pipewright::backend
