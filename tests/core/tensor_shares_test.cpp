// The split of an unpaired last linear over a tensor-parallel group
// (tensor_parallel.h): before a cross-entropy loss it keeps its output split
// over the vocabulary (Megatron-LM's vocabulary-parallel cross-entropy);
// otherwise it is column-parallel with its output gathered.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipewright/core/layer_catalog.h"
#include "pipewright/core/model.h"
#include "pipewright/core/tensor_parallel.h"

namespace pipewright {
namespace {

using nlohmann::json;

constexpr int kSequence = 16;
constexpr int kHidden = 64;
constexpr int kVocabulary = 1024;

LayerSpec make(const std::string& name, const std::string& type, json params) {
    LayerSpec l;
    l.name = name;
    l.type = type;
    l.params = std::move(params);
    return l;
}

// Embedding, a norm and `tail` (the head, then whatever follows it), with
// `loss`.
struct Split {
    Model model;
    std::vector<LayerAnalysis> layers;
    std::vector<TensorShare> shares;
    Diagnostics d;
};

Split split(LossKind loss, int t, std::vector<LayerSpec> tail) {
    Split s;
    s.model.input = {{kSequence}, DType::int64};
    s.model.loss = loss;
    s.model.layers = {
        make("embed", "embedding", {{"num_embeddings", kVocabulary}, {"embedding_dim", kHidden}}),
        make("norm", "layernorm", {{"features", kHidden}})};
    for (LayerSpec& l : tail) {
        s.model.layers.push_back(std::move(l));
    }
    Shape shape = s.model.input.shape;
    DType dtype = s.model.input.dtype;
    for (std::size_t i = 0; i < s.model.layers.size(); ++i) {
        const auto a = analyze_layer(s.model.layers[i], shape, dtype, s.d,
                                     "model.layers[" + std::to_string(i) + "]");
        EXPECT_TRUE(a.has_value()) << s.d.format();
        s.layers.push_back(a.value_or(LayerAnalysis{}));
        shape = s.layers.back().output_shape;
        dtype = DType::float32;
    }
    s.shares = tensor_shares(s.model, s.layers, TensorParallel{t, false}, s.d);
    return s;
}

LayerSpec head(int vocabulary = kVocabulary) {
    return make("head", "linear",
                {{"in_features", kHidden}, {"out_features", vocabulary}, {"bias", false}});
}

TEST(TensorShares, TheHeadBeforeCrossEntropyKeepsItsOutputSplitOverTheVocabulary) {
    for (const int t : {2, 4}) {
        SCOPED_TRACE(t);
        const Split s = split(LossKind::cross_entropy, t, {head()});
        ASSERT_TRUE(s.d.empty()) << s.d.format();
        ASSERT_EQ(s.shares.size(), 3U);
        const TensorShare& h = s.shares[2];
        EXPECT_EQ(h.split, TensorSplit::vocabulary_output);
        EXPECT_DOUBLE_EQ(h.compute, 1.0 / t);
        EXPECT_DOUBLE_EQ(h.parameters, 1.0 / t);
        EXPECT_DOUBLE_EQ(h.stash, 1.0);  // its input, whole on every member
        // No gather: the loss's three all-reduces (maximum, sum, target's
        // logit) of one value per token.
        EXPECT_EQ(h.forward_reductions, 3);
        EXPECT_DOUBLE_EQ(h.forward_elements, kSequence);
        // The column-parallel input gradient's all-reduce stays.
        EXPECT_EQ(h.backward_reductions, 1);
        EXPECT_DOUBLE_EQ(h.backward_elements, double(kSequence) * kHidden);
    }
}

TEST(TensorShares, AnUnpairedLinearIsGatheredOtherwise) {
    // The same head before an MSE loss: its output gathered, half an
    // all-reduce's bytes.
    const Split mse = split(LossKind::mse, 2, {head()});
    ASSERT_TRUE(mse.d.empty()) << mse.d.format();
    EXPECT_EQ(mse.shares[2].split, TensorSplit::column);
    EXPECT_EQ(mse.shares[2].forward_reductions, 1);
    EXPECT_DOUBLE_EQ(mse.shares[2].forward_elements, double(kSequence) * kVocabulary / 2);
    // Not the last layer: a norm after it takes the whole output.
    const Split inner = split(LossKind::cross_entropy, 2,
                              {head(kHidden), make("final", "layernorm", {{"features", kHidden}})});
    ASSERT_TRUE(inner.d.empty()) << inner.d.format();
    EXPECT_EQ(inner.shares[2].split, TensorSplit::column);
    EXPECT_EQ(inner.shares[2].forward_reductions, 1);
    // A pair at the end: column- then row-parallel, the row-parallel output
    // all-reduced as ever.
    const Split pair = split(
        LossKind::cross_entropy, 2,
        {make("up", "linear", {{"in_features", kHidden}, {"out_features", 4 * kHidden}}),
         make("act", "gelu", json::object()),
         make("down", "linear", {{"in_features", 4 * kHidden}, {"out_features", kVocabulary}})});
    ASSERT_TRUE(pair.d.empty()) << pair.d.format();
    EXPECT_EQ(pair.shares[2].split, TensorSplit::column);
    EXPECT_EQ(pair.shares[4].split, TensorSplit::row);
    EXPECT_EQ(pair.shares[4].forward_reductions, 1);
}

TEST(TensorShares, AVocabularyTheGroupDoesNotDivideIsRefusedAsBefore) {
    const Split s = split(LossKind::cross_entropy, 4, {head(1026)});
    EXPECT_NE(s.d.format().find("does not divide out_features = 1026"), std::string::npos)
        << s.d.format();
}

}  // namespace
}  // namespace pipewright
