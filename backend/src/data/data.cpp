#include "pipewright/backend/data.h"

#include <algorithm>

#include <ATen/CPUGeneratorImpl.h>

#include "pipewright/backend/modules.h"
#include "pipewright/core/context_parallel.h"

namespace pipewright::backend {
namespace {

// Streams of the task, distinct from the layers' weight streams.
constexpr std::uint64_t kTeacherSalt = 0x7eac4e5ULL;
constexpr std::uint64_t kDataSalt = 0xda7a5eedULL;

}  // namespace

SyntheticTask::SyntheticTask(const AnalyzedProject& project, torch::Dtype dtype, bool with_targets)
    : project_(&project), dtype_(dtype), teacher_(nullptr) {
    vocabulary_ = input_vocabulary(project.project.model);
    if (!with_targets) {
        return;
    }
    // The teacher is the same model with other weights, so the student can
    // learn it exactly and the loss falls. An imported model's teacher too
    // is drawn from the seed (PyTorch's default initialisation), not taken
    // from its file: with the file's weights the student would start as its
    // own teacher. Random targets, as imported models once had, are not
    // learnable: the loss sat at ln(classes).
    const auto seed = static_cast<std::uint64_t>(project.project.training.seed);
    teacher_ = build_model(project, seed ^ kTeacherSalt, dtype, ImportedWeights::from_seed);
    teacher_->eval();  // fixed function: batch-norm uses its running statistics
    if (project.project.model.loss == LossKind::mse) {
        // Unit-variance targets make the printed loss start near 1 whatever
        // the model's depth and initialisation scale.
        const torch::NoGradGuard no_grad;
        // Over the global batch, so that every replica scales alike and as
        // one process training on all of it would (a context group's
        // replicas share their samples: they count once).
        const Batch first =
            draw(0, 0,
                 project.microbatches *
                     batch_shares(project.data_parallel(), project.project.context_parallel.size));
        const double sd = torch::cat(first.targets).to(torch::kFloat64).std().item<double>();
        target_scale_ = sd > 0 ? 1.0 / sd : 1.0;
    }
}

Batch SyntheticTask::batch(int step, int replica) const {
    return draw(step, replica * project_->microbatches, project_->microbatches);
}

Batch SyntheticTask::draw(int step, int first, int count) const {
    const auto& p = *project_;
    const auto seed = static_cast<std::uint64_t>(p.project.training.seed);
    auto gen = at::make_generator<at::CPUGeneratorImpl>(layer_seed(seed ^ kDataSalt, step));
    std::vector<std::int64_t> sizes{p.microbatch_size};
    sizes.insert(sizes.end(), p.project.model.input.shape.begin(),
                 p.project.model.input.shape.end());
    Batch b;
    const torch::NoGradGuard no_grad;
    // The micro-batches before `first` are drawn too (and dropped): they
    // advance the generator as in one process drawing the whole batch.
    for (int mb = 0; mb < first + count; ++mb) {
        torch::Tensor x = vocabulary_ > 0 ? torch::randint(vocabulary_, sizes, gen,
                                                           torch::TensorOptions(torch::kInt64))
                                          : torch::randn(sizes, gen, torch::TensorOptions(dtype_));
        if (mb < first) {
            continue;
        }
        b.inputs.push_back(x);
        if (!teacher_) {
            continue;
        }
        torch::Tensor y = teacher_->forward(x);
        if (p.project.model.loss == LossKind::cross_entropy) {
            b.targets.push_back(y.argmax(-1));
        } else {
            b.targets.push_back(y * target_scale_);
        }
    }
    return b;
}

torch::Tensor compute_loss(LossKind kind, const torch::Tensor& output,
                           const torch::Tensor& target) {
    if (kind == LossKind::cross_entropy) {
        // Logits over the last dimension; every other dimension is a sample
        // position (tokens of a sequence, pixels), as in PyTorch's LM losses.
        return torch::nn::functional::cross_entropy(output.reshape({-1, output.size(-1)}),
                                                    target.reshape({-1}));
    }
    return torch::mse_loss(output, target);
}

}  // namespace pipewright::backend
