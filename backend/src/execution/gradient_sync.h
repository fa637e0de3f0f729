#pragma once
// Data parallelism, REDUCE_GRAD: a stage's gradients averaged across the
// replicas through the process group of the stage's copies, in buckets, as
// PyTorch's DistributedDataParallel does (sum, then divide by the number of
// replicas).
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "pipewright/backend/executor.h"
#include "pipewright/backend/transport.h"

namespace pipewright::backend {

class GradientSync {
  public:
    // `bucket_bytes`: the most gradient bytes one all-reduce carries (at
    // least one whole tensor each); data_parallel.bucket_MiB. The sums are
    // divided by `replicas`; a null `group` (a parameter no other replica
    // holds, such as an expert of one holder) only divides.
    GradientSync(c10::intrusive_ptr<CollectiveGroup> group, int replicas, double bucket_bytes,
                 std::chrono::milliseconds timeout);
    ~GradientSync();
    GradientSync(const GradientSync&) = delete;
    GradientSync& operator=(const GradientSync&) = delete;

    struct Started {
        // Completes when every bucket of the stage has been summed; the
        // executor hands it to a watcher thread (overlap) or waits at once.
        std::unique_ptr<PendingSend> work;
        double bytes = 0;  // the stage's gradient bytes
        // These reductions and `other`'s as one.
        [[nodiscard]] Started joined(Started other) &&;
    };
    // Issues the sum of these parameters' gradients over the replicas, one
    // asynchronous all-reduce per bucket, and returns at once. A parameter
    // without a gradient contributes zeros, so that every replica's buckets
    // have the same sizes.
    [[nodiscard]] Started start(const std::vector<torch::Tensor>& params);

    // Waits for every reduction started since the last call (normally done
    // already) and writes the averages back into the gradients. Call before
    // the optimizer step.
    void finish();

  private:
    struct Bucket;
    c10::intrusive_ptr<CollectiveGroup> group_;
    int replicas_;
    double bucket_bytes_;
    std::chrono::milliseconds timeout_;
    std::vector<std::shared_ptr<Bucket>> pending_;
};

// The process groups of one rank of the pipeline and its copies in the other
// replicas: `collectives` (Gloo, or NCCL between GPUs where this build has
// it) and `control` (Gloo: the barrier that opens each iteration). Keys live
// under "replicas-<rank>/" in `store`; `master_host` picks Gloo's interface.
[[nodiscard]] ReplicaGroup make_replica_group(c10::intrusive_ptr<c10d::Store> store,
                                              const std::string& master_host, int pipeline_rank,
                                              int replica, int replicas,
                                              const torch::Device& device,
                                              std::chrono::milliseconds timeout);

// Expert parallelism's groups of the same pipeline rank: the block of
// `size` consecutive replicas this replica's experts are split over, and the
// replicas that hold the same experts (every size-th). Keys under
// "experts-<rank>-<block>/" and "expert-holders-<rank>-<position>/" of
// `store`. Size 1: none.
[[nodiscard]] ExpertReplicas make_expert_replicas(c10::intrusive_ptr<c10d::Store> store,
                                                  const std::string& master_host, int pipeline_rank,
                                                  int replica, int replicas, int size,
                                                  const torch::Device& device,
                                                  std::chrono::milliseconds timeout);

}  // namespace pipewright::backend
