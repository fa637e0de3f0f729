// Real expert-parallel runs: a small mixture-of-experts GPT whose routed
// experts are split over E = 2 of its data-parallel replicas, Gloo worker
// processes dispatching tokens to their experts with all-to-alls. After a
// few steps every replica's parameters must be single-process training's:
// its dense weights whole, its experts the slice that its place in the
// expert group holds.
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "backend_test_util.h"
#include "cli_runner.h"
#include "layers/mixture_of_experts.h"
#include "pipewright/backend/modules.h"
#include "pipewright/core/project_io.h"
#include "pipewright/core/timeline.h"
#include "pipewright/core/transformer_dims.h"
#include "resume_check.h"

namespace pipewright {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int kSteps = 3;
constexpr int kExperts = 4;

struct ExpertCase {
    int stages = 1;
    int replicas = 2;
    std::string schedule = "1f1b";
    std::string optimizer = "adam";
    int zero_stage = 0;
    bool llama = false;  // SwiGLU, RMSNorm, no biases, a shared expert
    bool checkpointing = false;
    int top_k = 2;
    int context = 1;  // replicas sharing each sequence
};

void PrintTo(const ExpertCase& c, std::ostream* out) {
    *out << c.stages << " stages × " << c.replicas << " replicas, " << c.schedule << ", "
         << c.optimizer << ", ZeRO-" << c.zero_stage << (c.llama ? ", Llama-style" : "")
         << (c.checkpointing ? ", checkpointing" : "") << ", top " << c.top_k
         << (c.context > 1 ? ", context parallel" : "");
}

// Embedding, two MoE blocks, a final norm and the head; stages cut after
// the first block. `experts`: the expert-parallel size (1: the reference).
json moe_gpt(const ExpertCase& c, int replicas, int microbatches, int experts) {
    json layers = json::array();
    layers.push_back(
        {{"name", "embed"}, {"type", "embedding"}, {"num_embeddings", 64}, {"embedding_dim", 32}});
    for (int b = 0; b < 2; ++b) {
        json block = {{"name", "block" + std::to_string(b)},
                      {"type", "transformer_block"},
                      {"hidden", 32},
                      {"heads", 4},
                      {"experts", kExperts},
                      {"top_k", c.top_k},
                      {"expert_ffn_hidden", 24}};
        if (c.llama) {
            block.update({{"kv_heads", 2},
                          {"activation", "swiglu"},
                          {"norm", "rmsnorm"},
                          {"bias", false},
                          {"qkv_bias", false},
                          {"rotary", true},
                          {"shared_experts", 1}});
        }
        layers.push_back(block);
    }
    layers.push_back(test::tiny_final_norm(c.llama));
    layers.push_back(test::tiny_head());
    json placement = json::array();
    if (c.stages == 1) {
        placement.push_back({{"device", "node0/c0/cpu0"},
                             {"layers", {"embed", "block0", "block1", "ln_f", "head"}}});
    } else if (c.stages == 2) {
        placement.push_back({{"device", "node0/c0/cpu0"}, {"layers", {"embed", "block0"}}});
        placement.push_back({{"device", "node0/c0/cpu1"}, {"layers", {"block1", "ln_f", "head"}}});
    } else {  // a V over two ranks: stages 0 and 3 on the first, 1 and 2 on the second
        placement.push_back({{"device", "node0/c0/cpu0"}, {"layers", {"embed", "block0"}}});
        placement.push_back({{"device", "node0/c0/cpu1"}, {"layers", {"block1"}}});
        placement.push_back({{"device", "node0/c0/cpu1"}, {"layers", {"ln_f"}}});
        placement.push_back({{"device", "node0/c0/cpu0"}, {"layers", {"head"}}});
    }
    const int ranks = std::min(c.stages, 2);
    json project = test::token_model_project("tiny-moe", layers, placement, ranks * replicas,
                                             {{"batch_size", 8 * c.replicas},
                                              {"microbatches", microbatches},
                                              {"schedule", c.schedule},
                                              {"optimizer", {{"type", c.optimizer}, {"lr", 0.01}}},
                                              {"activation_checkpointing", c.checkpointing},
                                              {"seed", 7}});
    if (replicas > 1) {
        project["data_parallel"] = {{"size", replicas}, {"zero_stage", c.zero_stage}};
    }
    if (experts > 1) {
        project["expert_parallel"] = {{"size", experts}};
    }
    if (replicas > 1 && c.context > 1) {
        project["context_parallel"] = {{"size", c.context}};
    }
    return project;
}

// Micro-batches of each replica: a V schedule wants twice its ranks.
int microbatches_of(const ExpertCase& c) {
    return c.stages == 4 ? 4 : 2;
}

// Single-process training's parameters, by name.
std::vector<std::pair<std::string, torch::Tensor>> reference(const ExpertCase& c) {
    // Every replica's micro-batches, one after the other.
    const int microbatches = microbatches_of(c) * c.replicas;
    const AnalyzedProject whole = test::analyze_text(moe_gpt(c, 1, microbatches, 1).dump());
    const auto trained = test::reference_parameters(whole, kSteps, torch::kFloat64);
    const auto named = backend::build_model(whole, 7, torch::kFloat64)->named_parameters();
    EXPECT_EQ(named.size(), trained.size());
    EXPECT_GT(test::max_relative_difference(named.values(), trained), 1e-4)
        << "training did nothing";
    std::vector<std::pair<std::string, torch::Tensor>> out;
    for (std::size_t i = 0; i < named.size(); ++i) {
        out.emplace_back(named[i].key(), trained[i]);
    }
    return out;
}

// What replica `replica`'s stage `stage` must hold: its layers' reference
// parameters, the routed experts narrowed to those of `position` in its
// expert group of `size`.
std::vector<torch::Tensor> expected_stage(
    const AnalyzedProject& p, int stage, int position, int size,
    const std::vector<std::pair<std::string, torch::Tensor>>& whole) {
    const auto& range = p.stages[static_cast<std::size_t>(stage)];
    std::vector<torch::Tensor> want;
    for (const auto& [key, value] : whole) {
        const std::string layer = key.substr(0, key.find('.'));
        for (int l = range.first_layer; l <= range.last_layer; ++l) {
            if (p.project.model.layers[static_cast<std::size_t>(l)].name != layer) {
                continue;
            }
            const std::int64_t local = kExperts / size;
            want.push_back(backend::is_routed_expert_parameter(key)
                               ? value.narrow(0, position * local, local)
                               : value);
        }
    }
    return want;
}

class ExpertParallelRuns : public ::testing::TestWithParam<ExpertCase> {};

TEST_P(ExpertParallelRuns, EveryReplicaEndsWithItsExpertsOfSingleProcessTraining) {
    const ExpertCase c = GetParam();
    const auto dir = test::temp_dir("ep-" + c.schedule);
    const auto project = dir / "project.json";
    const json text = moe_gpt(c, c.replicas, microbatches_of(c), 2);
    write_file_atomically(project, text.dump(2));
    const auto out = dir / "run";
    const auto r = test::run_exactly(project, kSteps, out, dir);
    ASSERT_EQ(r.code, 0) << r.output;
    const AnalyzedProject split = test::analyze_text(text.dump());
    const auto whole = reference(c);
    for (int replica = 0; replica < c.replicas; ++replica) {
        for (int s = 0; s < split.schedule.num_stages; ++s) {
            SCOPED_TRACE("replica " + std::to_string(replica) + ", stage " + std::to_string(s));
            const auto saved = test::saved_stage_parameters(out, s, replica);
            EXPECT_LE(test::max_relative_difference(
                          saved, expected_stage(split, s, replica % 2, 2, whole)),
                      1e-9);
            // Not a tautology: the other member's experts differ (in the
            // stages with a block).
            const auto& range = split.stages[static_cast<std::size_t>(s)];
            bool experts = false;
            for (int l = range.first_layer; l <= range.last_layer; ++l) {
                experts =
                    experts || has_experts(split.project.model.layers[static_cast<std::size_t>(l)]);
            }
            if (experts) {
                EXPECT_GT(test::max_relative_difference(
                              saved, expected_stage(split, s, 1 - replica % 2, 2, whole)),
                          1e-3);
            }
        }
    }
    const auto summary = nlohmann::json::parse(test::last_json_object(r.output));
    EXPECT_EQ(summary.at("losses").size(), static_cast<std::size_t>(kSteps));
    fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(LayoutsAndSchedules, ExpertParallelRuns,
                         ::testing::Values(ExpertCase{1, 2, "1f1b", "adam"},
                                           // The backward split in two: W walks the graph, and its
                                           // all-to-alls, again.
                                           ExpertCase{2, 2, "zb-h1", "sgd", 0, true},
                                           // Two holders of each expert: their gradients average
                                           // over them, ZeRO-1 shards their state between them.
                                           ExpertCase{1, 4, "1f1b", "adamw", 1},
                                           ExpertCase{2, 2, "gpipe", "adam", 1, false, true, 1},
                                           // DualPipeV's overlapped pairs: a forward's and a
                                           // backward's all-to-alls one after the other.
                                           ExpertCase{4, 2, "dualpipev", "adam", 0, true},
                                           // The two replicas also share every sequence: each
                                           // routes its half of the tokens through both.
                                           ExpertCase{2, 2, "1f1b", "adam", 0, true, false, 2, 2}),
                         [](const auto& param_info) {
                             const ExpertCase& c = param_info.param;
                             std::string name =
                                 std::to_string(c.stages) + "x" + std::to_string(c.replicas) + "_" +
                                 c.schedule + "_" + c.optimizer + "_zero" +
                                 std::to_string(c.zero_stage) + (c.llama ? "_llama" : "") +
                                 (c.checkpointing ? "_checkpointing" : "") + "_top" +
                                 std::to_string(c.top_k) + (c.context > 1 ? "_context" : "");
                             std::replace(name.begin(), name.end(), '-', '_');
                             return name;
                         });

// Checkpoints hold both parameter sets' optimizer state: the dense one's
// shard of all replicas and the experts' shard of their holders (ZeRO-1,
// four replicas, two holders of each expert). 2 steps, a checkpoint and 2
// more end bit for bit where 4 uninterrupted steps do.
TEST(ExpertParallelRuns, AResumedRunEndsAsFourStepsNeverStopped) {
    const ExpertCase c{1, 4, "1f1b", "adamw", 1};
    const auto dir = test::temp_dir("ep-resume");
    const auto project = dir / "project.json";
    write_file_atomically(project, moe_gpt(c, c.replicas, 2, 2).dump(2));
    const test::TwoPlusTwo t = test::two_plus_two(dir, project, 1, c.replicas);
    EXPECT_TRUE(test::identical(t.resumed, t.uninterrupted));
    fs::remove_all(dir);
}

// The shipped Mixtral-style example: 2 stages × 2 replicas, experts split.
TEST(ExpertParallelRuns, TheShippedSmallMixtralTrainsOnFourWorkers) {
    const auto dir = test::temp_dir("ep-example");
    const auto out = dir / "run";
    const auto r = test::run_cli(std::string("run ") + PIPEWRIGHT_ASSETS_DIR +
                                     "/examples/mixtral-tiny-e2-cpu.json --steps 6 "
                                     "--threads-per-rank 1 --json --out " +
                                     out.string(),
                                 dir);
    ASSERT_EQ(r.code, 0) << r.output;
    EXPECT_NE(r.output.find("2 replicas × 2 ranks, ZeRO-0, experts split over 2 replicas"),
              std::string::npos)
        << r.output;
    const auto summary = nlohmann::json::parse(test::last_json_object(r.output));
    const auto& losses = summary.at("losses");
    ASSERT_EQ(losses.size(), 6U);
    EXPECT_LT(losses.back().get<double>(), losses.front().get<double>() - 0.3);
    fs::remove_all(dir);
}

TEST(ExpertParallelRuns, UnderTensorParallelismIsRefusedInWords) {
    const auto dir = test::temp_dir("ep-tp");
    json text = moe_gpt(ExpertCase{}, 2, 2, 2);
    for (int d = 4; d < 8; ++d) {
        text["topology"]["nodes"][0]["containers"][0]["devices"].push_back(
            {{"name", "cpu" + std::to_string(d)}, {"spec", "cpu"}});
    }
    text["tensor_parallel"] = {{"size", 2}};
    const auto project = dir / "project.json";
    write_file_atomically(project, text.dump(2));
    const auto r = test::run_cli("run " + project.string() + " --steps 1", dir);
    EXPECT_NE(r.code, 0);
    EXPECT_NE(r.output.find("model.layers[1].experts"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("a mixture of experts under tensor parallelism"), std::string::npos)
        << r.output;
    fs::remove_all(dir);
}

}  // namespace
}  // namespace pipewright
