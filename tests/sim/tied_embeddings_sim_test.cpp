// Tied embeddings in the simulator (model.tie_word_embeddings): one matrix
// where a stage holds both ends, two copies whose gradients are summed
// between their ranks before the optimizer step where two stages do.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analyzed_json.h"
#include "pipewright/core/project_io.h"
#include "pipewright/sim/planner.h"
#include "pipewright/sim/simulation.h"

namespace pipewright {
namespace {

using nlohmann::json;

constexpr int kVocabulary = 4096;
constexpr int kHidden = 256;
constexpr double kMatrix = double{kVocabulary} * kHidden;

// Embedding, two blocks, a norm and the head on CPUs with measured links
// (efficiency 1: Gloo's plain ring formula): cpu0 and cpu1 share a node at
// 5 GB/s and 20 µs, cpu2 is another node at 1.25 GB/s and 50 µs. `stages`
// lists each stage's device and layers (0 embed … 4 head).
json project_json(bool tied, const std::vector<std::pair<std::string, std::vector<int>>>& stages,
                  const std::string& schedule = "1f1b") {
    const std::vector<std::string> names{"embed", "block0", "block1", "ln_f", "head"};
    json layers = json::array(
        {{{"name", "embed"},
          {"type", "embedding"},
          {"num_embeddings", kVocabulary},
          {"embedding_dim", kHidden}},
         {{"name", "block0"}, {"type", "transformer_block"}, {"hidden", kHidden}, {"heads", 4}},
         {{"name", "block1"}, {"type", "transformer_block"}, {"hidden", kHidden}, {"heads", 4}},
         {{"name", "ln_f"}, {"type", "layernorm"}, {"features", kHidden}},
         {{"name", "head"},
          {"type", "linear"},
          {"in_features", kHidden},
          {"out_features", kVocabulary},
          {"bias", false}}});
    json placement = json::array();
    for (const auto& [device, members] : stages) {
        json list = json::array();
        for (const int l : members) {
            list.push_back(names.at(static_cast<std::size_t>(l)));
        }
        placement.push_back({{"device", device}, {"layers", list}});
    }
    const json link = [](double bandwidth, double latency) {
        return json{{"bandwidth_GBps", bandwidth}, {"latency_us", latency}, {"efficiency", 1}};
    }(5, 20);
    return {
        {"format", "pipewright-project"},
        {"version", 1},
        {"model",
         {{"name", "tied"},
          {"input", {{"shape", {128}}, {"dtype", "int64"}}},
          {"loss", "cross_entropy"},
          {"tie_word_embeddings", tied},
          {"layers", layers}}},
        {"topology",
         {{"links",
           {{"intra_container", link},
            {"intra_node", link},
            {"inter_node", {{"bandwidth_GBps", 1.25}, {"latency_us", 50}, {"efficiency", 1}}}}},
          {"nodes",
           {{{"name", "a"},
             {"containers",
              {{{"name", "p"},
                {"devices",
                 {{{"name", "cpu0"}, {"spec", "cpu"}}, {{"name", "cpu1"}, {"spec", "cpu"}}}}}}}},
            {{"name", "b"},
             {"containers",
              {{{"name", "p"}, {"devices", {{{"name", "cpu2"}, {"spec", "cpu"}}}}}}}}}}}},
        {"placement", placement},
        {"training",
         {{"batch_size", 8},
          {"microbatches", 4},
          {"schedule", schedule},
          {"optimizer", {{"type", "adam"}, {"lr", 0.001}}}}}};
}

AnalyzedProject analyze(const json& j) {
    return testing::analyzed_json(j);
}

TEST(TiedEmbeddingsSim, OneStageHoldsAndStepsOneMatrix) {
    const std::vector<std::pair<std::string, std::vector<int>>> one{{"a/p/cpu0", {0, 1, 2, 3, 4}}};
    const AnalyzedProject tied = analyze(project_json(true, one));
    const AnalyzedProject untied = analyze(project_json(false, one));
    ASSERT_TRUE(tied.tied);
    EXPECT_EQ(model_parameters(untied) - model_parameters(tied), kVocabulary * kHidden);
    const auto tied_costs = stage_costs(tied, {});
    const auto untied_costs = stage_costs(untied, {});
    EXPECT_EQ(untied_costs[0].parameters - tied_costs[0].parameters, kVocabulary * kHidden);
    EXPECT_LT(tied_costs[0].optimizer_s, untied_costs[0].optimizer_s);
    const SimulationReport r = simulate_project(tied, {}, Recording::summary);
    EXPECT_FALSE(r.tied_embedding_sync);  // nothing to sum
    EXPECT_LT(r.devices[0].peak_memory_bytes,
              simulate_project(untied, {}, Recording::summary).devices[0].peak_memory_bytes);
}

TEST(TiedEmbeddingsSim, TwoRanksSumTheirCopiesOverTheirLinkBeforeStepping) {
    const std::vector<std::pair<std::string, std::vector<int>>> split{{"a/p/cpu0", {0, 1, 2}},
                                                                      {"b/p/cpu2", {3, 4}}};
    const AnalyzedProject tied = analyze(project_json(true, split));
    const SimulationReport r = simulate_project(tied, {}, Recording::summary);
    ASSERT_TRUE(r.tied_embedding_sync);
    const TiedEmbeddingSync& sync = *r.tied_embedding_sync;
    EXPECT_EQ(sync.embedding_rank, 0);
    EXPECT_EQ(sync.head_rank, 1);
    EXPECT_FALSE(sync.same_rank);
    EXPECT_EQ(sync.library, CollectiveLibrary::gloo);
    // float32 gradients of the matrix; a ring of two over the network:
    // 2(D−1)·α + 2(D−1)/D · bytes/B.
    EXPECT_DOUBLE_EQ(sync.bytes, 4 * kMatrix);
    EXPECT_NEAR(sync.seconds, 2 * 50e-6 + sync.bytes / 1.25e9, 1e-9);
    // Neither rank steps before the sum: the iteration ends at the later
    // rank's last action, plus the sum, plus the slower step.
    const double last = std::max(r.devices[0].end_s, r.devices[1].end_s);
    const double step = std::max(r.stages[0].optimizer_s, r.stages[1].optimizer_s);
    EXPECT_NEAR(r.iteration_time_s, last + sync.seconds + step, 1e-9);
    // Each stage keeps its copy.
    const AnalyzedProject untied = analyze(project_json(false, split));
    const auto untied_costs = stage_costs(untied, {});
    EXPECT_EQ(r.stages[1].parameters, untied_costs[1].parameters);
}

TEST(TiedEmbeddingsSim, AVShapeSumsBothCopiesOnItsFirstRank) {
    const std::vector<std::pair<std::string, std::vector<int>>> v{
        {"a/p/cpu0", {0}}, {"a/p/cpu1", {1}}, {"a/p/cpu1", {2}}, {"a/p/cpu0", {3, 4}}};
    const SimulationReport r =
        simulate_project(analyze(project_json(true, v, "zbv")), {}, Recording::summary);
    ASSERT_TRUE(r.tied_embedding_sync);
    EXPECT_TRUE(r.tied_embedding_sync->same_rank);
    EXPECT_EQ(r.tied_embedding_sync->head_rank, 0);
    EXPECT_GT(r.tied_embedding_sync->seconds, 0);
    // An add in memory, far below the network's sum.
    EXPECT_LT(r.tied_embedding_sync->seconds, r.tied_embedding_sync->bytes / 1.25e9);
}

// On one device whose memory holds the model with one matrix but not with
// two, the planner finds the one-stage plan the simulation fits: its memory
// estimate counts a stage of every layer's shared matrix once, as the
// simulator does.
TEST(TiedEmbeddingsSim, ThePlannerCountsOneStagesSharedMatrixOnce) {
    json j = project_json(true, {{"a/p/cpu0", {0, 1, 2}}, {"b/p/cpu2", {3, 4}}});
    // cpu0 and cpu2, a network so slow between them that one stage is
    // faster than any split, if it fits.
    j["topology"]["nodes"][0]["containers"][0]["devices"].erase(1);
    j["topology"]["links"]["inter_node"]["bandwidth_GBps"] = 0.01;
    const json one_stage = project_json(true, {{"a/p/cpu0", {0, 1, 2, 3, 4}}});
    const SimulationReport alone = simulate_project(analyze(one_stage), {}, Recording::summary);
    // Adam in float32: weights, gradients and two moments, 16 bytes a
    // parameter. A second copy of the matrix would need 16 MiB, four times
    // the room left on each device.
    const double peak = static_cast<double>(alone.devices[0].peak_memory_bytes);
    const double room = 4 * kMatrix;
    for (auto& node : j["topology"]["nodes"]) {
        node["containers"][0]["devices"][0]["memory_GiB"] = (peak + room) / (1024.0 * 1024 * 1024);
    }
    Diagnostics d;
    const auto project = project_from_json(j, d);
    ASSERT_TRUE(project) << d.format();
    const PlanResult plan = plan_pipeline(*project, PlanOptions{});
    ASSERT_TRUE(plan.feasible) << plan.why_nothing_fits;
    ASSERT_TRUE(plan.plan.report);
    EXPECT_TRUE(plan.plan.report->all_fit);
    EXPECT_EQ(plan.plan.stages.size(), 1u);
    EXPECT_NEAR(plan.plan.report->iteration_time_s, alone.iteration_time_s,
                1e-9 * alone.iteration_time_s);
}

}  // namespace
}  // namespace pipewright
