// Structural problems in project files: each is reported with its JSON path,
// all of a file's problems at once, and nothing throws.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "pipewright/core/project_io.h"
#include "project_fixtures.h"

namespace pipewright {
namespace {

using nlohmann::json;
using testing::contains;
using testing::diagnose;
using testing::dummy_json;
using testing::has_diagnostic;
using testing::parse_ok;

TEST(ProjectIo, ValidDummyHasNoDiagnostics) {
    EXPECT_TRUE(diagnose(dummy_json()).empty()) << diagnose(dummy_json()).format();
}

TEST(ProjectIo, TextThatIsNotJsonNamesLineAndColumn) {
    const LoadedProject loaded = parse_project_text(
        "{\n  \"format\": \"pipewright-project\",\n  \"version\": 1,\n  oops\n}\n");
    EXPECT_FALSE(loaded.project.has_value());
    ASSERT_EQ(loaded.diagnostics.size(), 1U);
    const auto& message = loaded.diagnostics.items()[0].message;
    EXPECT_TRUE(contains(message, "line 4")) << message;
    EXPECT_TRUE(contains(message, "column")) << message;
}

TEST(ProjectIo, NotJsonColumnIsTheOffendingCharacter) {
    // The `x` is the first character of line 2; the message must not point past it.
    const LoadedProject loaded = parse_project_text("{\nx}");
    ASSERT_EQ(loaded.diagnostics.size(), 1U);
    const auto& message = loaded.diagnostics.items()[0].message;
    EXPECT_TRUE(contains(message, "not valid JSON at line 2, column 1")) << message;
}

TEST(ProjectIo, DocumentThatIsNotAnObject) {
    const LoadedProject loaded = parse_project_text("[1, 2]");
    EXPECT_FALSE(loaded.project.has_value());
    EXPECT_TRUE(has_diagnostic(loaded.diagnostics, "(document)", {"JSON object"}));
}

TEST(ProjectIo, WrongFormatString) {
    json j = dummy_json();
    j["format"] = "pipewright-timeline";
    EXPECT_TRUE(
        has_diagnostic(diagnose(j), "format", {"pipewright-project", "pipewright-timeline"}));
}

TEST(ProjectIo, VersionTwoIsRejected) {
    json j = dummy_json();
    j["version"] = 2;
    const Diagnostics d = diagnose(j);
    EXPECT_TRUE(has_diagnostic(d, "version", {"version 1", "version 2"}));
    EXPECT_EQ(d.size(), 1U) << d.format();
}

TEST(ProjectIo, EachMissingSectionIsNamed) {
    for (const char* section :
         {"format", "version", "model", "topology", "placement", "training"}) {
        SCOPED_TRACE(section);
        json j = dummy_json();
        j.erase(section);
        const Diagnostics d = diagnose(j);
        EXPECT_TRUE(has_diagnostic(d, section, {"missing"}));
    }
    json none = dummy_json();
    for (const char* section : {"model", "topology", "placement", "training"}) {
        none.erase(section);
    }
    const Diagnostics d = diagnose(none);
    EXPECT_EQ(d.size(), 4U) << d.format();
}

TEST(ProjectIo, LayerWithoutAName) {
    json j = dummy_json();
    j["model"]["layers"][1].erase("name");
    EXPECT_TRUE(has_diagnostic(diagnose(j), "model.layers[1].name", {"missing"}));
    j["model"]["layers"] = json::array();
    EXPECT_TRUE(has_diagnostic(diagnose(j), "model.layers", {"at least one layer"}));
}

TEST(ProjectIo, DuplicatedLayerName) {
    json j = dummy_json();
    j["model"]["layers"][2]["name"] = "net0";
    EXPECT_TRUE(has_diagnostic(diagnose(j), "model.layers[2].name", {"\"net0\"", "twice"}));
}

TEST(ProjectIo, LayerHyperParametersStayInParams) {
    json j = dummy_json();
    j["model"]["layers"][0]["cost"] = {{"forward_ms", 2.5}};
    j["model"]["layers"][0]["activation_bytes"] = 1000;
    j["model"]["layers"][0]["bias"] = false;
    const Project p = parse_ok(j);
    const LayerSpec& l = p.model.layers[0];
    EXPECT_EQ(l.params, (json{{"in_features", 20}, {"out_features", 10}, {"bias", false}}));
    ASSERT_TRUE(l.cost.has_value());
    EXPECT_EQ(l.cost->forward_ms, 2.5);
    EXPECT_FALSE(l.cost->backward_input_ms.has_value());
    EXPECT_EQ(l.activation_bytes, 1000);
}

TEST(ProjectIo, BadCostOverride) {
    json j = dummy_json();
    j["model"]["layers"][0]["cost"] = {{"forward_ms", -1}, {"backwards_ms", 1}};
    j["model"]["layers"][1]["activation_bytes"] = -5;
    const Diagnostics d = diagnose(j);
    EXPECT_TRUE(has_diagnostic(d, "model.layers[0].cost.forward_ms", {"-1"}));
    EXPECT_TRUE(has_diagnostic(d, "model.layers[0].cost.backwards_ms", {"unknown field"}));
    EXPECT_TRUE(has_diagnostic(d, "model.layers[1].activation_bytes", {"-5"}));
}

TEST(ProjectIo, UnknownFieldsAreNamed) {
    json j = dummy_json();
    j["trainig"] = j["training"];
    j.erase("training");
    Diagnostics d = diagnose(j);
    EXPECT_TRUE(has_diagnostic(d, "trainig", {"unknown field", "training"}));
    EXPECT_TRUE(has_diagnostic(d, "training", {"missing"}));

    j = dummy_json();
    j["training"]["optimizer"]["learning_rate"] = 0.1;
    j["topology"]["nodes"][0]["containers"][0]["devices"][0]["memory_gb"] = 10;
    d = diagnose(j);
    EXPECT_TRUE(has_diagnostic(d, "training.optimizer.learning_rate", {"unknown field", "lr"}));
    EXPECT_TRUE(has_diagnostic(d, "topology.nodes[0].containers[0].devices[0].memory_gb",
                               {"unknown field", "memory_GiB"}));
}

TEST(ProjectIo, WrongTypesNameTheirPath) {
    json j = dummy_json();
    j["training"]["batch_size"] = "32";
    j["training"]["microbatches"] = 2.5;
    j["model"]["input"]["shape"] = {20, -1};
    const Diagnostics d = diagnose(j);
    EXPECT_TRUE(has_diagnostic(d, "training.batch_size", {"whole number", "\"32\""}));
    EXPECT_TRUE(has_diagnostic(d, "training.microbatches", {"whole number", "2.5"}));
    EXPECT_TRUE(has_diagnostic(d, "model.input.shape[1]", {"positive", "-1"}));
    EXPECT_FALSE(d.mentions("model.input.shape[0]")) << d.format();
    EXPECT_EQ(d.size(), 3U) << d.format();
}

// The words of every Pipewright file (json_reader.h): what was expected, and
// what was found with its type.
TEST(ProjectIo, WrongTypesSayWhatCame) {
    json j = dummy_json();
    j["model"]["layers"][2]["type"] = 7;
    j["training"]["batch_size"] = "32";
    j["training"]["activation_checkpointing"] = "yes";
    j["training"]["optimizer"]["type"] = "rmsprop";
    Diagnostics d;
    (void)project_from_json(j, d);
    EXPECT_EQ(d.format(),
              "model.layers[2].type: expected a string, got the number 7\n"
              "training.batch_size: expected a whole number, got the string \"32\"\n"
              "training.optimizer.type: must be \"sgd\", \"adam\" or \"adamw\", got "
              "\"rmsprop\"\n"
              "training.activation_checkpointing: must be true, false, \"none\", \"selective\" or "
              "\"full\", got \"yes\"");
}

TEST(ProjectIo, BothMicrobatchesAndMicrobatchSize) {
    json j = dummy_json();
    j["training"]["microbatch_size"] = 8;
    EXPECT_TRUE(has_diagnostic(diagnose(j), "training.microbatch_size", {"not both"}));
}

TEST(ProjectIo, ScheduleThatIsANumber) {
    json j = dummy_json();
    j["training"]["schedule"] = 3;
    EXPECT_TRUE(has_diagnostic(diagnose(j), "training.schedule", {"1f1b", "csv"}));
}

TEST(ProjectIo, ScheduleCsvObject) {
    json j = dummy_json();
    j["training"]["schedule"] = {{"csv", "mine.csv"}};
    const Project p = parse_ok(j);
    EXPECT_TRUE(p.training.schedule.from_csv());
    EXPECT_EQ(p.training.schedule.csv_path, "mine.csv");
    EXPECT_EQ(p.training.schedule.name, "csv");

    j["training"]["schedule"] = {{"file", "mine.csv"}};
    const Diagnostics d = diagnose(j);
    EXPECT_TRUE(has_diagnostic(d, "training.schedule.file", {"unknown field"}));
    EXPECT_TRUE(has_diagnostic(d, "training.schedule.csv", {"missing"}));
}

TEST(ProjectIo, UnknownOptimizer) {
    json j = dummy_json();
    j["training"]["optimizer"]["type"] = "rmsprop";
    EXPECT_TRUE(has_diagnostic(diagnose(j), "training.optimizer.type", {"rmsprop", "adam"}));
}

TEST(ProjectIo, BadDtypes) {
    for (const char* dtype : {"float64", "int64"}) {
        SCOPED_TRACE(dtype);
        json j = dummy_json();
        j["training"]["dtype"] = dtype;
        EXPECT_TRUE(has_diagnostic(diagnose(j), "training.dtype", {dtype, "bfloat16"}));
    }
    // The model input is features or token ids, not a compute precision.
    json j = dummy_json();
    j["model"]["input"]["dtype"] = "float16";
    EXPECT_TRUE(has_diagnostic(diagnose(j), "model.input.dtype", {"float16", "int64"}));
}

TEST(ProjectIo, LinkBandwidthZero) {
    json j = dummy_json();
    j["topology"]["links"]["intra_node"]["bandwidth_GBps"] = 0;
    const Diagnostics d = diagnose(j);
    EXPECT_TRUE(has_diagnostic(d, "topology.links.intra_node.bandwidth_GBps", {"from 0.001 to"}));
    EXPECT_EQ(d.size(), 1U) << d.format();
    j["topology"]["links"]["inter_node"] = {{"latency_us", 3}};
    EXPECT_TRUE(
        has_diagnostic(diagnose(j), "topology.links.inter_node.bandwidth_GBps", {"missing"}));
}

TEST(ProjectIo, LinkLatencyDefaultsToTheClassDefault) {
    json j = dummy_json();
    j["topology"]["links"] = {{"inter_node", {{"bandwidth_GBps", 7}}}};
    const Project p = parse_ok(j);
    EXPECT_EQ(p.topology.links.inter_node, (LinkSpec{7, 20, kNetworkEfficiency}));
    EXPECT_EQ(p.topology.links.intra_container, (LinkSpec{300, 5, kNvlinkEfficiency}));
}

TEST(ProjectIo, NamesWithSlash) {
    json j = dummy_json();
    j["topology"]["nodes"][0]["containers"][0]["devices"][0]["name"] = "gpu/0";
    EXPECT_TRUE(has_diagnostic(diagnose(j), "topology.nodes[0].containers[0].devices[0].name",
                               {"'/'", "gpu/0"}));
    j = dummy_json();
    j["topology"]["nodes"][0]["name"] = "a/b";
    j["topology"]["nodes"][0]["containers"][0]["name"] = "c/d";
    const Diagnostics d = diagnose(j);
    EXPECT_TRUE(has_diagnostic(d, "topology.nodes[0].name", {"a/b"}));
    EXPECT_TRUE(has_diagnostic(d, "topology.nodes[0].containers[0].name", {"c/d"}));
}

TEST(ProjectIo, DuplicateDeviceNameInOneContainer) {
    json j = dummy_json();
    j["topology"]["nodes"][0]["containers"][0]["devices"][1]["name"] = "gpu0";
    EXPECT_TRUE(has_diagnostic(diagnose(j), "topology.nodes[0].containers[0].devices[1].name",
                               {"\"gpu0\"", "twice"}));
    // Names are unique among siblings only.
    j = dummy_json();
    j["topology"]["nodes"][0]["containers"].push_back(
        {{"name", "c1"}, {"devices", {{{"name", "gpu0"}, {"spec", "A100-80GB"}}}}});
    EXPECT_TRUE(diagnose(j).empty()) << diagnose(j).format();
}

TEST(ProjectIo, DeviceOverridesAreRead) {
    json j = dummy_json();
    auto& dev = j["topology"]["nodes"][0]["containers"][0]["devices"][1];
    dev["peak_tflops"] = 100;
    dev["memory_GiB"] = 10.5;
    const Project p = parse_ok(j);
    const Device& d = p.topology.nodes[0].containers[0].devices[1];
    EXPECT_EQ(d.overrides.peak_tflops, 100.0);
    EXPECT_EQ(d.overrides.memory_GiB, 10.5);
    dev["peak_tflops"] = 0;
    EXPECT_TRUE(has_diagnostic(
        diagnose(j), "topology.nodes[0].containers[0].devices[1].peak_tflops", {"from 1e-06 to"}));
}

TEST(ProjectIo, PlacementRangeExpandsToTheNames) {
    json j = dummy_json();
    j["placement"] = json::parse(R"([
      {"device": "node0/c0/gpu0", "layers": {"from": "net0", "to": "net1"}}])");
    Project p = parse_ok(j);
    ASSERT_EQ(p.placement.size(), 1U);
    EXPECT_EQ(p.placement[0].layers, (std::vector<std::string>{"net0", "relu", "net1"}));

    j["placement"] = json::parse(R"([
      {"device": "node0/c0/gpu0", "layers": {"from": "net0", "to": "relu"}},
      {"device": "node0/c0/gpu1", "layers": {"from": "net1", "to": "net1"}}])");
    p = parse_ok(j);
    ASSERT_EQ(p.placement.size(), 2U);
    EXPECT_EQ(p.placement[0].layers, (std::vector<std::string>{"net0", "relu"}));
    EXPECT_EQ(p.placement[1].layers, (std::vector<std::string>{"net1"}));
}

TEST(ProjectIo, PlacementRangeBackwards) {
    json j = dummy_json();
    j["placement"] = json::parse(R"([
      {"device": "node0/c0/gpu0", "layers": {"from": "net1", "to": "net0"}}])");
    EXPECT_TRUE(has_diagnostic(diagnose(j), "placement[0].layers", {"net1", "net0", "after"}));
}

TEST(ProjectIo, PlacementRangeUnknownName) {
    json j = dummy_json();
    j["placement"] = json::parse(R"([
      {"device": "node0/c0/gpu0", "layers": {"from": "net0", "to": "net9"}},
      {"device": "node0/c0/gpu1", "layers": {"from": "nope", "to": "net1"}}])");
    const Diagnostics d = diagnose(j);
    EXPECT_TRUE(has_diagnostic(d, "placement[0].layers.to", {"\"net9\""}));
    EXPECT_TRUE(has_diagnostic(d, "placement[1].layers.from", {"\"nope\""}));
}

TEST(ProjectIo, PlacementShapes) {
    json j = dummy_json();
    j["placement"] = {{"device", "node0/c0/gpu0"}};
    EXPECT_TRUE(has_diagnostic(diagnose(j), "placement", {"list of stages"}));
    j["placement"] = json::parse(R"([{"device": "node0/c0/gpu0"},
                                     {"device": "node0/c0/gpu1", "layers": ["net1", 3]}])");
    const Diagnostics d = diagnose(j);
    EXPECT_TRUE(has_diagnostic(d, "placement[0].layers", {"missing"}));
    EXPECT_TRUE(has_diagnostic(d, "placement[1].layers[1]", {"layer name"}));
}

TEST(ProjectIo, ReportsEveryProblemOfAFileAtOnce) {
    json j = dummy_json();
    j["training"]["batch_size"] = "32";
    j["model"]["input"]["shape"] = {20, -1};
    j["model"]["layers"][2]["name"] = "relu";
    j["topology"]["links"]["inter_node"]["bandwidth_GBps"] = 0;
    const LoadedProject loaded = parse_project_text(j.dump(2));
    const Diagnostics& d = loaded.diagnostics;
    EXPECT_GE(d.size(), 4U) << d.format();
    EXPECT_TRUE(has_diagnostic(d, "training.batch_size"));
    EXPECT_TRUE(has_diagnostic(d, "model.input.shape[1]"));
    EXPECT_TRUE(has_diagnostic(d, "model.layers[2].name"));
    EXPECT_TRUE(has_diagnostic(d, "topology.links.inter_node.bandwidth_GBps"));
    // Bad content still yields a project, so that an editor can show it.
    EXPECT_TRUE(loaded.project.has_value());
}

// Found by fuzzing: a number too large for a double must be a diagnostic.
TEST(ProjectIo, HugeNumberIsADiagnosticNotAnException) {
    LoadedProject loaded = parse_project_text("{\"format\": \"pipewright-project\", \"a\": 1e400}");
    EXPECT_FALSE(loaded.project.has_value());
    ASSERT_EQ(loaded.diagnostics.size(), 1U);
    const std::string& message = loaded.diagnostics.items()[0].message;
    EXPECT_NE(message.find("not usable JSON: the number '1e400' is too large"), std::string::npos)
        << message;
    EXPECT_EQ(message.find("json.exception"), std::string::npos) << message;
}

}  // namespace
}  // namespace pipewright
