// Pipelined training must equal plain training: same model, same data, same
// micro-batches, gradient accumulation, one optimizer step per iteration.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <thread>

#include "backend_test_util.h"
#include "cli_runner.h"
#include "execution/recomputation_units.h"
#include "pipewright/backend/executor.h"
#include "pipewright/backend/modules.h"

namespace pipewright {
namespace {

using test::MlpSpec;

struct InProcessRun {
    std::vector<std::unique_ptr<backend::RankExecutor>> executors;
    std::vector<std::vector<backend::StepRecord>> records;  // per rank
};

// Runs every rank as a thread of this process over the in-process transport.
InProcessRun run_in_process(const AnalyzedProject& p, int steps, torch::Dtype dtype) {
    const int world = p.num_ranks();
    backend::InProcessGroup group(world, std::chrono::seconds(30));
    const backend::SyntheticTask task(p, dtype);
    std::vector<backend::Batch> batches;
    for (int s = 0; s < steps; ++s) {
        batches.push_back(task.batch(s));
    }
    InProcessRun run;
    run.executors.resize(static_cast<std::size_t>(world));
    run.records.resize(static_cast<std::size_t>(world));
    std::vector<std::unique_ptr<backend::Transport>> transports;
    for (int r = 0; r < world; ++r) {
        transports.push_back(group.transport(r));
    }
    std::vector<std::string> errors(static_cast<std::size_t>(world));
    std::vector<std::thread> threads;
    for (int r = 0; r < world; ++r) {
        threads.emplace_back([&, r] {
            const auto ri = static_cast<std::size_t>(r);
            try {
                run.executors[ri] =
                    std::make_unique<backend::RankExecutor>(p, r, *transports[ri], dtype);
                for (int s = 0; s < steps; ++s) {
                    run.records[ri].push_back(
                        run.executors[ri]->run_step(s, batches[static_cast<std::size_t>(s)]));
                }
            } catch (const std::exception& e) {
                errors[ri] = e.what();
                group.abort();
            }
        });
    }
    for (auto& t : threads) {
        t.join();
    }
    for (int r = 0; r < world; ++r) {
        EXPECT_EQ(errors[static_cast<std::size_t>(r)], "") << "rank " << r;
    }
    return run;
}

// Parameters of all stages in model order.
std::vector<torch::Tensor> pipelined_parameters(const AnalyzedProject& p, const InProcessRun& run) {
    std::vector<torch::Tensor> all;
    for (int s = 0; s < p.schedule.num_stages; ++s) {
        const int r = p.schedule.stage_rank[static_cast<std::size_t>(s)];
        const auto& ex = run.executors[static_cast<std::size_t>(r)];
        if (!ex) {
            return {};
        }
        for (const auto& t : ex->module(s)->parameters()) {
            all.push_back(t.detach());
        }
    }
    return all;
}

class Equivalence : public ::testing::TestWithParam<MlpSpec> {};

TEST_P(Equivalence, PipelinedParametersEqualSingleProcessTraining) {
    const MlpSpec spec = GetParam();
    const AnalyzedProject p = test::analyze_text(test::mlp_project_json(spec));
    ASSERT_EQ(p.schedule.name, spec.schedule);
    const int steps = 3;
    const auto run = run_in_process(p, steps, torch::kFloat64);
    const auto pipelined = pipelined_parameters(p, run);
    const auto reference = test::reference_parameters(p, steps, torch::kFloat64);
    ASSERT_EQ(pipelined.size(), reference.size());
    EXPECT_LE(test::max_relative_difference(pipelined, reference), 1e-5);
    // Training moved the weights: equality is not the trivial kind.
    const auto initial =
        backend::build_model(p, static_cast<std::uint64_t>(p.project.training.seed),
                             torch::kFloat64)
            ->parameters();
    EXPECT_GT(test::max_relative_difference(reference, initial), 1e-4);
    // Every rank recorded every action of its list, each with start <= end.
    for (int r = 0; r < p.num_ranks(); ++r) {
        const auto& rec = run.records[static_cast<std::size_t>(r)].back();
        EXPECT_EQ(rec.events.size(), p.schedule.ranks[static_cast<std::size_t>(r)].size());
        for (const auto& e : rec.events) {
            EXPECT_LE(e.start_s, e.end_s);
        }
    }
}

MlpSpec spec(std::string schedule, int ranks, int stages, int microbatches,
             std::string optimizer = "sgd", bool checkpointing = false) {
    MlpSpec s;
    s.checkpointing = checkpointing;
    s.schedule = std::move(schedule);
    s.ranks = ranks;
    s.stages = stages;
    s.microbatches = microbatches;
    s.layers = std::max(4, stages);
    s.batch = 4 * microbatches;
    s.optimizer = std::move(optimizer);
    return s;
}

INSTANTIATE_TEST_SUITE_P(
    Schedules, Equivalence,
    ::testing::Values(spec("gpipe", 2, 2, 4), spec("1f1b", 2, 2, 4), spec("1f1b", 4, 4, 8),
                      spec("interleaved-1f1b", 2, 4, 4), spec("zb-h1", 2, 2, 4),
                      spec("zb-h1", 3, 3, 6, "adam"), spec("gpipe", 3, 3, 3, "adamw"),
                      // Activation checkpointing recomputes the
                      // forward in backward: the same arithmetic.
                      spec("gpipe", 2, 2, 4, "sgd", true), spec("1f1b", 3, 3, 6, "sgd", true),
                      spec("interleaved-1f1b", 2, 4, 4, "sgd", true),
                      spec("zb-h1", 2, 2, 4, "adam", true),
                      // The schedule library: looped BFS runs the
                      // backwards latest micro-batch first.
                      spec("looped-bfs", 2, 4, 3), spec("zb-h2", 3, 3, 6, "adam"),
                      spec("interleaved-zb", 2, 4, 4), spec("interleaved-zb", 3, 6, 5, "adamw"),
                      spec("interleaved-zb", 2, 4, 4, "sgd", true),
                      // ZB-V: the last stage, and the loss, on rank 0.
                      spec("zbv", 2, 4, 4), spec("zbv", 3, 6, 5, "adam"),
                      spec("zbv", 2, 4, 4, "sgd", true),
                      // DualPipeV: overlapped pairs, B and I/W mixed.
                      spec("dualpipev", 2, 4, 4), spec("dualpipev", 3, 6, 7, "adam"),
                      spec("dualpipev", 2, 4, 5, "sgd", true),
                      // zb-auto's lists for the project's estimated costs.
                      spec("zb-auto", 3, 3, 5), spec("zb-auto", 2, 2, 1, "adamw")),
    [](const auto& test_info) {
        const MlpSpec& p = test_info.param;
        std::string name = p.schedule + "_" + std::to_string(p.ranks) + "ranks_" + p.optimizer +
                           (p.checkpointing ? "_checkpointing" : "");
        for (auto& c : name) {
            c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
        }
        return name;
    });

// A stage without parameters (a GELU alone, as `fc0 | act0 | fc1`): its W
// is a no-op, yet every schedule, split backward or not, trains as one
// process would, and the W is still recorded.
MlpSpec parameterless_middle(std::string schedule, int ranks, int stages, int microbatches) {
    MlpSpec s = spec(std::move(schedule), ranks, stages, microbatches);
    if (stages == 3) {
        s.layers = 2;  // fc0 | act0 | fc1
        s.stage_entries = {1, 1, 1};
    } else {
        s.layers = 3;  // fc0 | act0 | fc1 act1 | fc2: act0 alone on rank 1
        s.stage_entries = {1, 1, 2, 1};
    }
    return s;
}

class ParameterlessStage : public ::testing::TestWithParam<MlpSpec> {};

TEST_P(ParameterlessStage, TrainsAsOneProcessAndRecordsItsNoOpW) {
    const MlpSpec spec = GetParam();
    const AnalyzedProject p = test::analyze_text(test::mlp_project_json(spec));
    ASSERT_EQ(p.schedule.name, spec.schedule);
    ASSERT_TRUE(backend::build_stage(p, 1, torch::kFloat64)->parameters().empty());
    const auto run = run_in_process(p, 3, torch::kFloat64);
    const auto pipelined = pipelined_parameters(p, run);
    const auto reference = test::reference_parameters(p, 3, torch::kFloat64);
    ASSERT_EQ(pipelined.size(), reference.size());
    EXPECT_LE(test::max_relative_difference(pipelined, reference), 1e-5);
    const int rank = p.schedule.stage_rank.at(1);
    const auto& actions = p.schedule.ranks.at(static_cast<std::size_t>(rank));
    const auto& events = run.records.at(static_cast<std::size_t>(rank)).back().events;
    ASSERT_EQ(events.size(), actions.size());
    const auto weight_passes = std::count_if(actions.begin(), actions.end(), [](const Action& a) {
        return a.stage == 1 && a.type == ActionType::backward_weight;
    });
    const bool splits_backward = spec.schedule != "1f1b" && spec.schedule != "gpipe";
    EXPECT_EQ(weight_passes > 0, splits_backward);
}

INSTANTIATE_TEST_SUITE_P(Schedules, ParameterlessStage,
                         ::testing::Values(parameterless_middle("gpipe", 3, 3, 3),
                                           parameterless_middle("1f1b", 3, 3, 4),
                                           parameterless_middle("zb-h1", 3, 3, 4),
                                           parameterless_middle("zb-h2", 3, 3, 5),
                                           parameterless_middle("zb-auto", 3, 3, 4),
                                           parameterless_middle("interleaved-zb", 2, 4, 4),
                                           parameterless_middle("zbv", 2, 4, 4),
                                           parameterless_middle("dualpipev", 2, 4, 5)),
                         [](const auto& test_info) {
                             std::string name = test_info.param.schedule;
                             for (auto& c : name) {
                                 c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                             }
                             return name;
                         });

// A one-stage model with dropout: checkpointing must replay each
// micro-batch's masks when it recomputes the forward, and leave the random
// draws after it as they were, so training is the same with and without it.
TEST(Checkpointing, RecomputedForwardReplaysTheDropoutMasks) {
    const auto project_with = [](bool checkpointing, double drop = 0.5) {
        nlohmann::json j = nlohmann::json::parse(test::mlp_project_json(spec("gpipe", 1, 1, 4)));
        auto& layers = j["model"]["layers"];
        nlohmann::json with_dropout = nlohmann::json::array();
        for (std::size_t i = 0; i < layers.size(); ++i) {
            with_dropout.push_back(layers[i]);
            if (i == 0) {
                with_dropout.push_back({{"name", "drop"}, {"type", "dropout"}, {"p", drop}});
            }
        }
        layers = with_dropout;
        auto& placed = j["placement"][0]["layers"];
        placed.insert(placed.begin() + 1, "drop");
        j["training"]["activation_checkpointing"] = checkpointing;
        return test::analyze_text(j.dump());
    };
    // Building the stages seeds the generator the masks come from, so both
    // runs draw the same masks unless the recompute breaks the stream.
    const auto train = [](const AnalyzedProject& p) {
        return pipelined_parameters(p, run_in_process(p, 2, torch::kFloat64));
    };
    const AnalyzedProject plain = project_with(false);
    const AnalyzedProject checkpointed = project_with(true);
    ASSERT_EQ(plain.schedule.num_stages, 1);
    const auto a = train(plain);
    const auto b = train(checkpointed);
    ASSERT_FALSE(a.empty());
    EXPECT_LE(test::max_relative_difference(b, a), 1e-12);
    // The masks matter (without dropout training ends elsewhere), so a
    // recompute that drew other masks would fail the comparison above.
    const auto without_dropout = train(project_with(false, 0.0));
    EXPECT_GT(test::max_relative_difference(without_dropout, a), 1e-6);
}

// A token model's `layers` on one CPU, trained by gpipe in 4 micro-batches
// with `recompute` as activation_checkpointing. One stage: ranks that run as
// threads of one process would share the generator that building their
// stages seeds, and the tests below compare dropout masks.
AnalyzedProject one_stage_decoder(const nlohmann::json& layers, const nlohmann::json& recompute) {
    nlohmann::json names = nlohmann::json::array();
    for (const auto& l : layers) {
        names.push_back(l["name"]);
    }
    const nlohmann::json project = test::token_model_project(
        "tiny-gpt", layers, {{{"device", "node0/c0/cpu0"}, {"layers", names}}}, 1,
        {{"batch_size", 8},
         {"microbatches", 4},
         {"schedule", "gpipe"},
         {"optimizer", {{"type", "sgd"}, {"lr", 0.05}}},
         {"activation_checkpointing", recompute},
         {"seed", 3}});
    return test::analyze_text(project.dump());
}

// A decoder with dropout between its blocks, under checkpointing: the
// backward rebuilds one unit at a time (the embedding and its dropout, each
// block, the dropout between them, the norm and head), each replaying the
// masks its first forward drew.
TEST(Checkpointing, EachRebuiltUnitReplaysItsOwnDropoutMasks) {
    const auto project_with = [](bool checkpointing, double drop) {
        nlohmann::json layers = nlohmann::json::array();
        layers.push_back({{"name", "embed"},
                          {"type", "embedding"},
                          {"num_embeddings", 64},
                          {"embedding_dim", 32}});
        layers.push_back({{"name", "drop0"}, {"type", "dropout"}, {"p", drop}});
        layers.push_back(test::tiny_block("block0", false));
        layers.push_back({{"name", "drop1"}, {"type", "dropout"}, {"p", drop}});
        layers.push_back(test::tiny_block("block1", false));
        layers.push_back(test::tiny_final_norm(false));
        layers.push_back(test::tiny_head());
        return one_stage_decoder(layers, checkpointing);
    };
    const auto train = [](const AnalyzedProject& p) {
        return pipelined_parameters(p, run_in_process(p, 2, torch::kFloat64));
    };
    const AnalyzedProject checkpointed = project_with(true, 0.3);
    ASSERT_EQ(checkpointed.schedule.num_stages, 1);
    const auto a = train(project_with(false, 0.3));
    const auto b = train(checkpointed);
    ASSERT_FALSE(a.empty());
    EXPECT_LE(test::max_relative_difference(b, a), 1e-12);
    // The masks matter: without dropout training ends elsewhere.
    EXPECT_GT(test::max_relative_difference(train(project_with(false, 0.0)), a), 1e-6);
}

// Blocks with dropout of their own (on the attention's probabilities and on
// both residual branches, as Megatron-LM's GPT): full checkpointing rebuilds
// each block replaying its masks, and selective recomputation replays the
// attention's inside its backward; training is the same as keeping
// everything, and the masks matter.
TEST(Checkpointing, ABlocksOwnDropoutIsReplayedByEveryRecomputation) {
    const auto project_with = [](const nlohmann::json& recompute, double drop) {
        nlohmann::json layers = nlohmann::json::array();
        layers.push_back({{"name", "embed"},
                          {"type", "embedding"},
                          {"num_embeddings", 64},
                          {"embedding_dim", 32}});
        for (int b = 0; b < 2; ++b) {
            nlohmann::json block = test::tiny_block("block" + std::to_string(b), false);
            block["attention_dropout"] = drop;
            block["hidden_dropout"] = drop;
            layers.push_back(block);
        }
        layers.push_back(test::tiny_final_norm(false));
        layers.push_back(test::tiny_head());
        return one_stage_decoder(layers, recompute);
    };
    const auto train = [](const AnalyzedProject& p) {
        return pipelined_parameters(p, run_in_process(p, 2, torch::kFloat64));
    };
    const auto kept = train(project_with(false, 0.3));
    ASSERT_FALSE(kept.empty());
    for (const nlohmann::json& recompute : {nlohmann::json(true), nlohmann::json("selective")}) {
        SCOPED_TRACE(recompute.dump());
        EXPECT_LE(test::max_relative_difference(train(project_with(recompute, 0.3)), kept), 1e-12);
    }
    EXPECT_GT(test::max_relative_difference(train(project_with(false, 0.0)), kept), 1e-6);
}

// The tiny decoder of `blocks` blocks (dropout of `drop` after the
// embedding and between blocks), on `stages` CPUs of equal layer counts'
// worth (the embedding with the first, the norm and head with the last),
// trained by `schedule` with `recompute` as activation_checkpointing and
// `blocks_recomputed` as recompute_blocks (0: unset).
AnalyzedProject tiny_decoder(int blocks, int stages, const std::string& schedule,
                             const nlohmann::json& recompute, int blocks_recomputed, double drop) {
    nlohmann::json layers = nlohmann::json::array();
    layers.push_back(
        {{"name", "embed"}, {"type", "embedding"}, {"num_embeddings", 64}, {"embedding_dim", 32}});
    for (int b = 0; b < blocks; ++b) {
        layers.push_back({{"name", "drop" + std::to_string(b)}, {"type", "dropout"}, {"p", drop}});
        layers.push_back(test::tiny_block("block" + std::to_string(b), false));
    }
    layers.push_back(test::tiny_final_norm(false));
    layers.push_back(test::tiny_head());
    nlohmann::json placement = nlohmann::json::array();
    const std::size_t per = layers.size() / static_cast<std::size_t>(stages);
    for (int s = 0; s < stages; ++s) {
        nlohmann::json names = nlohmann::json::array();
        const std::size_t end =
            s + 1 == stages ? layers.size() : per * static_cast<std::size_t>(s + 1);
        for (std::size_t l = per * static_cast<std::size_t>(s); l < end; ++l) {
            names.push_back(layers[l]["name"]);
        }
        placement.push_back({{"device", "node0/c0/cpu" + std::to_string(s)}, {"layers", names}});
    }
    nlohmann::json training = {{"batch_size", 8},
                               {"microbatches", 4},
                               {"schedule", schedule},
                               {"optimizer", {{"type", "sgd"}, {"lr", 0.05}}},
                               {"activation_checkpointing", recompute},
                               {"seed", 3}};
    if (blocks_recomputed > 0) {
        training["recompute_blocks"] = blocks_recomputed;
    }
    return test::analyze_text(
        test::token_model_project("tiny-gpt", layers, placement, stages, training).dump());
}

// Partial recomputation (training.recompute_blocks): the first block of
// the stage is rebuilt, replaying its dropout masks, while the embedding,
// the second block and the head keep their graphs from the forward;
// training is the same as keeping everything. One stage, as above.
TEST(Checkpointing, PartialRecomputationRebuildsTheFirstBlocksAndTrainsTheSame) {
    const auto train = [](const AnalyzedProject& p) {
        return pipelined_parameters(p, run_in_process(p, 2, torch::kFloat64));
    };
    const auto a = train(tiny_decoder(3, 1, "gpipe", false, 0, 0.3));
    ASSERT_FALSE(a.empty());
    for (const int n : {1, 2, 5}) {
        SCOPED_TRACE(n);
        EXPECT_LE(
            test::max_relative_difference(train(tiny_decoder(3, 1, "gpipe", true, n, 0.3)), a),
            1e-12);
    }
    // A split backward: I rebuilds the first block, replaying its masks,
    // and W finds every unit's graph.
    EXPECT_LE(test::max_relative_difference(train(tiny_decoder(3, 1, "zb-h1", true, 1, 0.3)), a),
              1e-12);
    // The masks matter: without dropout training ends elsewhere.
    EXPECT_GT(test::max_relative_difference(train(tiny_decoder(3, 1, "gpipe", false, 0, 0.0)), a),
              1e-6);
}

// Only the units the backward rebuilds keep nothing but their inputs; the
// others keep their graphs from the forward (with recompute_blocks 1, all
// but the first block's), and the gradients are a plain backward's.
TEST(Checkpointing, OnlyTheFirstBlocksAreRebuiltAndTheOthersKeepTheirGraphs) {
    const AnalyzedProject p = tiny_decoder(2, 1, "gpipe", true, 1, 0.0);
    torch::nn::Sequential stage = backend::build_stage(p, 0, torch::kFloat64);
    backend::StageUnits units(p, stage, 0, p.stages.at(0).last_layer);
    // embed and drop0 | block0 | drop1 | block1 | ln_f and head
    ASSERT_EQ(units.size(), 5U);
    const torch::Tensor tokens = torch::randint(0, 64, {2, 8}, torch::kInt64);
    backend::KeptUnits kept;
    const torch::Tensor out = units.forward_keeping(tokens, kept, false, torch::kCPU);
    ASSERT_EQ(kept.outputs.size(), 5U);
    for (std::size_t u = 0; u < 5; ++u) {
        EXPECT_EQ(kept.outputs[u].defined(), u != 1) << u;
    }
    EXPECT_TRUE(out.requires_grad());  // the head's unit kept its graph
    const auto loss = [](const torch::Tensor& y) { return y.pow(2).mean(); };
    units.backward(tokens, kept, torch::Tensor(), loss, torch::kCPU);
    std::vector<torch::Tensor> rebuilt;
    for (const auto& w : stage->parameters()) {
        ASSERT_TRUE(w.grad().defined());
        rebuilt.push_back(w.grad().clone());
        w.mutable_grad().zero_();
    }
    loss(stage->forward(tokens)).backward();
    std::vector<torch::Tensor> plain;
    for (const auto& w : stage->parameters()) {
        plain.push_back(w.grad());
    }
    EXPECT_LE(test::max_relative_difference(rebuilt, plain), 1e-12);
}

// Across a pipeline of two ranks, with one block of each stage rebuilt and
// the rest kept, under 1F1B and under zero-bubble schedules that split the
// backward: the gradients that cross the stages are those of a run that
// keeps everything.
class PartialRecomputation : public ::testing::TestWithParam<std::string> {};

TEST_P(PartialRecomputation, InAPipelineEqualsSingleProcessTraining) {
    const AnalyzedProject p = tiny_decoder(4, 2, GetParam(), true, 1, 0.0);
    ASSERT_EQ(p.schedule.num_stages, 2);
    ASSERT_EQ(p.schedule.splits_backward(), GetParam() != "1f1b");
    const int steps = 3;
    const auto pipelined = pipelined_parameters(p, run_in_process(p, steps, torch::kFloat64));
    const auto reference = test::reference_parameters(p, steps, torch::kFloat64);
    ASSERT_EQ(pipelined.size(), reference.size());
    EXPECT_LE(test::max_relative_difference(pipelined, reference), 1e-10);
    const auto initial =
        backend::build_model(p, static_cast<std::uint64_t>(p.project.training.seed),
                             torch::kFloat64)
            ->parameters();
    EXPECT_GT(test::max_relative_difference(reference, initial), 1e-4);
}

// gtest names each case after its schedule: zb-h1 -> zb_h1.
std::string schedule_case(const ::testing::TestParamInfo<std::string>& c) {
    std::string name = c.param;
    std::replace(name.begin(), name.end(), '-', '_');
    return name;
}

INSTANTIATE_TEST_SUITE_P(Schedules, PartialRecomputation,
                         ::testing::Values("1f1b", "zb-h1", "zb-h2"), schedule_case);

// A small ResNet under checkpointing: the stem, each bottleneck and the head
// are rebuilt one at a time, and training is the same as keeping everything
// (batch normalisation normalises by the batch either way).
TEST(Checkpointing, AResNetRebuiltBottleneckByBottleneckTrainsTheSame) {
    const auto project_with = [](bool checkpointing) {
        nlohmann::json j = nlohmann::json::parse(test::mlp_project_json(spec("gpipe", 1, 1, 4)));
        nlohmann::json layers = nlohmann::json::array(
            {{{"name", "conv1"},
              {"type", "conv2d"},
              {"in_channels", 3},
              {"out_channels", 8},
              {"kernel_size", 3},
              {"padding", 1}},
             {{"name", "bn1"}, {"type", "batchnorm2d"}, {"num_features", 8}},
             {{"name", "relu"}, {"type", "relu"}},
             {{"name", "layer1.0"},
              {"type", "resnet_bottleneck"},
              {"in_channels", 8},
              {"mid_channels", 4},
              {"out_channels", 16},
              {"projection", true}},
             {{"name", "layer1.1"},
              {"type", "resnet_bottleneck"},
              {"in_channels", 16},
              {"mid_channels", 4},
              {"out_channels", 16}},
             {{"name", "avgpool"}, {"type", "adaptive_avgpool2d"}, {"output_size", 1}},
             {{"name", "flatten"}, {"type", "flatten"}},
             {{"name", "fc"}, {"type", "linear"}, {"in_features", 16}, {"out_features", 10}}});
        nlohmann::json names = nlohmann::json::array();
        for (const auto& l : layers) {
            names.push_back(l["name"]);
        }
        j["model"]["layers"] = layers;
        j["model"]["input"] = {{"shape", {3, 8, 8}}, {"dtype", "float32"}};
        j["model"]["loss"] = "cross_entropy";
        j["placement"][0]["layers"] = names;
        j["training"]["activation_checkpointing"] = checkpointing;
        return test::analyze_text(j.dump());
    };
    const auto train = [](const AnalyzedProject& p) {
        return pipelined_parameters(p, run_in_process(p, 2, torch::kFloat64));
    };
    const auto a = train(project_with(false));
    const auto b = train(project_with(true));
    ASSERT_FALSE(a.empty());
    EXPECT_LE(test::max_relative_difference(b, a), 1e-12);
}

TEST(Training, LossFallsOnTheCpuExampleOver20Steps) {
    const AnalyzedProject p = test::analyze_file(PIPEWRIGHT_ASSETS_DIR "/examples/mlp-cpu.json");
    const auto run = run_in_process(p, 20, torch::kFloat32);
    const int last = p.schedule.stage_rank.back();
    const auto& records = run.records[static_cast<std::size_t>(last)];
    ASSERT_EQ(records.size(), 20U);
    ASSERT_TRUE(records.front().loss && records.back().loss);
    EXPECT_LT(*records.back().loss, 0.75 * *records.front().loss)
        << "first " << *records.front().loss << ", last " << *records.back().loss;
}

TEST(Training, SameSeedSameWeightsWhateverTheSplit) {
    MlpSpec two = spec("1f1b", 2, 2, 4);
    MlpSpec four = spec("1f1b", 4, 4, 4);
    two.layers = four.layers = 4;
    const auto a = test::analyze_text(test::mlp_project_json(two));
    const auto b = test::analyze_text(test::mlp_project_json(four));
    std::vector<torch::Tensor> pa, pb;
    for (int s = 0; s < 2; ++s) {
        for (const auto& t : backend::build_stage(a, s, torch::kFloat32)->parameters()) {
            pa.push_back(t);
        }
    }
    for (int s = 0; s < 4; ++s) {
        for (const auto& t : backend::build_stage(b, s, torch::kFloat32)->parameters()) {
            pb.push_back(t);
        }
    }
    EXPECT_EQ(test::max_relative_difference(pa, pb), 0.0);
}

}  // namespace
}  // namespace pipewright
