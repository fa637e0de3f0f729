// Real tensor-parallel runs: a small GPT with each stage split over a group
// of two Gloo worker processes (T = 2, and T = 2 × p = 2 on four), trained a
// few steps. Each member's parameters must be its slices of what
// single-process training of the whole model ends with. The head before the
// cross-entropy keeps its logits split over the vocabulary, so every case
// trains through the vocabulary-parallel loss (vocabulary_parallel_loss.h).
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "backend_test_util.h"
#include "cli_runner.h"
#include "layers/tensor_parallel_layers.h"
#include "pipewright/backend/modules.h"
#include "pipewright/core/project_io.h"
#include "pipewright/core/timeline.h"

namespace pipewright {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int kSteps = 3;

struct TensorParallelCase {
    int stages = 1;
    std::string schedule = "1f1b";
    bool checkpointing = false;
    std::string optimizer = "adam";
    bool sequence_parallel = false;
    int cut = 3;  // the second stage's first layer
    // Llama-style blocks: grouped-query attention, SwiGLU, RMSNorm, no
    // biases, rotary; an RMSNorm at the end.
    bool llama = false;
    // Selective recomputation of the attention core (the reference trains
    // without it: the gradients must not change).
    bool selective = false;
};

void PrintTo(const TensorParallelCase& c, std::ostream* out) {
    *out << c.stages << " stages (from layer " << c.cut << "), " << c.schedule
         << (c.checkpointing ? ", checkpointing" : "") << ", " << c.optimizer
         << (c.sequence_parallel ? ", sequence parallel" : "") << (c.llama ? ", Llama-style" : "")
         << (c.selective ? ", selective recomputation" : "");
}

// Embedding, two blocks, a final norm, an MLP pair with a GELU between and
// the vocabulary head, on four CPU devices: one stage on cpu0, or two on
// cpu0 and cpu2, each with the device after it.
json gpt_json(const TensorParallelCase& c, int tensor) {
    json layers = json::array();
    layers.push_back(
        {{"name", "embed"}, {"type", "embedding"}, {"num_embeddings", 64}, {"embedding_dim", 32}});
    for (int b = 0; b < 2; ++b) {
        layers.push_back(test::tiny_block("block" + std::to_string(b), c.llama));
    }
    layers.push_back(test::tiny_final_norm(c.llama));
    layers.push_back(
        {{"name", "up"}, {"type", "linear"}, {"in_features", 32}, {"out_features", 64}});
    layers.push_back({{"name", "act"}, {"type", "gelu"}});
    layers.push_back(
        {{"name", "down"}, {"type", "linear"}, {"in_features", 64}, {"out_features", 32}});
    layers.push_back(test::tiny_head());
    json names = json::array();
    for (const auto& l : layers) {
        names.push_back(l["name"]);
    }
    json placement = json::array();
    if (c.stages == 1) {
        placement.push_back({{"device", "node0/c0/cpu0"}, {"layers", names}});
    } else {
        json first = json::array();
        json second = json::array();
        for (std::size_t i = 0; i < names.size(); ++i) {
            (static_cast<int>(i) < c.cut ? first : second).push_back(names[i]);
        }
        placement.push_back({{"device", "node0/c0/cpu0"}, {"layers", first}});
        placement.push_back({{"device", "node0/c0/cpu2"}, {"layers", second}});
    }
    json project = test::token_model_project(
        "tiny-gpt", layers, placement, 4,
        {{"batch_size", 8},
         {"microbatches", 4},
         {"schedule", c.schedule},
         {"optimizer", {{"type", c.optimizer}, {"lr", 0.01}}},
         {"activation_checkpointing", c.selective ? json("selective") : json(c.checkpointing)},
         {"seed", 7}});
    project["tensor_parallel"] = {{"size", tensor},
                                  {"sequence_parallel", c.sequence_parallel && tensor > 1}};
    return project;
}

// Each member's saved parameters against the slices of single-process
// training's; returns the largest relative difference.
double worst_member_difference(const TensorParallelCase& c, const AnalyzedProject& split,
                               const fs::path& out, int tensor) {
    TensorParallelCase plain = c;
    plain.selective = false;
    const AnalyzedProject whole_project = test::analyze_text(gpt_json(plain, 1).dump());
    const auto reference = test::reference_parameters(whole_project, kSteps, torch::kFloat64);
    auto names = backend::build_model(whole_project, 7, torch::kFloat64)->named_parameters();
    EXPECT_EQ(names.size(), reference.size());
    EXPECT_GT(test::max_relative_difference(names.values(), reference), 1e-4)
        << "training did nothing";
    double worst = 0;
    for (int s = 0; s < split.schedule.num_stages; ++s) {
        const auto& stage = split.stages[static_cast<std::size_t>(s)];
        for (int k = 0; k < tensor; ++k) {
            const auto saved = test::saved_stage_parameters(out, s, 0, k);
            std::vector<torch::Tensor> want;
            for (std::size_t i = 0; i < names.size(); ++i) {
                const std::string key = names[i].key();
                const std::string layer = key.substr(0, key.find('.'));
                for (int l = stage.first_layer; l <= stage.last_layer; ++l) {
                    if (split.project.model.layers[static_cast<std::size_t>(l)].name == layer) {
                        want.push_back(backend::tensor_parallel_slice(
                            split, l, key.substr(key.find('.') + 1), reference[i], k, tensor));
                    }
                }
            }
            worst = std::max(worst, test::max_relative_difference(saved, want));
        }
    }
    return worst;
}

class TensorParallelRuns : public ::testing::TestWithParam<TensorParallelCase> {};

TEST_P(TensorParallelRuns, EveryMemberEndsWithItsSlicesOfSingleProcessTraining) {
    const TensorParallelCase c = GetParam();
    const auto dir = test::temp_dir("tp-" + c.schedule);
    const auto project = dir / "project.json";
    write_file_atomically(project, gpt_json(c, 2).dump(2));
    const auto out = dir / "run";
    const auto r = test::run_exactly(project, kSteps, out, dir);
    ASSERT_EQ(r.code, 0) << r.output;
    const AnalyzedProject split = test::analyze_text(gpt_json(c, 2).dump());
    ASSERT_TRUE(backend::vocabulary_split_output(split));
    EXPECT_LE(worst_member_difference(c, split, out, 2), 1e-9);

    // The timeline has a lane per group, as the simulation does.
    const Timeline t = load_timeline_file(out / "timeline.json");
    EXPECT_EQ(t.num_ranks(), c.stages);
    const auto summary = nlohmann::json::parse(test::last_json_object(r.output));
    EXPECT_EQ(summary.at("losses").size(), static_cast<std::size_t>(kSteps));
    fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(
    SchedulesAndStages, TensorParallelRuns,
    ::testing::Values(TensorParallelCase{1, "1f1b", false, "adam"},
                      TensorParallelCase{2, "1f1b", false, "adamw"},
                      TensorParallelCase{2, "zb-h1", false, "sgd"},
                      TensorParallelCase{2, "gpipe", true, "adam"},
                      // The MLP pair cut between its two linears: the first
                      // stage gathers what its column-parallel layer leaves.
                      TensorParallelCase{2, "1f1b", false, "adam", false, 5},
                      TensorParallelCase{2, "1f1b", false, "adamw", true},
                      TensorParallelCase{2, "zb-h1", true, "adam", true, 5},
                      TensorParallelCase{2, "1f1b", false, "adam", false, 3, true},
                      TensorParallelCase{2, "zb-h1", true, "adamw", true, 3, true},
                      TensorParallelCase{2, "1f1b", false, "adam", false, 3, false, true},
                      TensorParallelCase{2, "zb-h1", false, "adamw", true, 3, true, true}),
    [](const auto& param_info) {
        const TensorParallelCase& c = param_info.param;
        std::string name = c.schedule == "zb-h1" ? "ZbH1SplitBackward"
                           : c.checkpointing     ? "GpipeCheckpointing"
                                                 : "OneFOneB" + std::to_string(c.stages) + "Stages";
        if (c.checkpointing && c.schedule == "zb-h1") {
            name += "Checkpointing";
        }
        if (c.sequence_parallel) {
            name += "SequenceParallel";
        }
        if (c.cut != 3) {
            name += "CutInsideAPair";
        }
        if (c.llama) {
            name += "LlamaStyle";
        }
        if (c.selective) {
            name += "SelectiveRecomputation";
        }
        return name;
    });

// The bytes of each forward send of a run of `c` (2 stages), and of the
// simulation of the same project.
std::pair<std::vector<double>, std::vector<double>> forward_send_bytes(const TensorParallelCase& c,
                                                                       const fs::path& dir) {
    fs::create_directories(dir);
    const auto project = dir / "project.json";
    write_file_atomically(project, gpt_json(c, 2).dump(2));
    const auto out = dir / "run";
    const auto r = test::run_exactly(project, 1, out, dir);
    EXPECT_EQ(r.code, 0) << r.output;
    const auto simulated = dir / "simulated.json";
    const auto s =
        test::run_cli("simulate " + project.string() + " --timeline " + simulated.string(), dir);
    EXPECT_EQ(s.code, 0) << s.output;
    const auto sends = [](const Timeline& t) {
        std::vector<double> bytes;
        for (const TimelineEvent& e : t.events) {
            if (e.action.type == ActionType::send_forward) {
                bytes.push_back(e.bytes);
            }
        }
        return bytes;
    };
    return {sends(load_timeline_file(out / "timeline.json")), sends(load_timeline_file(simulated))};
}

// Under sequence parallelism each member sends its counterpart in the next
// stage its slice of the sequence, as Megatron-LM does, and the simulation
// counts the same bytes; without it, the whole output.
TEST(TensorParallelRuns, SequenceParallelStagesSendTheirSliceOfTheSequence) {
    const auto dir = test::temp_dir("tp-boundary");
    TensorParallelCase whole_case{2, "1f1b"};
    TensorParallelCase sliced_case = whole_case;
    sliced_case.sequence_parallel = true;
    const auto [whole_run, whole_sim] = forward_send_bytes(whole_case, dir / "whole");
    const auto [sliced_run, sliced_sim] = forward_send_bytes(sliced_case, dir / "sliced");
    ASSERT_EQ(whole_run.size(), 4U);  // one a micro-batch
    ASSERT_EQ(sliced_run.size(), 4U);
    // Micro-batches of 2 samples of 8 tokens of 32 features, in float64.
    const double whole = 2 * 8 * 32 * 8;
    EXPECT_EQ(whole_run, std::vector<double>(4, whole));
    EXPECT_EQ(sliced_run, std::vector<double>(4, whole / 2));
    // The simulation prices the project's float32.
    EXPECT_EQ(whole_sim, std::vector<double>(4, whole / 2));
    EXPECT_EQ(sliced_sim, std::vector<double>(4, whole / 4));
    fs::remove_all(dir);
}

TEST(TensorParallelRuns, SplittingMattersTheSlicesOfTheOtherMemberDiffer) {
    // The check above compares each member with its own slices: swapped
    // slices are far off, so the comparison can fail.
    const TensorParallelCase c{2, "1f1b", false, "sgd"};
    const AnalyzedProject split = test::analyze_text(gpt_json(c, 2).dump());
    const AnalyzedProject whole = test::analyze_text(gpt_json(c, 1).dump());
    const auto reference = test::reference_parameters(whole, 1, torch::kFloat64);
    auto names = backend::build_model(whole, 7, torch::kFloat64)->named_parameters();
    const std::string key = names[3].key();  // block0.qkv.weight
    ASSERT_EQ(key, "block0.qkv.weight");
    const auto mine = backend::tensor_parallel_slice(split, 1, "qkv.weight", reference[3], 0, 2);
    const auto other = backend::tensor_parallel_slice(split, 1, "qkv.weight", reference[3], 1, 2);
    EXPECT_GT(test::max_relative_difference({mine}, {other}), 1e-3);
}

// The shipped GPT- and Llama-style examples: two stages of two ranks each.
TEST(TensorParallelRuns, TheShippedSmallDecodersTrainOnFourWorkers) {
    for (const char* example : {"gpt-tiny-t2p2-cpu.json", "llama-tiny-t2p2-cpu.json"}) {
        SCOPED_TRACE(example);
        const auto dir = test::temp_dir("tp-example");
        const auto out = dir / "run";
        const auto r =
            test::run_cli(std::string("run ") + PIPEWRIGHT_ASSETS_DIR + "/examples/" + example +
                              " --steps 6 --threads-per-rank 1 --json --out " + out.string(),
                          dir);
        ASSERT_EQ(r.code, 0) << r.output;
        EXPECT_NE(r.output.find("on 4 CPU ranks: each stage over 2 ranks (tensor parallel)"),
                  std::string::npos)
            << r.output;
        const auto summary = nlohmann::json::parse(test::last_json_object(r.output));
        const auto& losses = summary.at("losses");
        ASSERT_EQ(losses.size(), 6U);
        EXPECT_LT(losses.back().get<double>(), losses.front().get<double>() - 0.5);
        EXPECT_EQ(load_timeline_file(out / "timeline.json").num_ranks(), 2);
        fs::remove_all(dir);
    }
}

TEST(TensorParallelRuns, KeyValueHeadsTheGroupCannotSplitAreRefusedBeforeTraining) {
    const auto dir = test::temp_dir("tp-kv-refused");
    TensorParallelCase c;
    c.llama = true;
    json p = gpt_json(c, 4);
    p["model"]["layers"][1]["kv_heads"] = 1;  // multi-query: one head for four members
    p["model"]["layers"][2]["kv_heads"] = 1;
    write_file_atomically(dir / "mqa.json", p.dump(2));
    // The simulation prices the replicated heads ...
    const auto simulated = test::run_cli("simulate " + (dir / "mqa.json").string(), dir, "sim");
    EXPECT_EQ(simulated.code, 0) << simulated.output;
    // ... and a real run says why it does not do them.
    const auto r = test::run_cli("run " + (dir / "mqa.json").string() + " --steps 1", dir, "run");
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.output.find("model.layers[1].kv_heads: real runs split key/value heads over the "
                            "tensor-parallel group, so its size 4 must divide kv_heads"),
              std::string::npos)
        << r.output;
    fs::remove_all(dir);
}

TEST(TensorParallelRuns, AnUnevenSequenceAndDropoutAreRefusedInWords) {
    const auto dir = test::temp_dir("tp-refused");
    json sp = gpt_json({}, 2);
    sp["tensor_parallel"]["sequence_parallel"] = true;
    sp["model"]["input"]["shape"] = {7};
    write_file_atomically(dir / "sp.json", sp.dump(2));
    const auto a = test::run_cli("run " + (dir / "sp.json").string() + " --steps 1", dir, "sp");
    EXPECT_EQ(a.code, 1);
    EXPECT_NE(a.output.find("tensor_parallel.sequence_parallel: the sequence of 7 tokens does not "
                            "split into 2 equal slices"),
              std::string::npos)
        << a.output;
    json dropout = gpt_json({}, 2);
    dropout["model"]["layers"][5] = {{"name", "act"}, {"type", "dropout"}, {"p", 0.1}};
    write_file_atomically(dir / "dropout.json", dropout.dump(2));
    const auto b =
        test::run_cli("run " + (dir / "dropout.json").string() + " --steps 1", dir, "dropout");
    EXPECT_EQ(b.code, 1);
    EXPECT_NE(b.output.find("model.layers[5]: dropout with tensor parallelism"), std::string::npos)
        << b.output;
    // A block's dropout likewise, named by its field.
    json block = gpt_json({}, 2);
    for (auto& layer : block["model"]["layers"]) {
        if (layer["type"] == "transformer_block") {
            layer["hidden_dropout"] = 0.1;
            break;
        }
    }
    write_file_atomically(dir / "block.json", block.dump(2));
    const auto c =
        test::run_cli("run " + (dir / "block.json").string() + " --steps 1", dir, "block");
    EXPECT_EQ(c.code, 1);
    EXPECT_NE(c.output.find(".hidden_dropout: dropout in a block with tensor parallelism"),
              std::string::npos)
        << c.output;
    fs::remove_all(dir);
}

}  // namespace
}  // namespace pipewright
