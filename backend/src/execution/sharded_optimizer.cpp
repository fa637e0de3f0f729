#include "execution/sharded_optimizer.h"

#include "pipewright/backend/executor.h"

namespace pipewright::backend {
namespace {

// The tensors flattened into one vector of `length` elements (zeros past
// their end).
torch::Tensor flat_padded(const std::vector<torch::Tensor>& tensors, std::int64_t length) {
    std::vector<torch::Tensor> parts;
    std::int64_t n = 0;
    for (const auto& t : tensors) {
        parts.push_back(t.reshape({-1}));
        n += t.numel();
    }
    if (length > n) {
        parts.push_back(torch::zeros({length - n}, tensors.front().options()));
    }
    return torch::cat(parts);
}

}  // namespace

ShardedOptimizer::ShardedOptimizer(const OptimizerConfig& config,
                                   const std::vector<std::vector<torch::Tensor>>& stage_params,
                                   c10::intrusive_ptr<CollectiveGroup> group, int replica,
                                   int replicas, std::chrono::milliseconds timeout)
    : group_(std::move(group)), replica_(replica), replicas_(replicas), timeout_(timeout) {
    const torch::NoGradGuard no_grad;
    std::vector<torch::Tensor> slices;
    for (const auto& params : stage_params) {
        if (params.empty()) {
            continue;  // a stage without weights (an activation only)
        }
        Stage s;
        s.params = params;
        for (const auto& p : params) {
            s.numel += p.numel();
        }
        s.shard = (s.numel + replicas_ - 1) / replicas_;
        // A leaf of its own: the optimizer's state follows this tensor.
        s.mine =
            flat_padded(params, s.shard * replicas_).narrow(0, s.shard * replica_, s.shard).clone();
        slices.push_back(s.mine);
        stages_.push_back(std::move(s));
    }
    optimizer_ = make_optimizer(config, slices);
}

void ShardedOptimizer::save(torch::serialize::OutputArchive& archive) const {
    optimizer_->save(archive);
}

void ShardedOptimizer::load(torch::serialize::InputArchive& archive) {
    {
        const torch::NoGradGuard no_grad;
        for (auto& s : stages_) {
            s.mine.copy_(
                flat_padded(s.params, s.shard * replicas_).narrow(0, s.shard * replica_, s.shard));
        }
    }
    optimizer_->load(archive);
}

void ShardedOptimizer::zero_grad() {
    const torch::NoGradGuard no_grad;
    for (auto& s : stages_) {
        for (auto& p : s.params) {
            if (p.grad().defined()) {
                p.mutable_grad().zero_();
            }
        }
    }
}

void ShardedOptimizer::step() {
    const torch::NoGradGuard no_grad;
    for (auto& s : stages_) {
        std::vector<torch::Tensor> grads;
        for (auto& p : s.params) {
            grads.push_back(p.grad().defined() ? p.grad() : torch::zeros_like(p));
        }
        s.mine.mutable_grad() =
            flat_padded(grads, s.shard * replicas_).narrow(0, s.shard * replica_, s.shard).clone();
    }
    optimizer_->step();
    // Every stage's gather goes out before the first wait, so that they
    // travel together.
    std::vector<std::vector<std::vector<torch::Tensor>>> gathered(stages_.size());
    std::vector<c10::intrusive_ptr<c10d::Work>> works;
    for (std::size_t i = 0; i < stages_.size(); ++i) {
        Stage& s = stages_[i];
        gathered[i].emplace_back();
        for (int r = 0; r < replicas_; ++r) {
            gathered[i][0].push_back(torch::empty_like(s.mine));
        }
        std::vector<torch::Tensor> input{s.mine};
        works.push_back(group_->allgather(gathered[i], input));
    }
    for (std::size_t i = 0; i < stages_.size(); ++i) {
        works[i]->wait(timeout_);
        Stage& s = stages_[i];
        const torch::Tensor whole = torch::cat(gathered[i][0]);
        std::int64_t offset = 0;
        for (auto& p : s.params) {
            p.copy_(whole.narrow(0, offset, p.numel()).view_as(p));
            offset += p.numel();
        }
    }
}

std::int64_t ShardedOptimizer::shard_elements() const {
    std::int64_t n = 0;
    for (const auto& s : stages_) {
        n += s.shard;
    }
    return n;
}

}  // namespace pipewright::backend
