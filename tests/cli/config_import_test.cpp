// `pipewright import config.json`: Hugging Face configs become projects with
// their published parameter counts; what cannot be described is refused
// with the field that says so.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_test_support.h"
#include "pipewright/core/project_io.h"

namespace pipewright {
namespace {

using nlohmann::json;
using testing::run_cli;
using testing::TempDir;

std::string preset(const std::string& name) {
    return (std::filesystem::path(PIPEWRIGHT_ASSETS_DIR) / "models" / (name + ".json")).string();
}

json read_preset(const std::string& name) {
    std::ifstream in(preset(name));
    return json::parse(in);
}

std::string write(const TempDir& dir, const json& config) {
    const auto path = (dir / "config.json").string();
    std::ofstream(path) << config.dump(2);
    return path;
}

TEST(ConfigImport, EveryPresetHasItsPublishedParameters) {
    const std::vector<std::pair<std::string, double>> published = {
        {"llama-3.1-8b", 8'030'261'248},
        {"llama-3.1-70b", 70'553'706'496},
        {"llama-3.1-405b", 405'853'388'800},
        {"mistral-7b-v0.1", 7'241'732'096},
        // With its per-head query and key norms (64 blocks of 2 × 128).
        {"qwen3-32b", 32'762'123'264},
        // Four norms a block (post-norms), the head tied to the embedding.
        {"gemma-2-9b", 9'241'705'984},
        // Gemma 2's block with a norm on each head's query and key.
        {"gemma-3-1b", 999'885'952},
        // Llama's block under Phi-3's names; Phi-3 mini attends through a
        // window of 2,047 tokens on every block.
        {"phi-4", 14'659'507'200},
        {"phi-3-mini-4k", 3'821'079'552},
        // Tied embeddings: the head's matrix is the embedding's, counted once.
        {"llama-3.2-1b", 1'235'814'400},
        {"gpt2", 124'439'808},
        // GPT-3's 175B as GPT-2's architecture at its published sizes.
        {"gpt3-175b", 174'604'259'328},
    };
    for (const auto& [name, parameters] : published) {
        SCOPED_TRACE(name);
        const auto r = run_cli({"import", preset(name), "--devices", "8", "--dry-run", "--json"});
        ASSERT_EQ(r.code, 0) << r.err;
        const json summary = json::parse(r.out);
        EXPECT_EQ(summary.at("parameters").get<double>(), parameters);
        EXPECT_EQ(summary.at("written"), "");
        // Gemma's scaled embedding (and Gemma 2's soft-capping) has no parameters.
        EXPECT_EQ(summary.at("notes").size(), name.starts_with("gemma") ? 1U : 0U);
    }
}

TEST(ConfigImport, TheWrittenProjectIsPlacedAndSimulates) {
    TempDir dir;
    const auto out = (dir / "llama.json").string();
    const auto r = run_cli({"import", preset("llama-3.1-8b"), "--devices", "4", "--nodes", "2",
                            "--seq-len", "2048", "-b", "16", "--out", out});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("Parameters  8,030,261,248"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("every device fits"), std::string::npos) << r.out;
    const LoadedProject loaded = load_project_file(out);
    ASSERT_TRUE(loaded.project) << loaded.diagnostics.format();
    const Project& p = *loaded.project;
    EXPECT_EQ(p.model.input.shape, (Shape{2048}));
    EXPECT_EQ(p.model.layers.size(), 35U);
    EXPECT_EQ(p.placement.size(), 8U);  // one stage on each of the 8 GPUs
    EXPECT_EQ(p.topology.nodes.size(), 2U);
    EXPECT_EQ(p.training.dtype, DType::bfloat16);
    EXPECT_EQ(p.model.layers[1].params.at("activation"), "swiglu");
    EXPECT_EQ(run_cli({"simulate", out}).code, 0);
}

// What the next step is says how to split what does not fit: a long
// sequence over context-parallel replicas, experts over expert-parallel ones.
TEST(ConfigImport, TheNextStepNamesTheSplitsTheModelWants) {
    TempDir dir;
    const auto long_out = (dir / "long.json").string();
    auto r = run_cli({"import", preset("llama-3.1-8b"), "--devices", "8", "--seq-len", "65536",
                      "-b", "8", "--out", long_out});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("plan --context-parallel auto --data-parallel auto also splits each "
                         "sequence of 65536 tokens over replicas"),
              std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.find("--expert-parallel"), std::string::npos) << r.out;
    const auto short_out = (dir / "short.json").string();
    r = run_cli({"import", preset("llama-3.1-8b"), "--devices", "8", "--seq-len", "2048", "-b", "8",
                 "--out", short_out});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out.find("--context-parallel"), std::string::npos) << r.out;
    const auto moe_out = (dir / "moe.json").string();
    r = run_cli({"import", preset("mixtral-8x7b-v0.1"), "--devices", "8", "--seq-len", "2048", "-b",
                 "8", "--out", moe_out});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("plan --expert-parallel auto --data-parallel auto also splits the "
                         "experts over replicas"),
              std::string::npos)
        << r.out;
}

TEST(ConfigImport, WhatCannotBeDescribedIsRefusedWithItsField) {
    TempDir dir;
    json config = read_preset("llama-3.1-8b");
    config["architectures"] = json::array({"FalconForCausalLM"});
    auto r = run_cli({"import", write(dir, config), "--dry-run"});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("architectures: no supported architecture in [\"FalconForCausalLM\"] "
                         "(supported: LlamaForCausalLM, MistralForCausalLM, MixtralForCausalLM, "
                         "Qwen2ForCausalLM, Qwen3ForCausalLM, Qwen3MoeForCausalLM, "
                         "Gemma2ForCausalLM, Gemma3ForCausalLM, Gemma3ForConditionalGeneration, "
                         "GptOssForCausalLM, Phi3ForCausalLM, DeepseekV2ForCausalLM, "
                         "DeepseekV3ForCausalLM, GPT2LMHeadModel)"),
              std::string::npos)
        << r.err;

    config = read_preset("llama-3.1-8b");
    config.erase("intermediate_size");
    r = run_cli({"import", write(dir, config), "--dry-run"});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("intermediate_size: missing"), std::string::npos) << r.err;

    // A mistyped block count is refused, not built (it was an out-of-memory).
    config = read_preset("llama-3.1-8b");
    config["num_hidden_layers"] = 2'000'000'000;
    r = run_cli({"import", write(dir, config), "--dry-run"});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("num_hidden_layers: must be at most 10000, got 2000000000"),
              std::string::npos)
        << r.err;

    config = read_preset("gpt2");
    config["activation_function"] = "silu";
    r = run_cli({"import", write(dir, config), "--dry-run"});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("activation_function: the activation \"silu\" is not one Pipewright "
                         "models for GPT-2's MLP (gelu or relu)"),
              std::string::npos)
        << r.err;

    config = read_preset("gpt2");
    r = run_cli({"import", write(dir, config), "--seq-len", "2048", "--dry-run"});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("n_positions: GPT-2's learned positions cover 1024 tokens, fewer than "
                         "the sequence of 2048 asked for"),
              std::string::npos)
        << r.err;

    config = read_preset("llama-3.1-8b");
    config["num_key_value_heads"] = 5;
    r = run_cli({"import", write(dir, config), "--dry-run"});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("num_key_value_heads: must divide num_attention_heads = 32"),
              std::string::npos)
        << r.err;
}

TEST(ConfigImport, ATiedConfigTiesItsHeadAndUntyingItCountsTheHead) {
    TempDir dir;
    const auto out = (dir / "gpt2.json").string();
    auto r = run_cli({"import", preset("gpt2"), "--devices", "2", "--out", out});
    ASSERT_EQ(r.code, 0) << r.err;
    const LoadedProject loaded = load_project_file(out);
    ASSERT_TRUE(loaded.project) << loaded.diagnostics.format();
    const Model& m = loaded.project->model;
    EXPECT_TRUE(m.tie_word_embeddings);
    EXPECT_EQ(m.input.shape, (Shape{1024}));
    EXPECT_EQ(m.layers.front().params.at("positions"), 1024);
    EXPECT_EQ(m.layers[1].params.at("norm"), "layernorm");
    EXPECT_EQ(m.layers[1].params.at("activation"), "gelu");

    json config = read_preset("gpt2");
    config["tie_word_embeddings"] = false;
    r = run_cli({"import", write(dir, config), "--devices", "2", "--dry-run", "--json"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(json::parse(r.out).at("parameters").get<double>(), 124'439'808 + 50257.0 * 768);
}

// Dropout comes from the config: GPT-2's attn_pdrop and resid_pdrop (0.1
// when absent, GPT2Config's defaults), the Llama family's
// attention_dropout (0 in every release: no block dropout at all).
TEST(ConfigImport, ABlocksDropoutsAreTheConfigs) {
    TempDir dir;
    int imported = 0;
    const auto block_of = [&dir, &imported](const json& config) {
        const auto out = (dir / ("model" + std::to_string(++imported) + ".json")).string();
        const auto r = run_cli({"import", write(dir, config), "--devices", "2", "--out", out});
        EXPECT_EQ(r.code, 0) << r.err;
        const LoadedProject loaded = load_project_file(out);
        EXPECT_TRUE(loaded.project) << loaded.diagnostics.format();
        return loaded.project ? loaded.project->model.layers[1].params : json();
    };
    json gpt2 = read_preset("gpt2");
    gpt2.erase("attn_pdrop");
    gpt2.erase("resid_pdrop");
    json block = block_of(gpt2);
    EXPECT_EQ(block.value("attention_dropout", 0.0), 0.1);
    EXPECT_EQ(block.value("hidden_dropout", 0.0), 0.1);
    gpt2["attn_pdrop"] = 0.0;
    gpt2["resid_pdrop"] = 0.2;
    block = block_of(gpt2);
    EXPECT_FALSE(block.contains("attention_dropout")) << block.dump();
    EXPECT_EQ(block.value("hidden_dropout", 0.0), 0.2);

    json llama = read_preset("llama-3.1-8b");
    block = block_of(llama);
    EXPECT_FALSE(block.contains("attention_dropout")) << block.dump();
    EXPECT_FALSE(block.contains("hidden_dropout")) << block.dump();
    llama["attention_dropout"] = 0.1;
    block = block_of(llama);
    EXPECT_EQ(block.value("attention_dropout", 0.0), 0.1);
    EXPECT_FALSE(block.contains("hidden_dropout")) << block.dump();

    llama["attention_dropout"] = 1.5;
    const auto r = run_cli({"import", write(dir, llama), "--dry-run"});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("attention_dropout: must be"), std::string::npos) << r.err;
}

// Mixtures of experts: the whole count as published, and what a token uses.
TEST(ConfigImport, MixtureOfExpertsPresetsHaveTheirPublishedParameters) {
    struct Published {
        std::string name;
        double total;
        double active_low, active_high;  // as published, rounded
        std::size_t notes;
    };
    const std::vector<Published> published = {
        // 46.7 B, 12.9 B active (Mistral AI).
        {"mixtral-8x7b-v0.1", 46'702'792'704, 12.8e9, 13.0e9, 1},
        // 30.5 B, 3.3 B active, its 48 blocks' query and key norms (2 × 128)
        // included.
        {"qwen3-30b-a3b", 30'532'122'624, 3.2e9, 3.4e9, 1},
    };
    for (const Published& p : published) {
        SCOPED_TRACE(p.name);
        const auto r = run_cli({"import", preset(p.name), "--devices", "8", "--dry-run", "--json"});
        ASSERT_EQ(r.code, 0) << r.err;
        const json summary = json::parse(r.out);
        EXPECT_EQ(summary.at("parameters").get<double>(), p.total);
        EXPECT_GT(summary.at("active_parameters").get<double>(), p.active_low);
        EXPECT_LT(summary.at("active_parameters").get<double>(), p.active_high);
        EXPECT_EQ(summary.at("notes").size(), p.notes) << summary.at("notes").dump();
    }
}

// DeepSeek-V3: "671B total parameters with 37B activated for each token"
// (its report), the multi-token prediction module left out as there. Its
// three dense blocks come first; every block has latent attention.
TEST(ConfigImport, DeepSeekV3Has671BillionParametersAnd37BillionActive) {
    TempDir dir;
    const auto out = (dir / "v3.json").string();
    auto r = run_cli({"import", preset("deepseek-v3"), "--devices", "8", "--nodes", "2", "-b", "64",
                      "--dry-run", "--json"});
    ASSERT_EQ(r.code, 0) << r.err;
    const json summary = json::parse(r.out);
    EXPECT_EQ(summary.at("parameters").get<double>(), 671'026'404'352);
    // 37.6 B: the report's 37 B, its embedding included.
    EXPECT_NEAR(summary.at("active_parameters").get<double>(), 37.5e9, 0.1e9);
    const std::string notes = summary.at("notes").dump();
    EXPECT_NE(notes.find("multi-token prediction"), std::string::npos) << notes;
    EXPECT_NE(notes.find("sigmoid"), std::string::npos) << notes;

    r = run_cli({"import", preset("deepseek-v3"), "--devices", "8", "--nodes", "2", "-b", "64",
                 "--out", out});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("256 experts of 2048, top 8 and 1 shared (3 dense blocks)"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("active per token"), std::string::npos) << r.out;
    const LoadedProject loaded = load_project_file(out);
    ASSERT_TRUE(loaded.project) << loaded.diagnostics.format();
    const auto& layers = loaded.project->model.layers;
    EXPECT_FALSE(layers[3].params.contains("experts"));
    EXPECT_EQ(layers[4].params.at("experts"), 256);
    EXPECT_EQ(layers[1].params.at("kv_lora_rank"), 512);
    EXPECT_EQ(layers[4].params.at("kv_lora_rank"), 512);
}

TEST(ConfigImport, AMixtureOfExpertsConfigMissingItsRoutingSaysWhichField) {
    TempDir dir;
    json config = read_preset("mixtral-8x7b-v0.1");
    config.erase("num_experts_per_tok");
    auto r = run_cli({"import", write(dir, config), "--dry-run"});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("num_experts_per_tok"), std::string::npos) << r.err;
    config = read_preset("qwen3-30b-a3b");
    config["num_experts_per_tok"] = 200;
    r = run_cli({"import", write(dir, config), "--dry-run"});
    EXPECT_NE(r.err.find("must be at most num_experts = 128"), std::string::npos) << r.err;
}

TEST(ConfigImport, ItsOwnInputIsNeverOverwritten) {
    TempDir dir;
    const auto path = write(dir, read_preset("mistral-7b-v0.1"));
    const auto before = json::parse(std::ifstream(path));
    const auto r = run_cli({"import", path, "--out", path});
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("is the config this command reads"), std::string::npos) << r.err;
    EXPECT_EQ(json::parse(std::ifstream(path)), before);
}

TEST(ConfigImport, ATorchScriptModuleStillNeedsItsInputShape) {
    const auto r = run_cli({"import", "model.pt"});
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("--input-shape is required for a TorchScript module"), std::string::npos)
        << r.err;
}

// gpt-oss (OpenAI's model card, table 1): 116.83 B parameters, 5.13 B
// active, for the 120b; 20.91 B and 3.61 B for the 20b. The card's active
// count leaves out the embedding (201,088 × 2,880), which Pipewright's counts
// as Mistral's 12.9 B for Mixtral does. Its attention and its experts carry
// biases, and every other block from the first attends through a window of
// 128 tokens (its layer_types).
TEST(ConfigImport, GptOssHasItsModelCardsCountsAndAlternatingWindows) {
    struct Card {
        std::string name;
        double total, active;  // billions, as the card rounds them
        std::size_t blocks;
    };
    const double embedding = 201'088.0 * 2'880;
    for (const Card& c :
         {Card{"gpt-oss-120b", 116.83, 5.13, 36}, Card{"gpt-oss-20b", 20.91, 3.61, 24}}) {
        SCOPED_TRACE(c.name);
        TempDir dir;
        const auto out = (dir / "oss.json").string();
        auto r = run_cli({"import", preset(c.name), "--devices", "8", "--dry-run", "--json"});
        ASSERT_EQ(r.code, 0) << r.err;
        const json summary = json::parse(r.out);
        EXPECT_NEAR(summary.at("parameters").get<double>() / 1e9, c.total, 0.005);
        EXPECT_NEAR((summary.at("active_parameters").get<double>() - embedding) / 1e9, c.active,
                    0.005);
        EXPECT_NE(summary.at("notes").dump().find("attention sinks"), std::string::npos);
        r = run_cli({"import", preset(c.name), "--devices", "8", "--out", out});
        ASSERT_EQ(r.code, 0) << r.err;
        const LoadedProject loaded = load_project_file(out);
        ASSERT_TRUE(loaded.project) << loaded.diagnostics.format();
        const auto& layers = loaded.project->model.layers;
        ASSERT_EQ(layers.size(), c.blocks + 3);
        for (std::size_t b = 0; b < c.blocks; ++b) {
            const auto& params = layers[b + 1].params;
            EXPECT_EQ(params.value("sliding_window", 0), b % 2 == 0 ? 128 : 0) << b;
            EXPECT_TRUE(params.at("bias").get<bool>());
            EXPECT_TRUE(params.at("qkv_bias").get<bool>());
        }
    }
}

// Gemma 3: five blocks of each six slide (sliding_window_pattern), the
// sixth sees the whole sequence; a query and key norm on every head.
TEST(ConfigImport, GemmaThreeSlidesFiveBlocksOfEachSix) {
    TempDir dir;
    const auto out = (dir / "gemma3.json").string();
    const auto r = run_cli({"import", preset("gemma-3-1b"), "--devices", "2", "--out", out});
    ASSERT_EQ(r.code, 0) << r.err;
    const LoadedProject loaded = load_project_file(out);
    ASSERT_TRUE(loaded.project) << loaded.diagnostics.format();
    const auto& layers = loaded.project->model.layers;
    for (std::size_t b = 0; b < 26; ++b) {
        const auto& params = layers[b + 1].params;
        EXPECT_EQ(params.value("sliding_window", 0), (b + 1) % 6 == 0 ? 0 : 512) << b;
        EXPECT_TRUE(params.at("qk_norm").get<bool>());
        EXPECT_TRUE(params.at("post_norms").get<bool>());
    }
    EXPECT_TRUE(loaded.project->model.tie_word_embeddings);
}

// A config's layer_types says block by block where a window applies, for
// any family; what it cannot mean is refused with its field.
TEST(ConfigImport, LayerTypesPlaceTheWindowsAndAreCheckedEntryByEntry) {
    TempDir dir;
    json config = read_preset("llama-3.1-8b");
    config["sliding_window"] = 1024;
    config["layer_types"] = json::array();
    for (int i = 0; i < 32; ++i) {
        config["layer_types"].push_back(i < 30 ? "full_attention" : "sliding_attention");
    }
    const auto out = (dir / "windows.json").string();
    auto r = run_cli({"import", write(dir, config), "--devices", "2", "--out", out});
    ASSERT_EQ(r.code, 0) << r.err;
    const LoadedProject loaded = load_project_file(out);
    ASSERT_TRUE(loaded.project) << loaded.diagnostics.format();
    EXPECT_FALSE(loaded.project->model.layers[30].params.contains("sliding_window"));
    EXPECT_EQ(loaded.project->model.layers[31].params.at("sliding_window"), 1024);

    config["layer_types"][7] = "linear_attention";
    r = run_cli({"import", write(dir, config), "--dry-run"});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("layer_types[7]: must be \"sliding_attention\" or \"full_attention\""),
              std::string::npos)
        << r.err;
    config["layer_types"].erase(7);
    r = run_cli({"import", write(dir, config), "--dry-run"});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(
        r.err.find("layer_types: has 31 entries; one a block is needed (num_hidden_layers = 32)"),
        std::string::npos)
        << r.err;
}

// Phi-3 and Phi-4 (Phi3ForCausalLM): Llama's block; Phi-3 mini's window of
// 2,047 tokens on every block, Phi-4 none; its residual dropout (resid_pdrop)
// is the blocks' hidden dropout, and a rotary embedding on part of each
// head (Phi-4 mini's) is said to be priced as on the whole.
TEST(ConfigImport, PhiReadsItsWindowItsResidualDropoutAndSaysWhatItPricesWhole) {
    TempDir dir;
    const auto out = (dir / "phi.json").string();
    auto r = run_cli({"import", preset("phi-3-mini-4k"), "--devices", "2", "--out", out});
    ASSERT_EQ(r.code, 0) << r.err;
    LoadedProject loaded = load_project_file(out);
    ASSERT_TRUE(loaded.project) << loaded.diagnostics.format();
    for (std::size_t b = 1; b <= 32; ++b) {
        EXPECT_EQ(loaded.project->model.layers[b].params.at("sliding_window"), 2047) << b;
    }
    r = run_cli({"import", preset("phi-4"), "--devices", "2", "--out", out});
    ASSERT_EQ(r.code, 0) << r.err;
    loaded = load_project_file(out);
    ASSERT_TRUE(loaded.project) << loaded.diagnostics.format();
    EXPECT_FALSE(loaded.project->model.layers[1].params.contains("sliding_window"));
    EXPECT_FALSE(loaded.project->model.layers[1].params.contains("hidden_dropout"));

    json config = read_preset("phi-4");
    config["resid_pdrop"] = 0.1;
    config["partial_rotary_factor"] = 0.75;
    r = run_cli({"import", write(dir, config), "--out", out, "--json"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(json::parse(r.out).at("notes").dump().find("partial_rotary_factor"),
              std::string::npos);
    loaded = load_project_file(out);
    ASSERT_TRUE(loaded.project) << loaded.diagnostics.format();
    EXPECT_EQ(loaded.project->model.layers[1].params.at("hidden_dropout"), 0.1);
    config["resid_pdrop"] = 1.5;
    r = run_cli({"import", write(dir, config), "--dry-run"});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("resid_pdrop: must be"), std::string::npos) << r.err;
    config["resid_pdrop"] = 0.0;
    config["partial_rotary_factor"] = 2;
    r = run_cli({"import", write(dir, config), "--dry-run"});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("partial_rotary_factor: must be"), std::string::npos) << r.err;
}

// Gemma 3 27B as Google publishes it: a Gemma3ForConditionalGeneration whose
// text_config gives only what differs from Gemma3TextConfig's defaults (the
// vocabulary of 262,208, GeGLU, the head tied, six-block window pattern).
// The text decoder has 27,009,346,304 parameters: the published
// 27,432,406,640 less the SigLIP encoder and its projector, which the
// project leaves out and says so. Problems in text_config name it.
TEST(ConfigImport, GemmaThreeAsPublishedIsItsTextDecoder) {
    TempDir dir;
    const auto out = (dir / "gemma3.json").string();
    auto r = run_cli({"import", preset("gemma-3-27b"), "--devices", "8", "--out", out, "--json"});
    ASSERT_EQ(r.code, 0) << r.err;
    const json summary = json::parse(r.out);
    EXPECT_EQ(summary.at("architecture"), "Gemma3ForConditionalGeneration");
    EXPECT_EQ(summary.at("parameters").get<double>(), 27'009'346'304);
    EXPECT_NE(summary.at("notes").dump().find("vision encoder"), std::string::npos);
    const LoadedProject loaded = load_project_file(out);
    ASSERT_TRUE(loaded.project) << loaded.diagnostics.format();
    const auto& layers = loaded.project->model.layers;
    ASSERT_EQ(layers.size(), 62U + 3);
    EXPECT_TRUE(loaded.project->model.tie_word_embeddings);
    EXPECT_EQ(layers.front().params.at("num_embeddings"), 262'208);
    EXPECT_EQ(layers[1].params.at("activation"), "geglu");
    EXPECT_EQ(layers[1].params.at("sliding_window"), 1024);
    EXPECT_FALSE(layers[6].params.contains("sliding_window"));

    json config = read_preset("gemma-3-27b");
    config["text_config"]["hidden_size"] = "wide";
    r = run_cli({"import", write(dir, config), "--dry-run"});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("text_config.hidden_size: expected a whole number"), std::string::npos)
        << r.err;
    config.erase("text_config");
    r = run_cli({"import", write(dir, config), "--dry-run"});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("text_config: missing"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace pipewright
