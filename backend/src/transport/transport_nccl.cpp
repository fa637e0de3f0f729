#include "transport/transport_nccl.h"

#include <map>
#include <thread>

#include <c10/cuda/CUDAGuard.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>

#include "execution/compute_device.h"
#include "pipewright/backend/backend_error.h"

namespace pipewright::backend {
namespace {

// An NCCL send completes on the GPU; wait() on its work would only make the
// calling thread's stream wait. The watcher thread polls instead, so the
// completion it stamps is when the transfer really finished.
class NcclSend final : public PendingSend {
  public:
    NcclSend(c10::intrusive_ptr<c10d::Work> work, std::chrono::milliseconds timeout)
        : work_(std::move(work)), timeout_(timeout) {}

    bool done() override { return false; }

    void wait() override {
        const auto deadline = std::chrono::steady_clock::now() + timeout_;
        while (!work_->isCompleted()) {
            if (aborted_.load()) {
                throw BackendError("a send to another rank was abandoned");
            }
            if (std::chrono::steady_clock::now() > deadline) {
                throw BackendError("a send to another rank did not complete within " +
                                   std::to_string(timeout_.count() / 1000) + " s");
            }
            std::this_thread::sleep_for(std::chrono::microseconds(50));
        }
        if (!work_->isSuccess()) {
            std::rethrow_exception(work_->exception());
        }
    }

    void abort() override { aborted_.store(true); }

  private:
    c10::intrusive_ptr<c10d::Work> work_;
    std::chrono::milliseconds timeout_;
    std::atomic<bool> aborted_{false};
};

class NcclRecv final : public PendingRecv {
  public:
    NcclRecv(c10d::ProcessGroupNCCL& group, const torch::Tensor& like, int peer,
             const torch::Device& device, std::chrono::milliseconds timeout)
        : buffer_{torch::empty_like(like)}, device_(device), timeout_(timeout) {
        work_ = group.recv(buffer_, peer, 0);
    }

    // Makes this rank's stream wait for the transfer; the thread goes on
    // queueing work, as it does behind every kernel.
    torch::Tensor wait() override {
        const c10::cuda::CUDAGuard guard(device_);
        work_->wait(timeout_);
        return buffer_[0];
    }

  private:
    std::vector<torch::Tensor> buffer_;
    torch::Device device_;
    std::chrono::milliseconds timeout_;
    c10::intrusive_ptr<c10d::Work> work_;
};

class NcclTransport final : public Transport {
  public:
    NcclTransport(c10::intrusive_ptr<c10d::Store> store, const std::string& master_host, int rank,
                  int world, const torch::Device& device, std::chrono::milliseconds timeout,
                  std::function<int(int)> channel_of)
        : rank_(rank),
          world_(world),
          device_(device),
          timeout_(timeout),
          store_(std::move(store)),
          channel_of_(std::move(channel_of)),
          control_(make_gloo_transport(store_, master_host, rank, world, timeout)) {}

    // NCCL sets up a channel's communicator on its first transfer, blocking
    // both ranks until the other one arrives. Left to the schedule, a rank
    // blocked setting up one channel could wait for a rank blocked setting
    // up another. So every rank sets up its channels first, all in channel
    // order, with a one-element transfer each: a rank waits only for ranks
    // that are at the same channel or before it, which always progress.
    void connect(const std::vector<ChannelEnds>& ends) {
        const c10::cuda::CUDAGuard guard(device_);
        for (const ChannelEnds& e : ends) {
            if (e.sender != rank_ && e.receiver != rank_) {
                continue;
            }
            std::vector<torch::Tensor> one{
                torch::zeros({1}, torch::TensorOptions().device(device_))};
            c10d::ProcessGroupNCCL& g = channel_group(e.channel);
            auto work = e.sender == rank_ ? g.send(one, e.receiver, 0) : g.recv(one, e.sender, 0);
            work->wait(timeout_);
        }
        synchronize(device_);
    }

    int rank() const override { return rank_; }
    int world_size() const override { return world_; }

    std::unique_ptr<PendingSend> send(const torch::Tensor& tensor, int peer, int tag) override {
        const c10::cuda::CUDAGuard guard(device_);
        std::vector<torch::Tensor> tensors{tensor.contiguous()};
        return std::make_unique<NcclSend>(group(tag).send(tensors, peer, 0), timeout_);
    }

    std::unique_ptr<PendingRecv> post_recv(const torch::Tensor& like, int peer, int tag) override {
        const c10::cuda::CUDAGuard guard(device_);
        return std::make_unique<NcclRecv>(group(tag), like, peer, device_, timeout_);
    }

    void barrier() override {
        synchronize(device_);
        control_->barrier();
    }

  private:
    c10d::ProcessGroupNCCL& group(int tag) { return channel_group(channel_of_(tag)); }

    // One process group per channel, made on first use; NCCL sets up a
    // communicator in it only between the channel's two ranks.
    c10d::ProcessGroupNCCL& channel_group(int channel) {
        auto it = groups_.find(channel);
        if (it == groups_.end()) {
            auto options = c10d::ProcessGroupNCCL::Options::create();
            options->timeout = timeout_;
            auto prefixed =
                c10::make_intrusive<c10d::PrefixStore>("nccl/" + std::to_string(channel), store_);
            it = groups_
                     .emplace(channel, c10::make_intrusive<c10d::ProcessGroupNCCL>(prefixed, rank_,
                                                                                   world_, options))
                     .first;
        }
        return *it->second;
    }

    int rank_, world_;
    torch::Device device_;
    std::chrono::milliseconds timeout_;
    c10::intrusive_ptr<c10d::Store> store_;
    std::function<int(int)> channel_of_;
    std::unique_ptr<Transport> control_;
    std::map<int, c10::intrusive_ptr<c10d::ProcessGroupNCCL>> groups_;
};

}  // namespace

std::unique_ptr<Transport> make_nccl_transport(c10::intrusive_ptr<c10d::Store> store,
                                               const std::string& master_host, int rank,
                                               int world_size, const torch::Device& device,
                                               std::chrono::milliseconds timeout,
                                               std::function<int(int tag)> channel_of,
                                               const std::vector<ChannelEnds>& ends) {
    auto transport = std::make_unique<NcclTransport>(
        std::move(store), master_host, rank, world_size, device, timeout, std::move(channel_of));
    transport->connect(ends);
    return transport;
}

c10::intrusive_ptr<CollectiveGroup> make_nccl_group(c10::intrusive_ptr<c10d::Store> store,
                                                    const std::string& prefix, int rank, int size,
                                                    std::chrono::milliseconds timeout) {
    auto options = c10d::ProcessGroupNCCL::Options::create();
    options->timeout = timeout;
    auto prefixed = c10::make_intrusive<c10d::PrefixStore>(prefix, std::move(store));
    return c10::make_intrusive<c10d::ProcessGroupNCCL>(prefixed, rank, size, options);
}

}  // namespace pipewright::backend
