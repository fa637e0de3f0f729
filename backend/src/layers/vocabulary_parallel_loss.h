#pragma once
// Megatron-LM's vocabulary-parallel cross-entropy: the loss over logits that
// each member of a tensor-parallel group holds for its slice of the
// vocabulary (the head left its output split: TensorSplit::vocabulary_output,
// tensor_parallel_layers.h), computed without gathering them. Forward: the
// local maximum, all-reduced (MAX); the logits less it, exponentiated; their
// local sum, all-reduced (SUM); the target's logit (zero on the members whose
// slice does not hold it), all-reduced (SUM); each token's loss
// log(sum) − (target logit − maximum). Backward, with no communication:
// the member's slice of softmax − one-hot, times the loss's gradient.
// Every member calls it in the same order, so that its all-reduces meet.

#include <torch/torch.h>

#include "pipewright/backend/transport.h"

namespace pipewright::backend {

// The mean over tokens of the cross-entropy of `logits` (this member's
// slice of the vocabulary along the last dimension; every other dimension
// a token, as in compute_loss) against `target` (whole-vocabulary ids, one
// per token): what torch's cross_entropy of the whole logits gives, on every
// member. Computed in float32 for lower-precision logits, in float64 for
// float64 ones; the gradient reaches `logits` in their dtype. With a group
// of one, the plain cross-entropy.
[[nodiscard]] torch::Tensor vocabulary_parallel_cross_entropy(const torch::Tensor& logits,
                                                              const torch::Tensor& target,
                                                              const TensorGroup& group);

}  // namespace pipewright::backend
