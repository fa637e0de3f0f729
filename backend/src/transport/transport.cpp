// The two transports. Gloo is used through c10d only (rendezvous, process
// group, work handles): no socket code here.
#include "pipewright/backend/transport.h"

#include "pipewright/backend/backend_error.h"

#include <ifaddrs.h>
#include <unistd.h>

#include <array>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>

#include <c10/macros/Macros.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

namespace pipewright::backend {

// ---- in-process --------------------------------------------------------------

struct InProcessGroup::State {
    int world_size = 0;
    std::chrono::milliseconds timeout{};
    std::mutex mutex;
    std::condition_variable changed;
    std::map<std::tuple<int, int, int>, std::deque<torch::Tensor>> queues;  // (from, to, tag)
    bool aborted = false;
    int barrier_count = 0;
    std::int64_t barrier_generation = 0;

    template <class Pred>
    void wait_for(std::unique_lock<std::mutex>& lock, Pred ready, const char* what) {
        if (!changed.wait_for(lock, timeout, [&] { return aborted || ready(); })) {
            throw BackendError(std::string("timed out waiting for ") + what);
        }
        if (aborted) {
            throw BackendError("another rank failed");
        }
    }
};

namespace {

class DoneSend final : public PendingSend {
  public:
    bool done() override { return true; }
    void wait() override {}
};

class QueuedRecv final : public PendingRecv {
  public:
    QueuedRecv(std::shared_ptr<InProcessGroup::State> state, int from, int to, int tag)
        : state_(std::move(state)), key_(from, to, tag) {}

    torch::Tensor wait() override {
        std::unique_lock lock(state_->mutex);
        auto& q = state_->queues[key_];
        state_->wait_for(
            lock, [&] { return !q.empty(); }, "a tensor from another rank");
        torch::Tensor t = std::move(q.front());
        q.pop_front();
        return t;
    }

  private:
    std::shared_ptr<InProcessGroup::State> state_;
    std::tuple<int, int, int> key_;
};

class InProcessTransport final : public Transport {
  public:
    InProcessTransport(std::shared_ptr<InProcessGroup::State> state, int rank)
        : state_(std::move(state)), rank_(rank) {}

    int rank() const override { return rank_; }
    int world_size() const override { return state_->world_size; }

    std::unique_ptr<PendingSend> send(const torch::Tensor& tensor, int peer, int tag) override {
        // A copy, as a real transfer makes one: the receiver must not alias
        // the sender's tensor.
        torch::Tensor copy = tensor.detach().clone();
        {
            const std::lock_guard lock(state_->mutex);
            state_->queues[{rank_, peer, tag}].push_back(std::move(copy));
        }
        state_->changed.notify_all();
        return std::make_unique<DoneSend>();
    }

    // The sender already copied the tensor into the queue; waiting is
    // taking it out.
    std::unique_ptr<PendingRecv> post_recv(const torch::Tensor& /*like*/, int peer,
                                           int tag) override {
        return std::make_unique<QueuedRecv>(state_, peer, rank_, tag);
    }

    void barrier() override {
        std::unique_lock lock(state_->mutex);
        const auto generation = state_->barrier_generation;
        if (++state_->barrier_count == state_->world_size) {
            state_->barrier_count = 0;
            ++state_->barrier_generation;
            state_->changed.notify_all();
            return;
        }
        state_->wait_for(
            lock, [&] { return state_->barrier_generation != generation; }, "the other ranks");
    }

  private:
    std::shared_ptr<InProcessGroup::State> state_;
    int rank_;
};

// ---- c10d / Gloo ----------------------------------------------------------------

bool is_loopback(const std::string& host) {
    return host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1";
}

// The interfaces of this machine that have an address, by name.
std::set<std::string> interfaces_with_address() {
    std::set<std::string> names;
    ifaddrs* list = nullptr;
    if (::getifaddrs(&list) != 0) {
        return names;
    }
    for (const ifaddrs* a = list; a != nullptr; a = a->ifa_next) {
        if (a->ifa_addr != nullptr &&
            (a->ifa_addr->sa_family == AF_INET || a->ifa_addr->sa_family == AF_INET6)) {
            names.insert(a->ifa_name);
        }
    }
    ::freeifaddrs(list);
    return names;
}

// GLOO_SOCKET_IFNAME's interface, checked first: Gloo's own refusal is an
// "[enforce fail at ./gloo/transport/tcp/device.cc:80]" line.
std::shared_ptr<::gloo::transport::Device> device_for_interface(const std::string& name) {
    const auto names = interfaces_with_address();
    if (!names.empty() && names.count(name) == 0) {
        std::string have;
        for (const std::string& n : names) {
            have += (have.empty() ? "" : ", ") + n;
        }
        throw BackendError("GLOO_SOCKET_IFNAME names the network interface " + name +
                           ", which this machine does not have with an address (it has " + have +
                           "); set it to the interface the nodes reach each other by, or unset "
                           "it to use the one this machine's hostname resolves to");
    }
    return c10d::ProcessGroupGloo::createDeviceForInterface(name);
}

// The interface this rank's Gloo connections use. A loopback master means
// every rank is on this machine; otherwise the ranks of other machines must
// reach ours through a real interface.
std::shared_ptr<::gloo::transport::Device> device_for(const std::string& master_host) {
    if (is_loopback(master_host)) {
        return c10d::ProcessGroupGloo::createDeviceForHostname(master_host);
    }
    if (const char* name = std::getenv("GLOO_SOCKET_IFNAME"); name != nullptr && *name != 0) {
        return device_for_interface(name);
    }
    std::array<char, 256> hostname{};
    if (::gethostname(hostname.data(), hostname.size() - 1) != 0) {
        throw BackendError("cannot read this machine's hostname; set GLOO_SOCKET_IFNAME");
    }
    return c10d::ProcessGroupGloo::createDeviceForHostname(hostname.data());
}

class GlooSend final : public PendingSend {
  public:
    GlooSend(c10::intrusive_ptr<c10d::Work> work, std::chrono::milliseconds timeout)
        : work_(std::move(work)), timeout_(timeout) {}
    bool done() override { return work_->isCompleted(); }
    void wait() override { work_->wait(timeout_); }
    void abort() override { work_->abort(); }

  private:
    c10::intrusive_ptr<c10d::Work> work_;
    std::chrono::milliseconds timeout_;
};

// Gloo moves host memory: a receive for a tensor on a GPU (a CUDA run
// without NCCL) lands in host memory and is copied over once it has arrived.
class GlooRecv final : public PendingRecv {
  public:
    GlooRecv(const c10::intrusive_ptr<c10d::ProcessGroupGloo>& group, const torch::Tensor& like,
             int peer, int tag, std::chrono::milliseconds timeout)
        : buffer_{torch::empty(like.sizes(), like.options().device(torch::kCPU))},
          device_(like.device()),
          timeout_(timeout) {
        work_ = group->recv(buffer_, peer, tag);
    }

    // A receive nobody waited for (the rank is failing) is withdrawn: Gloo
    // must not write into a buffer that is gone.
    ~GlooRecv() override {
        if (!waited_) {
            try {
                work_->abort();
            } catch (...) {  // NOLINT(bugprone-empty-catch): shutting down anyway
            }
        }
    }
    GlooRecv(const GlooRecv&) = delete;
    GlooRecv& operator=(const GlooRecv&) = delete;

    torch::Tensor wait() override {
        waited_ = true;
        work_->wait(timeout_);
        return device_.is_cpu() ? buffer_[0] : buffer_[0].to(device_);
    }

  private:
    bool waited_ = false;
    std::vector<torch::Tensor> buffer_;
    torch::Device device_;
    std::chrono::milliseconds timeout_;
    c10::intrusive_ptr<c10d::Work> work_;
};

class GlooTransport final : public Transport {
  public:
    GlooTransport(c10::intrusive_ptr<c10d::Store> store, const std::string& host, int rank,
                  int world, std::chrono::milliseconds timeout)
        : rank_(rank), world_(world), timeout_(timeout), store_(std::move(store)) {
        auto options = c10d::ProcessGroupGloo::Options::create(timeout);
        options->devices.push_back(device_for(host));
        // A prefix keeps the group's keys apart from the launcher's own.
        auto prefixed = c10::make_intrusive<c10d::PrefixStore>("gloo", store_);
        group_ = c10::make_intrusive<c10d::ProcessGroupGloo>(prefixed, rank, world, options);
    }

    int rank() const override { return rank_; }
    int world_size() const override { return world_; }

    // Gloo moves host memory: a tensor on a GPU (a CUDA run without NCCL)
    // goes through a host copy on both sides.
    std::unique_ptr<PendingSend> send(const torch::Tensor& tensor, int peer, int tag) override {
        std::vector<torch::Tensor> tensors{tensor.is_cpu() ? tensor.contiguous()
                                                           : tensor.to(torch::kCPU)};
        return std::make_unique<GlooSend>(group_->send(tensors, peer, tag), timeout_);
    }

    std::unique_ptr<PendingRecv> post_recv(const torch::Tensor& like, int peer, int tag) override {
        return std::make_unique<GlooRecv>(group_, like, peer, tag, timeout_);
    }

    void barrier() override { group_->barrier()->wait(timeout_); }

  private:
    int rank_, world_;
    std::chrono::milliseconds timeout_;
    c10::intrusive_ptr<c10d::Store> store_;
    c10::intrusive_ptr<c10d::ProcessGroupGloo> group_;
};

}  // namespace

InProcessGroup::InProcessGroup(int world_size, std::chrono::milliseconds timeout)
    : state_(std::make_shared<State>()) {
    state_->world_size = world_size;
    state_->timeout = timeout;
}

InProcessGroup::~InProcessGroup() = default;

std::unique_ptr<Transport> InProcessGroup::transport(int rank) {
    return std::make_unique<InProcessTransport>(state_, rank);
}

void InProcessGroup::abort() {
    {
        const std::lock_guard lock(state_->mutex);
        state_->aborted = true;
    }
    state_->changed.notify_all();
}

#ifdef C10_USE_GLOG
#include <glog/logging.h>
#endif

namespace {
// c10d reports each failed connection attempt through glog on stderr (and
// glog first complains that it was never initialised), before the launcher's
// own words say the same: quiet while connecting, as the reason is ours.
// Debian's LibTorch logs through glog; PyPI's wheels through c10's own
// logger, whose level is caffe2_log_level (torch 2.15 logs every failed
// try at ERROR).
#ifdef C10_USE_GLOG
class QuietLibraryLog {
  public:
    QuietLibraryLog() : saved_(FLAGS_minloglevel) {
        if (!google::IsGoogleLoggingInitialized()) {
            google::InitGoogleLogging("pipewright");
        }
        FLAGS_minloglevel = google::GLOG_FATAL;
    }
    ~QuietLibraryLog() { FLAGS_minloglevel = saved_; }
    QuietLibraryLog(const QuietLibraryLog&) = delete;
    QuietLibraryLog& operator=(const QuietLibraryLog&) = delete;

  private:
    int saved_;
};
#else
class QuietLibraryLog {
  public:
    QuietLibraryLog() : saved_(FLAGS_caffe2_log_level) { FLAGS_caffe2_log_level = 3; }  // FATAL
    ~QuietLibraryLog() { FLAGS_caffe2_log_level = saved_; }
    QuietLibraryLog(const QuietLibraryLog&) = delete;
    QuietLibraryLog& operator=(const QuietLibraryLog&) = delete;

  private:
    int saved_;
};
#endif
}  // namespace

c10::intrusive_ptr<c10d::Store> connect_rendezvous_store(const std::string& host, int port,
                                                         std::chrono::milliseconds timeout) {
    [[maybe_unused]] const QuietLibraryLog quiet;
    c10d::TCPStoreOptions opts;
    opts.port = static_cast<std::uint16_t>(port);
    opts.isServer = false;  // the launcher of node 0 hosts the store
    opts.waitWorkers = false;
    opts.timeout = timeout;
    return c10::make_intrusive<c10d::TCPStore>(host, opts);
}

std::unique_ptr<Transport> make_gloo_transport(const std::string& master_host, int master_port,
                                               int rank, int world_size,
                                               std::chrono::milliseconds timeout) {
    return std::make_unique<GlooTransport>(
        connect_rendezvous_store(master_host, master_port, timeout), master_host, rank, world_size,
        timeout);
}

std::unique_ptr<Transport> make_gloo_transport(c10::intrusive_ptr<c10d::Store> store,
                                               const std::string& master_host, int rank,
                                               int world_size, std::chrono::milliseconds timeout) {
    return std::make_unique<GlooTransport>(std::move(store), master_host, rank, world_size,
                                           timeout);
}

c10::intrusive_ptr<CollectiveGroup> make_gloo_group(c10::intrusive_ptr<c10d::Store> store,
                                                    const std::string& prefix,
                                                    const std::string& master_host, int rank,
                                                    int size, std::chrono::milliseconds timeout) {
    auto options = c10d::ProcessGroupGloo::Options::create(timeout);
    options->devices.push_back(device_for(master_host));
    auto prefixed = c10::make_intrusive<c10d::PrefixStore>(prefix, std::move(store));
    return c10::make_intrusive<c10d::ProcessGroupGloo>(prefixed, rank, size, options);
}

}  // namespace pipewright::backend
