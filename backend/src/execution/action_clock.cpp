#include "execution/action_clock.h"

#ifdef PIPEWRIGHT_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAGuard.h>
#endif

#include "execution/compute_device.h"
#include "pipewright/backend/executor.h"

namespace pipewright::backend {
namespace {

class SteadyClock final : public ActionClock {
  public:
    void begin_iteration() override { stamps_.clear(); }
    std::size_t stamp() override {
        stamps_.push_back(steady_seconds());
        return stamps_.size() - 1;
    }
    std::vector<double> resolve() override { return stamps_; }

  private:
    std::vector<double> stamps_;
};

#ifdef PIPEWRIGHT_WITH_CUDA
class CudaEventClock final : public ActionClock {
  public:
    explicit CudaEventClock(const torch::Device& device) : device_(device) {}

    void begin_iteration() override {
        const c10::cuda::CUDAGuard guard(device_);
        used_ = 0;
        // The anchor: recorded on an idle device, so it completes at once and
        // the steady clock read right after its completion is its time.
        synchronize(device_);
        anchor_.record(at::cuda::getCurrentCUDAStream(device_.index()));
        anchor_.synchronize();
        anchor_s_ = steady_seconds();
    }

    std::size_t stamp() override {
        const c10::cuda::CUDAGuard guard(device_);
        if (used_ == events_.size()) {
            // Timing events (the default CUDAEvent disables timing).
            events_.push_back(std::make_unique<at::cuda::CUDAEvent>(cudaEventDefault));
        }
        events_[used_]->record(at::cuda::getCurrentCUDAStream(device_.index()));
        return used_++;
    }

    std::vector<double> resolve() override {
        const c10::cuda::CUDAGuard guard(device_);
        std::vector<double> out;
        out.reserve(used_);
        if (used_ > 0) {
            events_[used_ - 1]->synchronize();
        }
        for (std::size_t i = 0; i < used_; ++i) {
            out.push_back(anchor_s_ + static_cast<double>(anchor_.elapsed_time(*events_[i])) / 1e3);
        }
        return out;
    }

  private:
    torch::Device device_;
    at::cuda::CUDAEvent anchor_{cudaEventDefault};
    double anchor_s_ = 0;
    std::vector<std::unique_ptr<at::cuda::CUDAEvent>> events_;  // reused across iterations
    std::size_t used_ = 0;
};
#endif

}  // namespace

std::unique_ptr<ActionClock> make_action_clock(const torch::Device& device) {
#ifdef PIPEWRIGHT_WITH_CUDA
    if (device.is_cuda()) {
        return std::make_unique<CudaEventClock>(device);
    }
#endif
    (void)device;
    return std::make_unique<SteadyClock>();
}

}  // namespace pipewright::backend
