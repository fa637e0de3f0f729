// Real context-parallel runs: a small GPT whose sequences are split over C
// = 2 data-parallel replicas (each holding two of the four chunks of every
// sequence, exchanging attention's keys and values), trained a few steps in
// Gloo worker processes. Every replica's parameters must equal what one
// process training the whole sequences of the same global batch ends with.
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "backend_test_util.h"
#include "cli_runner.h"
#include "pipewright/backend/modules.h"
#include "pipewright/core/project_io.h"
#include "pipewright/core/timeline.h"
#include "resume_check.h"

namespace pipewright {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int kSteps = 3;
constexpr int kSequence = 8;

struct ContextCase {
    std::string name;
    int replicas = 2;  // D; the context group is C = 2 of them
    int stages = 1;
    std::string exchange = "ring";
    std::string schedule = "1f1b";
    // Llama-style blocks: grouped-query attention (4 query heads over 2
    // key/value heads), rotary positions, RMSNorm, SwiGLU, no biases; GPT
    // blocks otherwise, after an embedding with learned positions.
    bool llama = false;
    std::string recompute = "none";  // training.activation_checkpointing
    int zero_stage = 0;
    // Mean squared error against the teacher's outputs, per token too (the
    // targets scaled over the global batch, whose groups count once).
    std::string loss = "cross_entropy";
    // The head multiplies by the embedding's matrix (model.tie_word_embeddings).
    bool tied = false;
};

void PrintTo(const ContextCase& c, std::ostream* out) {
    *out << c.name;
}

// Embedding (with a learned position table unless Llama-style), two
// blocks, a final norm and the vocabulary head, on D × stages CPU devices;
// `context` 1 with one replica is the single-process reference.
json gpt_json(const ContextCase& c, int replicas, int context, int microbatches) {
    json layers = json::array();
    json embed = {
        {"name", "embed"}, {"type", "embedding"}, {"num_embeddings", 64}, {"embedding_dim", 32}};
    if (!c.llama) {
        embed["positions"] = kSequence;
    }
    layers.push_back(embed);
    for (int b = 0; b < 2; ++b) {
        layers.push_back(test::tiny_block("block" + std::to_string(b), c.llama));
    }
    layers.push_back(test::tiny_final_norm(c.llama));
    layers.push_back(test::tiny_head());
    json placement = json::array();
    if (c.stages == 1) {
        placement.push_back({{"device", "node0/c0/cpu0"},
                             {"layers", {"embed", "block0", "block1", "ln_f", "head"}}});
    } else {
        placement.push_back({{"device", "node0/c0/cpu0"}, {"layers", {"embed", "block0"}}});
        placement.push_back({{"device", "node0/c0/cpu1"}, {"layers", {"block1", "ln_f", "head"}}});
    }
    json devices = json::array();
    for (int d = 0; d < 4; ++d) {
        devices.push_back({{"name", "cpu" + std::to_string(d)}, {"spec", "cpu"}});
    }
    json project = {
        {"format", "pipewright-project"},
        {"version", 1},
        {"model",
         {{"name", "tiny-gpt"},
          {"input", {{"shape", {kSequence}}, {"dtype", "int64"}}},
          {"loss", c.loss},
          {"tie_word_embeddings", c.tied},
          {"layers", layers}}},
        {"topology",
         {{"nodes", json::array({{{"name", "node0"},
                                  {"containers",
                                   json::array({{{"name", "c0"}, {"devices", devices}}})}}})}}},
        {"placement", placement},
        {"training",
         {{"batch_size", 4},
          {"microbatches", microbatches},
          {"schedule", c.schedule},
          {"optimizer", {{"type", "adam"}, {"lr", 0.01}}},
          {"activation_checkpointing", c.recompute},
          {"seed", 7}}}};
    if (replicas > 1) {
        project["data_parallel"] = {{"size", replicas}, {"zero_stage", c.zero_stage}};
    }
    if (context > 1) {
        project["context_parallel"] = {{"size", context}, {"exchange", c.exchange}};
    }
    return project;
}

std::vector<torch::Tensor> saved_parameters(int stages, const fs::path& out, int replica) {
    std::vector<torch::Tensor> all;
    for (int s = 0; s < stages; ++s) {
        const auto stage = test::saved_stage_parameters(out, s, replica);
        all.insert(all.end(), stage.begin(), stage.end());
    }
    return all;
}

class ContextParallelRuns : public ::testing::TestWithParam<ContextCase> {};

TEST_P(ContextParallelRuns, EveryReplicaEndsWithTheWeightsOfSingleProcessTraining) {
    const ContextCase c = GetParam();
    const int groups = c.replicas / 2;
    // Two micro-batches a group: the global batch of 4 is 2 · groups
    // micro-batches, each of 2 / groups samples.
    const json split = gpt_json(c, c.replicas, 2, 2);
    const auto dir = test::temp_dir("cp-" + c.name);
    const auto project = dir / "project.json";
    write_file_atomically(project, split.dump(2));
    const auto out = dir / "run";
    const auto r = test::run_exactly(project, kSteps, out, dir);
    ASSERT_EQ(r.code, 0) << r.output;

    // One process, whole sequences, the same global batch in the same
    // micro-batches (the groups' one after the other), no recomputation.
    ContextCase plain = c;
    plain.recompute = "none";
    const AnalyzedProject whole = test::analyze_text(gpt_json(plain, 1, 1, 2 * groups).dump());
    const AnalyzedProject p = test::analyze_text(split.dump());
    ASSERT_EQ(p.data_parallel(), c.replicas);
    ASSERT_EQ(whole.microbatch_size, p.microbatch_size);
    auto reference = test::reference_parameters(whole, kSteps, torch::kFloat64);
    const auto initial =
        backend::build_model(whole, static_cast<std::uint64_t>(whole.project.training.seed),
                             torch::kFloat64)
            ->parameters();
    EXPECT_GT(test::max_relative_difference(reference, initial), 1e-4) << "training did nothing";
    if (c.tied && c.stages > 1) {
        // The last stage's head keeps its own copy of the shared matrix,
        // the embedding's weight (the model's first parameter).
        reference.push_back(reference.front());
    }
    for (int replica = 0; replica < c.replicas; ++replica) {
        EXPECT_LE(
            test::max_relative_difference(saved_parameters(c.stages, out, replica), reference),
            1e-9)
            << "replica " << replica;
    }

    // The timeline has every replica's ranks; the summary the global batch.
    const Timeline t = load_timeline_file(out / "timeline.json");
    EXPECT_EQ(t.num_ranks(), c.replicas * c.stages);
    const auto summary = nlohmann::json::parse(test::last_json_object(r.output));
    EXPECT_EQ(summary.at("losses").size(), static_cast<std::size_t>(kSteps));
    EXPECT_EQ(summary.at("batch_size"), 4);
    EXPECT_NE(r.output.find("each sequence over 2 replicas (context parallel, " +
                            std::string(c.exchange == "ring" ? "ring" : "all-gather") + ")"),
              std::string::npos)
        << r.output;
    fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, ContextParallelRuns,
    ::testing::Values(
        ContextCase{.name = "OneStageRing"},
        ContextCase{.name = "OneStageAllGather", .exchange = "all_gather"},
        ContextCase{.name = "TwoStagesRing", .stages = 2},
        ContextCase{.name = "TwoStagesAllGatherZbH1",
                    .stages = 2,
                    .exchange = "all_gather",
                    .schedule = "zb-h1"},
        // Two groups of two: the batch splits over the groups.
        ContextCase{.name = "TwoGroupsRingZero1", .replicas = 4, .zero_stage = 1},
        ContextCase{.name = "LlamaStyleTwoStagesRing", .stages = 2, .llama = true},
        ContextCase{
            .name = "LlamaStyleSelectiveRecomputation", .llama = true, .recompute = "selective"},
        ContextCase{.name = "FullRecomputationGpipeAllGather",
                    .stages = 2,
                    .exchange = "all_gather",
                    .schedule = "gpipe",
                    .recompute = "full"},
        ContextCase{.name = "MseLossRing", .loss = "mse"},
        // The tied copies in two stages sum their gradients as before.
        ContextCase{.name = "TiedEmbeddingsTwoStagesRing", .stages = 2, .tied = true}),
    [](const auto& param_info) { return param_info.param.name; });

// What real runs do not do with context parallelism is refused by the
// launcher before any worker starts, naming the field and what to change.
// A context-parallel run resumed from a checkpoint ends bit for bit where
// one never stopped: each member takes its chunks of the step's batch again.
TEST(ContextParallelRuns, AResumedRunEndsAsFourStepsNeverStopped) {
    const ContextCase c{.name = "Resumed", .llama = true};
    const auto dir = test::temp_dir("cp-resume");
    const auto project = dir / "project.json";
    write_file_atomically(project, gpt_json(c, c.replicas, 2, 2).dump(2));
    const test::TwoPlusTwo t = test::two_plus_two(dir, project, 1, c.replicas);
    EXPECT_TRUE(test::identical(t.resumed, t.uninterrupted));
    fs::remove_all(dir);
}

TEST(ContextParallelRuns, WhatRealRunsDoNotDoIsRefusedInWordsBeforeAnyWorkerStarts) {
    const auto dir = test::temp_dir("cp-refused");
    const auto refusal = [&](const json& project, const std::string& name) {
        const auto file = dir / (name + ".json");
        write_file_atomically(file, project.dump(2));
        const auto out = dir / (name + "-run");
        const auto r =
            test::run_cli("run " + file.string() + " --steps 1 --out " + out.string(), dir, name);
        EXPECT_EQ(r.code, 1) << r.output;
        EXPECT_FALSE(fs::exists(out / "rank-0.log")) << "a worker was started";
        return r.output;
    };
    // Together with tensor parallelism.
    json tensor = gpt_json({}, 2, 2, 2);
    tensor["tensor_parallel"] = {{"size", 2}};
    const std::string tensor_output = refusal(tensor, "tensor");
    EXPECT_NE(
        tensor_output.find("context_parallel.size: 2 with tensor_parallel.size 2: real runs do not "
                           "combine context and tensor parallelism yet"),
        std::string::npos)
        << tensor_output;
    // A model whose input is not a sequence of tokens.
    json floats = gpt_json({}, 2, 2, 2);
    floats["model"]["input"] = {{"shape", {kSequence, 32}}, {"dtype", "float32"}};
    floats["model"]["loss"] = "mse";
    floats["model"]["layers"].erase(0);
    floats["placement"][0]["layers"] = {"block0", "block1", "ln_f", "head"};
    const std::string floats_output = refusal(floats, "floats");
    EXPECT_NE(
        floats_output.find("model.input: context parallelism splits a sequence of tokens, and real "
                           "runs need a model that starts with an embedding of a 1-D int64 token "
                           "input"),
        std::string::npos)
        << floats_output;
    // A layer that mixes the tokens: one output for the whole sequence.
    json flat = gpt_json({}, 2, 2, 2);
    flat["model"]["layers"][3] = {{"name", "ln_f"}, {"type", "flatten"}};
    flat["model"]["layers"][4]["in_features"] = kSequence * 32;
    const std::string flat_output = refusal(flat, "flatten");
    EXPECT_NE(flat_output.find("model.layers[3]: a flatten layer (output [256]) with context "
                               "parallelism: real runs cut every sequence over the group"),
              std::string::npos)
        << flat_output;
    // Dropout: the members' masks would repeat along the sequence.
    json dropout = gpt_json({}, 2, 2, 2);
    dropout["model"]["layers"][3] = {{"name", "ln_f"}, {"type", "dropout"}, {"p", 0.1}};
    const std::string dropout_output = refusal(dropout, "dropout");
    EXPECT_NE(dropout_output.find(
                  "model.layers[3]: dropout with context parallelism: the group's members "
                  "draw their masks from the same random stream"),
              std::string::npos)
        << dropout_output;
    // A block's own dropout likewise, named by its field.
    json block = gpt_json({}, 2, 2, 2);
    block["model"]["layers"][1]["attention_dropout"] = 0.1;
    const std::string block_output = refusal(block, "block-dropout");
    EXPECT_NE(block_output.find("model.layers[1].attention_dropout: dropout in a block with "
                                "context parallelism"),
              std::string::npos)
        << block_output;
    fs::remove_all(dir);
}

}  // namespace
}  // namespace pipewright
