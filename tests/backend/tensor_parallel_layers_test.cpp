// Megatron-LM's tensor-parallel layers (tensor_parallel_layers.h), two and
// four members as threads of this process with a Gloo group over an
// in-memory store: a small GPT split over the group computes what the whole
// model computes, forward and backward, and each member's parameters and
// gradients are the slices of the whole model's.
#include <gtest/gtest.h>

#include <functional>
#include <thread>

#include <ATen/CPUGeneratorImpl.h>
#include <nlohmann/json.hpp>

#include "layers/tensor_parallel_layers.h"
#include "pipewright/backend/modules.h"
#include "pipewright/core/analysis.h"
#include "pipewright/core/project_io.h"
#include "tensor_group_threads.h"

namespace pipewright {
namespace {

constexpr std::uint64_t kSeed = 7;
constexpr int kVocabulary = 96;
constexpr int kSequence = 6;
constexpr int kBatch = 3;

// Embedding, two blocks, a final norm, an MLP pair with a GELU between and
// an unpaired head before the cross-entropy (column-parallel, its output
// left split over the vocabulary; before an MSE loss, gathered), analysed
// for groups of `t`.
AnalyzedProject gpt(int t, bool sequence_parallel = false,
                    const std::string& loss = "cross_entropy") {
    using nlohmann::json;
    const json block = {{"type", "transformer_block"}, {"hidden", 32}, {"heads", 4}};
    json b0 = block;
    b0["name"] = "block0";
    json b1 = block;
    b1["name"] = "block1";
    const json layers = {
        {{"name", "embed"},
         {"type", "embedding"},
         {"num_embeddings", kVocabulary},
         {"embedding_dim", 32}},
        b0,
        b1,
        {{"name", "ln_f"}, {"type", "layernorm"}, {"features", 32}},
        {{"name", "up"}, {"type", "linear"}, {"in_features", 32}, {"out_features", 64}},
        {{"name", "act"}, {"type", "gelu"}},
        {{"name", "down"}, {"type", "linear"}, {"in_features", 64}, {"out_features", 32}},
        {{"name", "head"},
         {"type", "linear"},
         {"in_features", 32},
         {"out_features", kVocabulary},
         {"bias", false}}};
    json names = json::array();
    for (const auto& l : layers) {
        names.push_back(l["name"]);
    }
    json gpus = json::array();
    for (int g = 0; g < 4; ++g) {
        gpus.push_back({{"name", "gpu" + std::to_string(g)}, {"spec", "A100-80GB"}});
    }
    const json j = {
        {"format", "pipewright-project"},
        {"version", 1},
        {"model",
         {{"name", "gpt"},
          {"input", {{"shape", {kSequence}}, {"dtype", "int64"}}},
          {"loss", loss},
          {"layers", layers}}},
        {"topology",
         {{"nodes",
           json::array({{{"name", "node0"},
                         {"containers", json::array({{{"name", "c0"}, {"devices", gpus}}})}}})}}},
        {"placement", json::array({{{"device", "node0/c0/gpu0"}, {"layers", names}}})},
        {"training", {{"batch_size", kBatch}, {"schedule", "naive"}}},
        {"tensor_parallel", {{"size", t}, {"sequence_parallel", sequence_parallel}}}};
    Diagnostics d;
    auto project = project_from_json(j, d);
    EXPECT_TRUE(project) << d.format();
    auto analyzed = analyze_project(*project, {}, d);
    EXPECT_TRUE(analyzed) << d.format();
    return *analyzed;
}

struct Pass {
    torch::Tensor output;
    std::map<std::string, std::pair<torch::Tensor, torch::Tensor>> params;  // value, gradient
};

// Forward and backward of `model` on fixed ids and a fixed weighting of
// the output (the same on every member; member `rank` of `size` holds the
// logits of its slice of the vocabulary, and weighs them with its slice).
Pass forward_backward(torch::nn::Sequential& model, int rank = 0, int size = 1) {
    auto gen = at::make_generator<at::CPUGeneratorImpl>(3);
    const auto ids = torch::randint(kVocabulary, {kBatch, kSequence}, gen);
    const auto weights =
        torch::randn({kBatch, kSequence, kVocabulary}, gen, torch::TensorOptions(torch::kFloat64));
    Pass pass;
    pass.output = model->forward(ids);
    const bool split = pass.output.size(-1) != kVocabulary;
    (pass.output * (split ? weights.chunk(size, -1)[static_cast<std::size_t>(rank)] : weights))
        .sum()
        .backward();
    for (const auto& p : model->named_parameters()) {
        pass.params.emplace(p.key(), std::pair{p.value().detach(), p.value().grad()});
    }
    return pass;
}

// "block0.qkv.weight" -> (layer 1, "qkv.weight").
std::pair<int, std::string> layer_and_name(const AnalyzedProject& project, const std::string& key) {
    const auto dot = key.find('.');
    const std::string layer = key.substr(0, dot);
    for (std::size_t i = 0; i < project.project.model.layers.size(); ++i) {
        if (project.project.model.layers[i].name == layer) {
            return {static_cast<int>(i), key.substr(dot + 1)};
        }
    }
    ADD_FAILURE() << "no layer " << layer;
    return {-1, ""};
}

void expect_the_whole_models_slices(int size, bool sequence_parallel = false,
                                    const std::string& loss = "cross_entropy") {
    const AnalyzedProject whole_project = gpt(1, false, loss);
    auto whole = backend::build_layers(whole_project, 0, 7, kSeed, torch::kFloat64);
    const Pass reference = forward_backward(whole);
    const AnalyzedProject project = gpt(size, sequence_parallel, loss);
    const bool split_logits = loss == "cross_entropy";
    std::vector<Pass> members(static_cast<std::size_t>(size));
    const auto errors = test::on_tensor_group(size, [&](const backend::TensorGroup& group) {
        auto model =
            backend::build_tensor_parallel_layers(project, 0, 7, kSeed, torch::kFloat64, group);
        Pass pass = forward_backward(model, group.rank, group.size);
        // Under sequence parallelism the layer norms' and the row-parallel
        // biases' gradients are each member's share: summed, as a run does.
        backend::sum_gradients_over_group(
            backend::sequence_partial_parameters(project, 0, 7, model), group);
        for (auto& [key, value_and_grad] : pass.params) {
            value_and_grad.second = value_and_grad.second.clone();
        }
        members[static_cast<std::size_t>(group.rank)] = std::move(pass);
    });
    for (const auto& e : errors) {
        ASSERT_EQ(e, "");
    }
    for (int r = 0; r < size; ++r) {
        SCOPED_TRACE("member " + std::to_string(r) + " of " + std::to_string(size));
        const Pass& m = members[static_cast<std::size_t>(r)];
        // Before the cross-entropy the head's output stays split: each member
        // has the logits of its slice of the vocabulary. Otherwise it is
        // gathered: every member has the whole output.
        const auto want_output = split_logits
                                     ? reference.output.chunk(size, -1)[static_cast<std::size_t>(r)]
                                     : reference.output;
        ASSERT_EQ(m.output.sizes(), want_output.sizes());
        EXPECT_TRUE(torch::allclose(m.output, want_output, 1e-12, 1e-12));
        ASSERT_EQ(m.params.size(), reference.params.size());
        for (const auto& [key, whole_param] : reference.params) {
            SCOPED_TRACE(key);
            const auto [layer, name] = layer_and_name(project, key);
            ASSERT_TRUE(m.params.count(key));
            const auto& [value, grad] = m.params.at(key);
            const auto want_value =
                backend::tensor_parallel_slice(project, layer, name, whole_param.first, r, size);
            const auto want_grad =
                backend::tensor_parallel_slice(project, layer, name, whole_param.second, r, size);
            ASSERT_EQ(value.sizes(), want_value.sizes());
            EXPECT_TRUE(torch::equal(value, want_value));
            ASSERT_TRUE(grad.defined());
            EXPECT_TRUE(torch::allclose(grad, want_grad, 1e-10, 1e-12))
                << (grad - want_grad).abs().max().item<double>();
        }
    }
}

TEST(TensorParallelLayers, TwoMembersComputeTheWholeModelAndHoldItsSlices) {
    expect_the_whole_models_slices(2);
}

TEST(TensorParallelLayers, FourMembersToo) {
    expect_the_whole_models_slices(4);
}

TEST(TensorParallelLayers, SequenceParallelismComputesTheSame) {
    expect_the_whole_models_slices(2, true);
}

TEST(TensorParallelLayers, BeforeAnMseLossTheHeadsOutputIsGathered) {
    expect_the_whole_models_slices(2, false, "mse");
    expect_the_whole_models_slices(2, true, "mse");
}

TEST(TensorParallelLayers, OnlyWholeParametersOfSequenceSlicesAreSummed) {
    const AnalyzedProject project = gpt(2, true);
    std::vector<std::string> partial;
    const auto errors = test::on_tensor_group(2, [&](const backend::TensorGroup& group) {
        auto model =
            backend::build_tensor_parallel_layers(project, 0, 7, kSeed, torch::kFloat64, group);
        if (group.rank == 0) {
            const auto params = backend::sequence_partial_parameters(project, 0, 7, model);
            for (const auto& p : model->named_parameters()) {
                for (const auto& q : params) {
                    if (p.value().is_same(q)) {
                        partial.push_back(p.key());
                    }
                }
            }
        }
    });
    ASSERT_EQ(errors, std::vector<std::string>(2));
    EXPECT_EQ(partial,
              (std::vector<std::string>{"block0.ln1.weight", "block0.ln1.bias", "block0.proj.bias",
                                        "block0.ln2.weight", "block0.ln2.bias", "block0.fc2.bias",
                                        "block1.ln1.weight", "block1.ln1.bias", "block1.proj.bias",
                                        "block1.ln2.weight", "block1.ln2.bias", "block1.fc2.bias",
                                        "ln_f.weight", "ln_f.bias", "down.bias"}));
}

TEST(TensorParallelLayers, EachLayerIsCutAsTheAnalysisSplitsIt) {
    const AnalyzedProject project = gpt(2);
    std::vector<std::string> names;
    const auto errors = test::on_tensor_group(2, [&](const backend::TensorGroup& group) {
        auto model =
            backend::build_tensor_parallel_layers(project, 0, 7, kSeed, torch::kFloat64, group);
        if (group.rank == 0) {
            for (const auto& p : model->named_parameters()) {
                names.push_back(p.key() + " " + std::to_string(p.value().size(0)));
            }
        }
    });
    ASSERT_EQ(errors, std::vector<std::string>(2));
    const auto has = [&](const std::string& s) {
        return std::find(names.begin(), names.end(), s) != names.end();
    };
    EXPECT_TRUE(has("embed.weight 48"));        // half the vocabulary
    EXPECT_TRUE(has("block0.qkv.weight 48"));   // half the heads of Q, K and V
    EXPECT_TRUE(has("block0.proj.weight 32"));  // half its input features
    EXPECT_TRUE(has("block0.fc1.weight 64"));   // half of 4 × 32
    EXPECT_TRUE(has("block0.ln1.weight 32"));   // whole
    EXPECT_TRUE(has("up.weight 32"));           // column-parallel
    EXPECT_TRUE(has("down.weight 32"));         // row-parallel: [32, 32]
    EXPECT_TRUE(has("down.bias 32"));           // whole
    EXPECT_TRUE(has("head.weight 48"));         // column-parallel, its output split
}

}  // namespace
}  // namespace pipewright
