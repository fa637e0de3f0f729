#include "pipewright/core/analysis.h"

#include <gtest/gtest.h>

#include <unistd.h>
#include "diagnostic_matchers.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipewright/core/diagnostics.h"
#include "pipewright/core/project_io.h"
#include "pipewright/core/schedule_csv.h"
#include "pipewright/core/schedule_generators.h"

namespace pipewright {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class TempDir {
  public:
    TempDir() {
        static std::atomic<int> counter{0};
        path_ = fs::temp_directory_path() / ("pipewright-analysis-" + std::to_string(::getpid()) +
                                             "-" + std::to_string(counter++));
        fs::remove_all(path_);
        fs::create_directories(path_);
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path_, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    [[nodiscard]] const fs::path& path() const { return path_; }

  private:
    fs::path path_;
};

fs::path examples_dir() {
    return fs::path(PIPEWRIGHT_ASSETS_DIR) / "examples";
}

json example_json(const std::string& name) {
    return json::parse(read_text_file(examples_dir() / name));
}

// The dummy example: net0 (linear 20->10), relu, net1 (linear 10->10) on
// node0/c0/gpu0 and node0/c0/gpu1; batch 32 in 4 micro-batches, gpipe.
json dummy_json() {
    return example_json("dummy-2gpu.json");
}

Project to_project(const json& j) {
    Diagnostics d;
    auto p = project_from_json(j, d);
    EXPECT_TRUE(d.empty()) << "structural problems in the test input:\n" << d.format();
    return p.value_or(Project{});
}

std::optional<AnalyzedProject> analyze(const json& j, Diagnostics& d,
                                       const AnalysisOptions& options = {}) {
    return analyze_project(to_project(j), options, d);
}

// Analysis that must fail; returns the diagnostics.
Diagnostics failures(const json& j, const AnalysisOptions& options = {}) {
    Diagnostics d;
    const auto result = analyze(j, d, options);
    EXPECT_FALSE(result.has_value()) << "analysis succeeded unexpectedly";
    EXPECT_FALSE(d.empty());
    return d;
}

using testing::contains;
using testing::has_diagnostic;

// A diagnostic whose path starts with `prefix` and whose message holds every fragment.
::testing::AssertionResult has_diagnostic_under(const Diagnostics& d, const std::string& prefix,
                                                std::initializer_list<std::string> fragments) {
    for (const auto& item : d.items()) {
        if (item.path.compare(0, prefix.size(), prefix) != 0) {
            continue;
        }
        bool all = true;
        for (const auto& f : fragments) {
            all = all && contains(item.message, f);
        }
        if (all) {
            return ::testing::AssertionSuccess();
        }
    }
    return ::testing::AssertionFailure()
           << "no matching diagnostic under \"" << prefix << "\"; got:\n"
           << d.format();
}

void write_text(const fs::path& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary);
    out << text;
}

// ---- sound projects --------------------------------------------------------------

TEST(Analysis, EveryShippedExampleAnalysesCleanly) {
    int count = 0;
    for (const auto& e : fs::directory_iterator(examples_dir())) {
        if (e.path().extension() != ".json") {
            continue;
        }
        ++count;
        SCOPED_TRACE(e.path().string());
        const LoadedProject loaded = load_project_file(e.path());
        ASSERT_TRUE(loaded.project.has_value()) << loaded.diagnostics.format();
        ASSERT_TRUE(loaded.diagnostics.empty()) << loaded.diagnostics.format();
        AnalysisOptions options;
        options.base_dir = examples_dir();
        Diagnostics d;
        const auto a = analyze_project(*loaded.project, options, d);
        EXPECT_TRUE(d.empty()) << d.format();
        ASSERT_TRUE(a.has_value());
        EXPECT_EQ(a->layers.size(), loaded.project->model.layers.size());
        EXPECT_EQ(a->stages.size(), loaded.project->placement.size());
        EXPECT_EQ(a->schedule.num_stages, static_cast<int>(a->stages.size()));
        EXPECT_EQ(a->schedule.num_microbatches, a->microbatches);
        // Each replica pipelines its share of the global batch; the C
        // replicas of a context-parallel group share theirs.
        EXPECT_EQ(a->microbatches * a->microbatch_size * a->data_parallel() /
                      a->project.context_parallel.size,
                  loaded.project->training.batch_size);
        EXPECT_EQ(a->rank_specs.size(), a->ranks.size());
        EXPECT_TRUE(a->schedule.has_communication() || a->num_ranks() == 1);
    }
    EXPECT_GE(count, 7);
}

TEST(Analysis, ResolvesTheDummyExample) {
    Diagnostics d;
    const auto a = analyze(dummy_json(), d);
    ASSERT_TRUE(a.has_value()) << d.format();
    ASSERT_EQ(a->stages.size(), 2U);
    EXPECT_EQ(a->stages[0].index, 0);
    EXPECT_EQ(a->stages[0].first_layer, 0);
    EXPECT_EQ(a->stages[0].last_layer, 1);
    EXPECT_EQ(a->stages[1].first_layer, 2);
    EXPECT_EQ(a->stages[1].last_layer, 2);
    ASSERT_EQ(a->num_ranks(), 2);
    EXPECT_EQ(a->ranks[0].path, "node0/c0/gpu0");
    EXPECT_EQ(a->ranks[1].path, "node0/c0/gpu1");
    EXPECT_EQ(a->rank_specs[1].name, "A100-80GB");
    EXPECT_EQ(a->stage_ranks(), (std::vector<int>{0, 1}));
    EXPECT_EQ(a->microbatches, 4);
    EXPECT_EQ(a->microbatch_size, 8);
    EXPECT_EQ(a->schedule.name, "gpipe");
    EXPECT_EQ(a->schedule.num_microbatches, 4);
    ASSERT_EQ(a->layers.size(), 3U);
    EXPECT_EQ(a->layers[0].output_shape, (Shape{10}));
}

TEST(Analysis, DeviceOverridesReachTheRankSpecs) {
    json j = dummy_json();
    auto& dev = j["topology"]["nodes"][0]["containers"][0]["devices"][1];
    dev["peak_tflops"] = 100;
    dev["memory_GiB"] = 20;
    Diagnostics d;
    const auto a = analyze(j, d);
    ASSERT_TRUE(a.has_value()) << d.format();
    EXPECT_DOUBLE_EQ(a->rank_specs[1].flops_for(DType::float32), 100e12);
    EXPECT_EQ(a->rank_specs[1].memory_bytes, 20LL * 1024 * 1024 * 1024);
    EXPECT_DOUBLE_EQ(a->rank_specs[0].flops_for(DType::float32), 19.5e12);
}

// ---- the model ---------------------------------------------------------------------

TEST(Analysis, UnknownLayerType) {
    json j = dummy_json();
    j["model"]["layers"][1]["type"] = "relux";
    EXPECT_TRUE(has_diagnostic(failures(j), "model.layers[1].type", {"\"relux\"", "linear"}));
}

TEST(Analysis, UnknownLayerTypeAfterABrokenLayerIsStillReported) {
    json j = dummy_json();
    j["model"]["layers"][0]["in_features"] = 21;
    j["model"]["layers"][2]["type"] = "dense";
    const Diagnostics d = failures(j);
    EXPECT_TRUE(has_diagnostic(d, "model.layers[0]", {"21", "[20]"}));
    EXPECT_TRUE(has_diagnostic(d, "model.layers[2].type", {"\"dense\""}));
}

TEST(Analysis, ShapeMismatchBetweenConsecutiveLayers) {
    json j = dummy_json();
    j["model"]["layers"][2]["in_features"] = 12;
    const Diagnostics d = failures(j);
    // The later layer is at fault; the message gives what it expects and what it gets.
    EXPECT_TRUE(has_diagnostic(d, "model.layers[2]", {"in_features = 12", "[10]"}));
    EXPECT_FALSE(d.mentions("model.layers[0]")) << d.format();
    EXPECT_FALSE(d.mentions("model.layers[1]")) << d.format();
}

// ---- placement ---------------------------------------------------------------------

TEST(Analysis, LayerPlacedTwice) {
    json j = dummy_json();
    j["placement"][1]["layers"] = {"relu", "net1"};
    EXPECT_TRUE(has_diagnostic(failures(j), "placement[1].layers[0]",
                               {"\"relu\"", "twice", "placement[0]"}));
}

TEST(Analysis, LayerNeverPlaced) {
    json j = dummy_json();
    j["placement"][1]["layers"] = json::array({"relu"});
    j["placement"][0]["layers"] = json::array({"net0"});
    const Diagnostics d = failures(j);
    EXPECT_TRUE(has_diagnostic(d, "model.layers[2]", {"\"net1\"", "not placed"}));
    EXPECT_FALSE(d.mentions("model.layers[0]")) << d.format();
    EXPECT_FALSE(d.mentions("model.layers[1]")) << d.format();
}

TEST(Analysis, StagesOutOfModelOrder) {
    json j = dummy_json();
    j["placement"][0]["layers"] = json::array({"net1"});
    j["placement"][1]["layers"] = {"net0", "relu"};
    EXPECT_TRUE(has_diagnostic(failures(j), "placement[0].layers[0]",
                               {"model order", "\"net0\"", "\"net1\""}));
    // Inside one stage too.
    j = dummy_json();
    j["placement"][0]["layers"] = {"relu", "net0"};
    EXPECT_TRUE(has_diagnostic_under(failures(j), "placement[0].layers", {"model order"}));
}

TEST(Analysis, PlacementNamesAnUnknownLayerOrNone) {
    json j = dummy_json();
    j["placement"][1]["layers"] = {"net1", "head"};
    EXPECT_TRUE(has_diagnostic(failures(j), "placement[1].layers[1]", {"\"head\""}));
    j = dummy_json();
    j["placement"].push_back({{"device", "node0/c0/gpu0"}, {"layers", json::array()}});
    EXPECT_TRUE(has_diagnostic(failures(j), "placement[2].layers", {"at least one layer"}));
}

TEST(Analysis, StageWithoutADeviceIsReported) {
    // A project built in code (the studio) can leave a stage's device empty.
    Project p = to_project(dummy_json());
    p.placement[1].device = "";
    Diagnostics d;
    const auto a = analyze_project(p, {}, d);
    EXPECT_FALSE(a.has_value()) << "analysed with " << (a ? a->stages.size() : 0U) << " stages";
    EXPECT_TRUE(d.mentions("placement[1].device")) << d.format();
}

TEST(Analysis, UnknownDeviceInPlacementListsTheDevices) {
    json j = dummy_json();
    j["placement"][1]["device"] = "node0/c0/gpu7";
    EXPECT_TRUE(has_diagnostic(failures(j), "placement[1].device",
                               {"\"node0/c0/gpu7\"", "node0/c0/gpu0", "node0/c0/gpu1"}));
}

TEST(Analysis, UnknownDeviceSpecNamesTheJsonPath) {
    json j = dummy_json();
    j["topology"]["nodes"][0]["containers"][0]["devices"][1]["spec"] = "A100-81GB";
    const Diagnostics d = failures(j);
    EXPECT_TRUE(has_diagnostic_under(d, "topology", {"\"A100-81GB\"", "A100-80GB", "H100-SXM"}));
    // The path locates the value in the file, like every other diagnostic.
    EXPECT_TRUE(
        has_diagnostic(d, "topology.nodes[0].containers[0].devices[1].spec", {"\"A100-81GB\""}));
}

TEST(Analysis, LinkOverrideToAnUnknownDevice) {
    Project p = to_project(dummy_json());
    LinkOverride o;
    o.device_a = "node0/c0/gpu0";
    o.device_b = "node9/c0/gpu0";
    o.link = {10, 1};
    p.topology.link_overrides = {o};
    Diagnostics d;
    EXPECT_FALSE(analyze_project(p, {}, d).has_value());
    EXPECT_TRUE(has_diagnostic(d, "topology.link_overrides[0].between", {"node9/c0/gpu0"}));
}

TEST(Analysis, RanksFollowFirstAppearanceInThePlacement) {
    json j = dummy_json();
    j["topology"]["nodes"][0]["containers"][0]["devices"][0]["spec"] = "H100-SXM";
    j["placement"][0]["device"] = "node0/c0/gpu1";
    j["placement"][1]["device"] = "node0/c0/gpu0";
    Diagnostics d;
    const auto a = analyze(j, d);
    ASSERT_TRUE(a.has_value()) << d.format();
    ASSERT_EQ(a->num_ranks(), 2);
    EXPECT_EQ(a->ranks[0].path, "node0/c0/gpu1");
    EXPECT_EQ(a->ranks[1].path, "node0/c0/gpu0");
    EXPECT_EQ(a->rank_specs[0].name, "A100-80GB");
    EXPECT_EQ(a->rank_specs[1].name, "H100-SXM");
    EXPECT_EQ(a->stage_ranks(), (std::vector<int>{0, 1}));
}

TEST(Analysis, IdleDevicesGetNoRank) {
    json j = example_json("seven-layers-two-nodes.json");
    j["placement"] = json::parse(R"([
      {"device": "node1/c1/gpu0", "layers": {"from": "fc1", "to": "relu2"}},
      {"device": "node0/c0/gpu1", "layers": {"from": "fc3", "to": "fc4"}}])");
    j["training"]["schedule"] = "gpipe";
    Diagnostics d;
    const auto a = analyze(j, d);
    ASSERT_TRUE(a.has_value()) << d.format();
    ASSERT_EQ(a->num_ranks(), 2);
    EXPECT_EQ(a->ranks[0].path, "node1/c1/gpu0");
    EXPECT_EQ(a->ranks[0].node, 1);
    EXPECT_EQ(a->ranks[0].container, 1);
    EXPECT_EQ(a->ranks[1].path, "node0/c0/gpu1");
    EXPECT_EQ(a->stages[1].first_layer, 4);
    EXPECT_EQ(a->stages[1].last_layer, 6);
}

TEST(Analysis, DeviceHoldingTwoStagesInALoop) {
    json j = example_json("seven-layers-two-nodes.json");
    j["placement"] = json::parse(R"([
      {"device": "node0/c0/gpu0", "layers": ["fc1", "relu1"]},
      {"device": "node0/c0/gpu1", "layers": ["fc2", "relu2"]},
      {"device": "node0/c0/gpu0", "layers": ["fc3", "relu3"]},
      {"device": "node0/c0/gpu1", "layers": ["fc4"]}])");
    j["training"]["schedule"] = "interleaved-1f1b";
    Diagnostics d;
    const auto a = analyze(j, d);
    ASSERT_TRUE(a.has_value()) << d.format();
    EXPECT_EQ(a->stage_ranks(), (std::vector<int>{0, 1, 0, 1}));
    EXPECT_EQ(a->num_ranks(), 2);
    EXPECT_EQ(a->schedule.name, "interleaved-1f1b");
    EXPECT_EQ(a->schedule.stage_rank, (std::vector<int>{0, 1, 0, 1}));
    ASSERT_EQ(a->stages.size(), 4U);
    EXPECT_EQ(a->stages[2].first_layer, 4);
    EXPECT_EQ(a->stages[2].last_layer, 5);
}

// ---- batch and micro-batches -----------------------------------------------------------

TEST(Analysis, BatchNotDivisibleSuggestsDivisors) {
    json j = dummy_json();
    j["training"]["batch_size"] = 30;
    EXPECT_TRUE(has_diagnostic(failures(j), "training.microbatches",
                               {"30", "4", "1, 2, 3, 5, 6, 10, 15, 30"}));
}

// A tensor-parallel size past the largest container says so, alone, before
// anything it would cause (issue 36: "make heads 99" led 20 problems).
TEST(Analysis, ATensorGroupLargerThanAnyContainerIsTheOneProblem) {
    auto loaded = load_project_file(std::filesystem::path(PIPEWRIGHT_ASSETS_DIR) / "examples" /
                                    "gpt-tiny-t2p2-cpu.json");
    ASSERT_TRUE(loaded.project.has_value());
    AnalysisOptions options;
    options.tensor_parallel = 99;
    Diagnostics d;
    EXPECT_FALSE(analyze_project(*loaded.project, options, d).has_value());
    ASSERT_EQ(d.size(), 1U) << d.format();
    EXPECT_TRUE(has_diagnostic(
        d, "--tensor-parallel",
        {"99 is more than the 4 devices of the largest container", "use at most 4"}));
}

TEST(Analysis, MicrobatchSizeMustDivideTheBatch) {
    json j = dummy_json();
    j["training"].erase("microbatches");
    j["training"]["microbatch_size"] = 5;
    // Says where the size comes from (neither toolbar nor command line shows
    // it) and the nearest batches that it divides.
    EXPECT_TRUE(has_diagnostic(failures(j), "training.microbatch_size",
                               {"batch 32 does not split into micro-batches of 5 samples",
                                "the project's micro-batch size", "(30 or 35)",
                                "give the number of micro-batches instead"}));
    j["training"]["microbatch_size"] = 16;
    Diagnostics d;
    const auto a = analyze(j, d);
    ASSERT_TRUE(a.has_value()) << d.format();
    EXPECT_EQ(a->microbatches, 2);
    EXPECT_EQ(a->microbatch_size, 16);
}

TEST(Analysis, MoreMicrobatchesThanSamples) {
    json j = dummy_json();
    j["training"]["batch_size"] = 4;
    j["training"]["microbatches"] = 8;
    EXPECT_TRUE(
        has_diagnostic(failures(j), "training.microbatches", {"8 micro-batches", "batch of 4"}));
}

// ---- schedules ----------------------------------------------------------------------------

TEST(Analysis, OneFOneBWithFewerMicrobatchesThanStages) {
    json j = example_json("seven-layers-two-nodes.json");  // 4 stages, 1f1b
    j["training"]["microbatches"] = 2;
    EXPECT_TRUE(
        has_diagnostic(failures(j), "training.schedule", {"1f1b", "4 stages", "2 micro-batches"}));
}

TEST(Analysis, UnknownScheduleListsTheKnownOnes) {
    json j = dummy_json();
    j["training"]["schedule"] = "gpipe2";
    EXPECT_TRUE(
        has_diagnostic(failures(j), "training.schedule",
                       {"\"gpipe2\"", "naive", "gpipe", "1f1b", "interleaved-1f1b", "zb-h1"}));
    // On the command line, the flag is at fault.
    AnalysisOptions options;
    options.schedule = "fastest";
    const Diagnostics cli = failures(dummy_json(), options);
    EXPECT_TRUE(has_diagnostic(cli, "--schedule", {"\"fastest\""}));
    EXPECT_FALSE(cli.mentions("training.schedule")) << cli.format();
}

TEST(Analysis, InterleavedNeedsSeveralStagesPerDevice) {
    json j = dummy_json();
    j["training"]["schedule"] = "interleaved-1f1b";
    // Names the schedule, says what it needs and what the project has, and
    // how to go on.
    EXPECT_TRUE(has_diagnostic(
        failures(j), "training.schedule",
        {"interleaved-1f1b", "at least 2 each", "2 stages are placed on 2 devices", "use 4, 6"}));
}

TEST(Analysis, NaiveForcesOneMicrobatch) {
    json j = dummy_json();
    j["training"]["schedule"] = "naive";
    Diagnostics d;
    const auto a = analyze(j, d);
    ASSERT_TRUE(a.has_value()) << d.format();
    EXPECT_EQ(a->microbatches, 1);
    EXPECT_EQ(a->microbatch_size, 32);
    EXPECT_EQ(a->schedule.num_microbatches, 1);
    EXPECT_EQ(a->schedule.name, "naive");
}

TEST(Analysis, CommandLineOverridesTakeEffect) {
    AnalysisOptions options;
    options.schedule = "1f1b";
    options.microbatches = 8;
    options.batch_size = 64;
    Diagnostics d;
    const auto a = analyze(dummy_json(), d, options);
    ASSERT_TRUE(a.has_value()) << d.format();
    EXPECT_EQ(a->microbatches, 8);
    EXPECT_EQ(a->microbatch_size, 8);
    EXPECT_EQ(a->schedule.name, "1f1b");
    EXPECT_EQ(a->schedule.num_microbatches, 8);
    EXPECT_EQ(a->project.training.batch_size, 64);
    EXPECT_EQ(a->project.training.microbatches, 8);
    EXPECT_EQ(a->project.training.schedule.name, "1f1b");
}

TEST(Analysis, CommandLineBatchSizeKeepsTheMicrobatchSize) {
    // The project fixes 8 samples per micro-batch; doubling the batch on the
    // command line doubles the number of micro-batches.
    json j = dummy_json();
    j["training"].erase("microbatches");
    j["training"]["microbatch_size"] = 8;
    AnalysisOptions options;
    options.batch_size = 64;
    Diagnostics d;
    const auto a = analyze(j, d, options);
    ASSERT_TRUE(a.has_value()) << d.format();
    EXPECT_EQ(a->microbatch_size, 8);
    EXPECT_EQ(a->microbatches, 8);
}

TEST(Analysis, CommandLineMicrobatchProblemsNameTheFlag) {
    AnalysisOptions options;
    options.microbatches = 3;
    EXPECT_TRUE(has_diagnostic(failures(dummy_json(), options), "--microbatches", {"32", "3"}));
    AnalysisOptions batch;
    batch.batch_size = 0;
    EXPECT_TRUE(has_diagnostic(failures(dummy_json(), batch), "--batch-size", {"at least 1"}));
}

TEST(Analysis, CsvScheduleRelativeToTheBaseDir) {
    TempDir dir;
    write_text(dir.path() / "mine.csv", schedule_to_csv(generate_schedule("1f1b", {0, 1}, 4)));
    json j = dummy_json();
    j["training"]["schedule"] = {{"csv", "mine.csv"}};
    AnalysisOptions options;
    options.base_dir = dir.path();
    Diagnostics d;
    const auto a = analyze(j, d, options);
    ASSERT_TRUE(a.has_value()) << d.format();
    EXPECT_EQ(a->schedule.num_stages, 2);
    EXPECT_EQ(a->schedule.num_microbatches, 4);
    EXPECT_TRUE(a->schedule.has_communication());

    // --schedule-csv replaces the project's schedule.
    write_text(dir.path() / "cli.csv", schedule_to_csv(generate_schedule("gpipe", {0, 1}, 4)));
    AnalysisOptions cli;
    cli.schedule_csv = (dir.path() / "cli.csv").string();
    Diagnostics d2;
    const auto b = analyze(dummy_json(), d2, cli);
    ASSERT_TRUE(b.has_value()) << d2.format();
    EXPECT_TRUE(b->project.training.schedule.from_csv());
    EXPECT_EQ(b->schedule.num_microbatches, 4);
}

TEST(Analysis, CsvScheduleThatIsMissing) {
    TempDir dir;
    json j = dummy_json();
    j["training"]["schedule"] = {{"csv", "absent.csv"}};
    AnalysisOptions options;
    options.base_dir = dir.path();
    EXPECT_TRUE(
        has_diagnostic_under(failures(j, options), "training.schedule.csv", {"cannot open"}));
}

TEST(Analysis, CsvScheduleThatDeadlocks) {
    TempDir dir;
    // Rank 0 waits for the gradient of micro-batch 0 before it sends that
    // micro-batch's forward; rank 1 waits for that forward.
    write_text(dir.path() / "stuck.csv",
               "0F1,0B0,0F0,0B1,0F2,0B2,0F3,0B3\n"
               "1F0,1B0,1F1,1B1,1F2,1B2,1F3,1B3\n");
    json j = dummy_json();
    j["training"]["schedule"] = {{"csv", "stuck.csv"}};
    AnalysisOptions options;
    options.base_dir = dir.path();
    const Diagnostics d = failures(j, options);
    EXPECT_TRUE(has_diagnostic_under(d, "training.schedule.csv", {"rank 0", "stalls"}));
    EXPECT_TRUE(has_diagnostic_under(d, "training.schedule.csv", {"rank 1", "stalls"}));
}

TEST(Analysis, CsvScheduleThatDisagreesWithThePlacement) {
    TempDir dir;
    write_text(dir.path() / "one.csv", "0F0,0F1,0F2,0F3,0B0,0B1,0B2,0B3\n");
    json j = dummy_json();
    j["training"]["schedule"] = {{"csv", "one.csv"}};
    AnalysisOptions options;
    options.base_dir = dir.path();
    EXPECT_TRUE(has_diagnostic(failures(j, options), "training.schedule.csv",
                               {"1 stages", "placement has 2"}));

    write_text(dir.path() / "two.csv", schedule_to_csv(generate_schedule("gpipe", {0, 1}, 2)));
    j["training"]["schedule"] = {{"csv", "two.csv"}};
    EXPECT_TRUE(
        has_diagnostic(failures(j, options), "training.schedule.csv", {"2 micro-batches", "4"}));
}

// ---- everything at once -------------------------------------------------------------------

TEST(Analysis, ReportsSemanticProblemsTogether) {
    json j = dummy_json();
    j["model"]["layers"][1]["type"] = "relux";
    j["placement"][1]["device"] = "node0/c0/gpu9";
    j["training"]["batch_size"] = 30;
    Diagnostics d;
    d.add("earlier", "kept");
    EXPECT_FALSE(analyze(j, d).has_value());
    EXPECT_EQ(d.items()[0].path, "earlier");  // appended, not replaced
    EXPECT_TRUE(has_diagnostic(d, "model.layers[1].type"));
    EXPECT_TRUE(has_diagnostic(d, "placement[1].device"));
    EXPECT_TRUE(has_diagnostic(d, "training.microbatches"));
}

}  // namespace
}  // namespace pipewright

namespace pipewright {
namespace {

// Found by hand while fuzzing: absurd micro-batch counts must not allocate billions of actions.
TEST(Analysis, AbsurdMicrobatchCountIsRefusedBeforeScheduling) {
    auto loaded = load_project_file(std::filesystem::path(PIPEWRIGHT_ASSETS_DIR) / "examples" /
                                    "dummy-2gpu.json");
    ASSERT_TRUE(loaded.project.has_value());
    Project p = *loaded.project;
    p.training.batch_size = 2'000'000'000;
    p.training.microbatches = 1'000'000'000;
    Diagnostics d;
    EXPECT_FALSE(analyze_project(p, {}, d).has_value());
    ASSERT_EQ(d.size(), 1U) << d.format();
    EXPECT_EQ(d.items()[0].path, "training.microbatches");
    EXPECT_NE(d.items()[0].message.find("up to 10000000"), std::string::npos) << d.format();
}

// A class link without an efficiency takes its transport's (NCCL's figure);
// an override, a measured or known pair's figure, reaches all of it.
TEST(ProjectLinks, EfficiencyDefaultsByLevelAndIsChecked) {
    json j = dummy_json();
    j["topology"]["links"]["intra_node"]["efficiency"] = 0.5;
    j["topology"]["link_overrides"] =
        json::array({{{"between", {"node0/c0/gpu0", "node0/c0/gpu1"}}, {"bandwidth_GBps", 100}}});
    const Project p = to_project(j);
    EXPECT_DOUBLE_EQ(p.topology.links.intra_container.efficiency, kNvlinkEfficiency);
    EXPECT_DOUBLE_EQ(p.topology.links.intra_node.efficiency, 0.5);
    EXPECT_DOUBLE_EQ(p.topology.links.inter_node.efficiency, kNetworkEfficiency);
    ASSERT_EQ(p.topology.link_overrides.size(), 1U);
    EXPECT_DOUBLE_EQ(p.topology.link_overrides[0].link.efficiency, 1);

    for (double bad : {0.0, 1.5, -1.0}) {
        json b = dummy_json();
        b["topology"]["links"]["inter_node"]["efficiency"] = bad;
        Diagnostics d;
        (void)project_from_json(b, d);
        ASSERT_FALSE(d.empty()) << bad;
        EXPECT_NE(d.format().find("topology.links.inter_node.efficiency"), std::string::npos)
            << d.format();
    }
}

}  // namespace
}  // namespace pipewright
