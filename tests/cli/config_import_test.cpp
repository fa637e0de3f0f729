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
        // 32.8 B published; its per-head query and key norms (64 blocks of
        // 256) are left out, and said so.
        {"qwen3-32b", 32'762'123'264 - 64 * 256},
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
        EXPECT_EQ(summary.at("notes").size(), name == "qwen3-32b" ? 1U : 0U);
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

TEST(ConfigImport, WhatCannotBeDescribedIsRefusedWithItsField) {
    TempDir dir;
    json config = read_preset("llama-3.1-8b");
    config["architectures"] = json::array({"Gemma2ForCausalLM"});
    auto r = run_cli({"import", write(dir, config), "--dry-run"});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("architectures: no supported architecture in [\"Gemma2ForCausalLM\"] "
                         "(supported: LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, "
                         "Qwen3ForCausalLM, GPT2LMHeadModel)"),
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

}  // namespace
}  // namespace pipewright
