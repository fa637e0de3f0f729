// A layer imported from a TorchScript file carries the figures the import
// measured; the analysis takes them, checks the chain of shapes, and names
// what is missing. The file is kept relative to the project on disk and
// absolute in memory.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "pipewright/core/analysis.h"
#include "pipewright/core/project_io.h"

namespace pipewright {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json imported(const std::string& name, json in, json out, double flops) {
    return {{"name", name},
            {"type", "torchscript"},
            {"module", "net.pt"},
            {"submodule", name},
            {"module_type", "Linear"},
            {"input_shape", in},
            {"input_dtype", "float32"},
            {"output_shape", out},
            {"output_dtype", "float32"},
            {"parameters", 136},
            {"forward_flops", flops},
            {"backward_input_flops", flops},
            {"backward_weight_flops", flops},
            {"stashed_elements", 8}};
}

json project(json layers) {
    json names = json::array();
    for (const auto& l : layers) {
        names.push_back(l["name"]);
    }
    return {{"format", "pipewright-project"},
            {"version", 1},
            {"model",
             {{"name", "net"},
              {"input", {{"shape", {8}}, {"dtype", "float32"}}},
              {"loss", "mse"},
              {"layers", layers}}},
            {"topology",
             {{"nodes",
               json::array({{{"name", "n"},
                             {"containers",
                              json::array({{{"name", "c"},
                                            {"devices", json::array({{{"name", "cpu0"},
                                                                      {"spec", "cpu"}}})}}})}}})}}},
            {"placement", json::array({{{"device", "n/c/cpu0"}, {"layers", names}}})},
            {"training", {{"batch_size", 4}}}};
}

std::optional<AnalyzedProject> analyze_json(const json& j, Diagnostics& d) {
    auto loaded = parse_project_text(j.dump());
    EXPECT_TRUE(loaded.project) << loaded.diagnostics.format();
    return loaded.project ? analyze_project(*loaded.project, {}, d) : std::nullopt;
}

TEST(TorchScriptLayer, TheAnalysisTakesTheImportedFigures) {
    Diagnostics d;
    const auto p = analyze_json(
        project(json::array({imported("a", {8}, {16}, 256), imported("b", {16}, {4}, 128)})), d);
    ASSERT_TRUE(p) << d.format();
    EXPECT_EQ(p->layers[0].output_shape, Shape{16});
    EXPECT_EQ(p->layers[1].output_shape, Shape{4});
    EXPECT_EQ(p->layers[0].parameters, 136);
    EXPECT_DOUBLE_EQ(p->layers[1].forward_flops, 128);
    EXPECT_DOUBLE_EQ(p->layers[0].stashed_elements, 8);
    // Weights: W still needs what was kept.
    EXPECT_DOUBLE_EQ(p->layers[0].weight_stashed_elements, 8);
}

TEST(TorchScriptLayer, AShapeThatNoLongerChainsAndAMissingFigureAreNamed) {
    Diagnostics d;
    EXPECT_FALSE(analyze_json(
        project(json::array({imported("a", {8}, {16}, 256), imported("b", {32}, {4}, 1)})), d));
    EXPECT_NE(d.format().find("model.layers[1]: this submodule was imported for inputs of shape "
                              "[32], but the previous layer produces [16]"),
              std::string::npos)
        << d.format();
    json missing = imported("a", {8}, {16}, 256);
    missing.erase("forward_flops");
    missing["colour"] = "red";
    Diagnostics d2;
    EXPECT_FALSE(analyze_json(project(json::array({missing})), d2));
    EXPECT_TRUE(d2.mentions("model.layers[0].forward_flops")) << d2.format();
    EXPECT_TRUE(d2.mentions("model.layers[0].colour")) << d2.format();
    // A shape too large to count is named, not overflowed.
    Diagnostics d3;
    EXPECT_FALSE(analyze_json(
        project(json::array({imported("a", {8}, {2147483647, 2147483647, 2147483647}, 1)})), d3));
    EXPECT_TRUE(d3.mentions("model.layers[0].output_shape")) << d3.format();
}

TEST(TorchScriptLayer, TheFileIsRelativeOnDiskAndAbsoluteInMemory) {
    const fs::path dir = fs::temp_directory_path() / "pipewright-ts-layer";
    fs::remove_all(dir);
    fs::create_directories(dir / "models");
    json j = project(json::array({imported("a", {8}, {16}, 256)}));
    j["model"]["layers"][0]["module"] = "models/net.pt";
    { std::ofstream(dir / "p.json") << j.dump(); }
    const auto first = load_project_file(dir / "p.json");
    ASSERT_TRUE(first.project);
    EXPECT_EQ(first.project->model.layers[0].params["module"], (dir / "models/net.pt").string());
    // Saved elsewhere, the file is written relative to the new place.
    fs::create_directories(dir / "elsewhere");
    save_project_file(*first.project, dir / "elsewhere/q.json");
    std::ifstream in(dir / "elsewhere/q.json");
    EXPECT_EQ(json::parse(in)["model"]["layers"][0]["module"], "../models/net.pt");
    const auto second = load_project_file(dir / "elsewhere/q.json");
    ASSERT_TRUE(second.project);
    EXPECT_EQ(*second.project, *first.project);
    fs::remove_all(dir);
}

}  // namespace
}  // namespace pipewright
