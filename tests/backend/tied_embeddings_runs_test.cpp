// Real runs of a model whose head is tied to its token embedding
// (model.tie_word_embeddings), in Gloo worker processes. Single-process
// training of the same model, with one shared matrix, is the reference:
// every copy of the tied matrix, in every stage, tensor-parallel member and
// replica, must end equal to it, as must every other parameter.
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "backend_test_util.h"
#include "cli_runner.h"
#include "layers/tensor_parallel_layers.h"
#include "pipewright/backend/modules.h"
#include "pipewright/core/project_io.h"

namespace pipewright {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int kSteps = 3;

struct TiedCase {
    std::string name;
    std::string schedule = "1f1b";
    int tensor = 1;
    int replicas = 1;
    // Each stage's layers (5 layers: embed, block0, block1, ln_f, head) and
    // its device (cpu index).
    std::vector<std::pair<std::vector<int>, int>> stages;
};

void PrintTo(const TiedCase& c, std::ostream* out) {
    *out << c.name;
}

const std::vector<std::string> kLayerNames{"embed", "block0", "block1", "ln_f", "head"};

// A tiny GPT with learned positions and a tied head on four CPU devices.
json tied_json(const TiedCase& c, int replicas, int microbatches) {
    json layers = json::array();
    layers.push_back({{"name", "embed"},
                      {"type", "embedding"},
                      {"num_embeddings", 64},
                      {"embedding_dim", 32},
                      {"positions", 8}});
    for (int b = 0; b < 2; ++b) {
        layers.push_back(test::tiny_block("block" + std::to_string(b), false));
    }
    layers.push_back(test::tiny_final_norm(false));
    layers.push_back(test::tiny_head());
    json placement = json::array();
    for (const auto& [members, device] : c.stages) {
        json names = json::array();
        for (const int l : members) {
            names.push_back(kLayerNames.at(static_cast<std::size_t>(l)));
        }
        placement.push_back(
            {{"device", "node0/c0/cpu" + std::to_string(device)}, {"layers", names}});
    }
    json project = test::token_model_project("tied-gpt", layers, placement, 4,
                                             {{"batch_size", 8},
                                              {"microbatches", microbatches},
                                              {"schedule", c.schedule},
                                              {"optimizer", {{"type", "adam"}, {"lr", 0.01}}},
                                              {"seed", 7}});
    project["model"]["tie_word_embeddings"] = true;
    if (c.tensor > 1) {
        project["tensor_parallel"] = {{"size", c.tensor}};
    }
    if (replicas > 1) {
        project["data_parallel"] = {{"size", replicas}};
    }
    return project;
}

// Every saved parameter of every stage, member and replica against
// single-process training; returns the largest relative difference.
double worst_difference(const TiedCase& c, const fs::path& out) {
    const int microbatches = 4;
    const AnalyzedProject split =
        test::analyze_text(tied_json(c, c.replicas, microbatches / c.replicas).dump());
    TiedCase one = c;
    one.tensor = 1;
    one.schedule = "1f1b";  // one stage: any schedule trains alike
    one.stages = {{{0, 1, 2, 3, 4}, 0}};
    const AnalyzedProject whole = test::analyze_text(tied_json(one, 1, microbatches).dump());
    const auto reference = test::reference_parameters(whole, kSteps, torch::kFloat64);
    const auto names = backend::build_model(whole, 7, torch::kFloat64)->named_parameters();
    // The shared matrix is listed once, under the embedding.
    EXPECT_EQ(names.size(), reference.size());
    EXPECT_EQ(names.find("head.weight"), nullptr);
    const torch::Tensor* embedding = nullptr;
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (names[i].key() == "embed.weight") {
            embedding = &reference[i];
        }
    }
    EXPECT_NE(embedding, nullptr);
    double worst = 0;
    for (int s = 0; s < split.schedule.num_stages; ++s) {
        const auto& stage = split.stages[static_cast<std::size_t>(s)];
        for (int replica = 0; replica < c.replicas; ++replica) {
            for (int k = 0; k < c.tensor; ++k) {
                const auto saved = test::saved_stage_parameters(out, s, replica, k);
                std::vector<torch::Tensor> want;
                for (std::size_t i = 0; i < names.size(); ++i) {
                    const std::string key = names[i].key();
                    const int l = split.project.model.layer_index(key.substr(0, key.find('.')));
                    if (stage.first_layer <= l && l <= stage.last_layer) {
                        want.push_back(backend::tensor_parallel_slice(
                            split, l, key.substr(key.find('.') + 1), reference[i], k, c.tensor));
                    }
                }
                if (stage.last_layer == 4 && stage.first_layer > 0) {
                    // The head's own copy of the tied matrix.
                    want.push_back(backend::tensor_parallel_slice(split, 4, "weight", *embedding, k,
                                                                  c.tensor));
                }
                worst = std::max(worst, test::max_relative_difference(saved, want));
            }
        }
    }
    return worst;
}

class TiedEmbeddingRuns : public ::testing::TestWithParam<TiedCase> {};

TEST_P(TiedEmbeddingRuns, EveryCopyEndsWithSingleProcessTrainingsSharedMatrix) {
    const TiedCase c = GetParam();
    const auto dir = test::temp_dir("tied-" + c.name);
    const auto project = dir / "project.json";
    write_file_atomically(project, tied_json(c, c.replicas, 4 / c.replicas).dump(2));
    const auto out = dir / "run";
    const auto r = test::run_exactly(project, kSteps, out, dir);
    ASSERT_EQ(r.code, 0) << r.output;
    EXPECT_LE(worst_difference(c, out), 1e-9);
    fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, TiedEmbeddingRuns,
    ::testing::Values(
        // The copies on two ranks: their gradients are swapped and summed.
        TiedCase{"TwoStages", "1f1b", 1, 1, {{{0, 1, 2}, 0}, {{3, 4}, 1}}},
        TiedCase{"TwoStagesSplitBackward", "zb-h1", 1, 1, {{{0, 1}, 0}, {{2, 3, 4}, 1}}},
        // Each member swaps its slice of the vocabulary with its peer's.
        TiedCase{"TwoStagesTensorParallel", "1f1b", 2, 1, {{{0, 1, 2}, 0}, {{3, 4}, 2}}},
        // One stage: the head multiplies by the embedding's own slice.
        TiedCase{"OneStageTensorParallel", "1f1b", 2, 1, {{{0, 1, 2, 3, 4}, 0}}},
        // A V: the first and the last stage on one rank, summed in place.
        TiedCase{"VShape", "zbv", 1, 1, {{{0}, 0}, {{1}, 1}, {{2}, 1}, {{3, 4}, 0}}},
        // Each replica's pair sums its averaged gradients.
        TiedCase{"TwoReplicas", "1f1b", 1, 2, {{{0, 1, 2}, 0}, {{3, 4}, 1}}}),
    [](const auto& param_info) { return param_info.param.name; });

}  // namespace
}  // namespace pipewright
