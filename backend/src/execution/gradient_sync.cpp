#include "execution/gradient_sync.h"

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>

#include "pipewright/backend/backend_error.h"
#ifdef PIPEWRIGHT_WITH_NCCL
#include "transport/transport_nccl.h"
#endif

namespace pipewright::backend {

// Gradients of consecutive parameters, copied into one flat tensor that one
// all-reduce sums in place.
struct GradientSync::Bucket {
    torch::Tensor flat;
    std::vector<torch::Tensor> grads;  // the parameters' gradients, in order
    c10::intrusive_ptr<c10d::Work> work;
};

namespace {

// One stage's buckets in flight. wait() returns once every bucket is summed
// (Gloo reports completion only inside a blocking wait, so a watcher thread
// sleeps in it); the averages are written back by GradientSync::finish on
// the compute thread.
class Reduction final : public PendingSend {
  public:
    Reduction(std::vector<c10::intrusive_ptr<c10d::Work>> works, std::chrono::milliseconds timeout)
        : works_(std::move(works)), timeout_(timeout) {}

    bool done() override { return false; }
    void wait() override {
        for (const auto& w : works_) {
            w->wait(timeout_);
        }
    }
    void abort() override {
        for (const auto& w : works_) {
            w->abort();
        }
    }

  private:
    std::vector<c10::intrusive_ptr<c10d::Work>> works_;
    std::chrono::milliseconds timeout_;
};

double bytes_of(const torch::Tensor& t) {
    return static_cast<double>(t.numel()) * static_cast<double>(t.element_size());
}

// Both reductions of a stage (its dense parameters' and its experts').
class BothReductions final : public PendingSend {
  public:
    BothReductions(std::unique_ptr<PendingSend> a, std::unique_ptr<PendingSend> b)
        : a_(std::move(a)), b_(std::move(b)) {}
    bool done() override { return false; }
    void wait() override {
        a_->wait();
        b_->wait();
    }
    void abort() override {
        a_->abort();
        b_->abort();
    }

  private:
    std::unique_ptr<PendingSend> a_, b_;
};

}  // namespace

GradientSync::Started GradientSync::Started::joined(Started other) && {
    Started both;
    both.bytes = bytes + other.bytes;
    both.work = std::make_unique<BothReductions>(std::move(work), std::move(other.work));
    return both;
}

GradientSync::GradientSync(c10::intrusive_ptr<CollectiveGroup> group, int replicas,
                           double bucket_bytes, std::chrono::milliseconds timeout)
    : group_(std::move(group)),
      replicas_(replicas),
      bucket_bytes_(bucket_bytes),
      timeout_(timeout) {}

GradientSync::~GradientSync() = default;

GradientSync::Started GradientSync::start(const std::vector<torch::Tensor>& params) {
    const torch::NoGradGuard no_grad;
    // Buckets in parameter order, each up to bucket_bytes_ (at least one
    // tensor): every replica cuts the same buckets from the same shapes.
    std::vector<std::vector<torch::Tensor>> cut;
    double in_bucket = 0;
    Started started;
    for (const auto& p : params) {
        torch::Tensor& g = p.mutable_grad();
        if (!g.defined()) {
            g = torch::zeros_like(p);
        }
        const double b = bytes_of(g);
        started.bytes += b;
        if (cut.empty() || (in_bucket > 0 && in_bucket + b > bucket_bytes_)) {
            cut.emplace_back();
            in_bucket = 0;
        }
        cut.back().push_back(g);
        in_bucket += b;
    }
    std::vector<c10::intrusive_ptr<c10d::Work>> works;
    for (auto& grads : cut) {
        auto bucket = std::make_shared<Bucket>();
        std::vector<torch::Tensor> flat_parts;
        for (const auto& g : grads) {
            flat_parts.push_back(g.reshape({-1}));
        }
        bucket->flat = torch::cat(flat_parts);
        bucket->grads = std::move(grads);
        if (group_) {
            std::vector<torch::Tensor> tensors{bucket->flat};
            c10d::AllreduceOptions options;
            options.reduceOp = c10d::ReduceOp::SUM;
            options.timeout = timeout_;
            bucket->work = group_->allreduce(tensors, options);
            works.push_back(bucket->work);
        }
        pending_.push_back(std::move(bucket));
    }
    started.work = std::make_unique<Reduction>(std::move(works), timeout_);
    return started;
}

void GradientSync::finish() {
    const torch::NoGradGuard no_grad;
    for (const auto& bucket : pending_) {
        if (bucket->work) {
            bucket->work->wait(timeout_);
        }
        bucket->flat.div_(replicas_);
        std::int64_t offset = 0;
        for (auto& g : bucket->grads) {
            g.copy_(bucket->flat.narrow(0, offset, g.numel()).view_as(g));
            offset += g.numel();
        }
    }
    pending_.clear();
}

ReplicaGroup make_replica_group(c10::intrusive_ptr<c10d::Store> store,
                                const std::string& master_host, int pipeline_rank, int replica,
                                int replicas, const torch::Device& device,
                                std::chrono::milliseconds timeout) {
    const std::string prefix = "replicas-" + std::to_string(pipeline_rank) + "/";
    ReplicaGroup g;
    g.replica = replica;
    g.replicas = replicas;
    g.timeout = timeout;
    g.control = make_gloo_group(store, prefix + "gloo", master_host, replica, replicas, timeout);
    g.collectives = g.control;
#ifdef PIPEWRIGHT_WITH_NCCL
    // Between GPUs the sums run on the devices; Gloo would copy every bucket
    // through host memory.
    if (device.is_cuda()) {
        g.collectives =
            make_nccl_group(std::move(store), prefix + "nccl", replica, replicas, timeout);
    }
#else
    (void)device;
#endif
    return g;
}

ExpertReplicas make_expert_replicas(c10::intrusive_ptr<c10d::Store> store,
                                    const std::string& master_host, int pipeline_rank, int replica,
                                    int replicas, int size, const torch::Device& device,
                                    std::chrono::milliseconds timeout) {
    ExpertReplicas e;
    if (size <= 1) {
        return e;
    }
    const int block = replica / size;
    const int position = replica % size;
    const std::string rank = std::to_string(pipeline_rank);
    e.dispatch.rank = position;
    e.dispatch.size = size;
    e.dispatch.group =
        make_device_group(store, "experts-" + rank + "-" + std::to_string(block) + "/", master_host,
                          position, size, device, timeout);
    e.holder = block;
    e.holders_count = replicas / size;
    if (e.holders_count > 1) {
        e.holders = make_device_group(
            std::move(store), "expert-holders-" + rank + "-" + std::to_string(position) + "/",
            master_host, block, e.holders_count, device, timeout);
    }
    return e;
}

}  // namespace pipewright::backend
