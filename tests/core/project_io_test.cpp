#include "pipewright/core/project_io.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>
#include "project_fixtures.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipewright/core/analysis.h"
#include "pipewright/core/diagnostics.h"
#include "pipewright/core/project.h"

namespace pipewright {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A fresh folder under the system temp folder, removed with its contents.
class TempDir {
  public:
    TempDir() {
        static std::atomic<int> counter{0};
        path_ = fs::temp_directory_path() / ("pipewright-project-io-" + std::to_string(::getpid()) +
                                             "-" + std::to_string(counter++));
        fs::remove_all(path_);
        fs::create_directories(path_);
    }
    ~TempDir() {
        std::error_code ec;
        fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ec);
        fs::remove_all(path_, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    [[nodiscard]] const fs::path& path() const { return path_; }

  private:
    fs::path path_;
};

std::vector<std::string> entries_of(const fs::path& dir) {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir)) {
        names.push_back(e.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
}

void write_text(const fs::path& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary);
    out << text;
}

std::vector<fs::path> example_files() {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(fs::path(PIPEWRIGHT_ASSETS_DIR) / "examples")) {
        if (e.path().extension() == ".json") {
            files.push_back(e.path());
        }
    }
    std::sort(files.begin(), files.end());
    return files;
}

using testing::contains;
using testing::diagnose;
using testing::dummy_json;
using testing::has_diagnostic;
using testing::parse_ok;

// A project that uses every optional feature of the format.
Project full_project() {
    Project p;
    p.model.name = "full";
    p.model.input.shape = {4, 8};
    p.model.input.dtype = DType::float32;
    p.model.loss = LossKind::cross_entropy;

    LayerSpec fc;
    fc.name = "fc";
    fc.type = "linear";
    fc.params = {{"in_features", 8}, {"out_features", 16}, {"bias", false}};
    CostOverride fc_cost;
    fc_cost.forward_ms = 1.5;
    fc_cost.backward_input_ms = 0.25;
    fc.cost = fc_cost;
    fc.activation_bytes = 4096;

    LayerSpec act;
    act.name = "act";
    act.type = "dropout";
    act.params = {{"p", 0.125}};

    LayerSpec out;
    out.name = "out";
    out.type = "linear";
    out.params = {{"in_features", 16}, {"out_features", 3}};
    CostOverride out_cost;
    out_cost.backward_weight_ms = 0.0;
    out.cost = out_cost;
    out.activation_bytes = 0;
    p.model.layers = {fc, act, out};

    p.topology.links.intra_container = {200, 3};
    p.topology.links.intra_node = {25, 7.5};
    p.topology.links.inter_node = {12.5, 30};
    Device g0{"g0", "H100-SXM", {}};
    g0.overrides.peak_tflops = 400.0;
    g0.overrides.memory_GiB = 40.0;
    Device g1{"g1", "A100-80GB", {}};
    Device l4{"g0", "L4", {}};
    l4.overrides.memory_GiB = 12.0;
    p.topology.nodes = {Node{"n0", {Container{"c0", {g0, g1}}}},
                        Node{"n1", {Container{"c0", {l4}}}}};
    LinkOverride o;
    o.device_a = "n0/c0/g0";
    o.device_b = "n1/c0/g0";
    o.link = {25, 8};
    p.topology.link_overrides = {o};

    p.placement = {{"n0/c0/g0", {"fc"}}, {"n0/c0/g1", {"act"}}, {"n1/c0/g0", {"out"}}};

    p.training.batch_size = 48;
    p.training.microbatch_size = 6;
    p.training.schedule = ScheduleChoice{"csv", "schedules/mine.csv"};
    p.training.optimizer.type = OptimizerKind::adam;
    p.training.optimizer.lr = 3e-4;
    p.training.optimizer.weight_decay = 0.01;
    p.training.steps = 7;
    p.training.dtype = DType::bfloat16;
    p.training.recompute = Recompute::full;
    p.training.seed = 1234;
    return p;
}

// ---- round trips -------------------------------------------------------------

TEST(ProjectIo, EveryExampleRoundTripsThroughJson) {
    ASSERT_GE(example_files().size(), 7U);
    for (const auto& file : example_files()) {
        SCOPED_TRACE(file.string());
        const LoadedProject loaded = load_project_file(file);
        ASSERT_TRUE(loaded.diagnostics.empty()) << loaded.diagnostics.format();
        ASSERT_TRUE(loaded.project.has_value());
        const json written = project_to_json(*loaded.project);
        Diagnostics d;
        const auto back = project_from_json(written, d);
        EXPECT_TRUE(d.empty()) << d.format();
        ASSERT_TRUE(back.has_value());
        EXPECT_EQ(*back, *loaded.project);
        EXPECT_EQ(project_to_json(*back), written);
    }
}

// true and false as before; "selective" (and "full", "none") as words.
TEST(ProjectIo, RecomputationIsReadAsABooleanOrAWord) {
    Project p = full_project();
    for (const Recompute r : {Recompute::none, Recompute::selective, Recompute::full}) {
        p.training.recompute = r;
        const json written = project_to_json(p);
        Diagnostics d;
        const auto back = project_from_json(written, d);
        ASSERT_TRUE(back.has_value()) << d.format();
        EXPECT_EQ(back->training.recompute, r);
    }
    EXPECT_EQ(project_to_json(p)["training"]["activation_checkpointing"], true);
    p.training.recompute = Recompute::selective;
    json j = project_to_json(p);
    EXPECT_EQ(j["training"]["activation_checkpointing"], "selective");
    for (const auto& [word, want] :
         {std::pair{"full", Recompute::full}, {"none", Recompute::none}}) {
        j["training"]["activation_checkpointing"] = word;
        Diagnostics d;
        EXPECT_EQ(project_from_json(j, d)->training.recompute, want) << word;
    }
    j["training"]["activation_checkpointing"] = 1;
    Diagnostics d;
    (void)project_from_json(j, d);
    EXPECT_EQ(d.format(),
              "training.activation_checkpointing: must be true, false, \"none\", \"selective\" or "
              "\"full\", got the number 1");
}

// training.recompute_blocks: written only when set, read back alike.
TEST(ProjectIo, RecomputeBlocksRoundTripAndAreWrittenOnlyWhenSet) {
    Project p = full_project();
    p.training.recompute = Recompute::full;
    EXPECT_FALSE(project_to_json(p)["training"].contains("recompute_blocks"));
    p.training.recompute_blocks = 5;
    const json j = project_to_json(p);
    EXPECT_EQ(j["training"]["recompute_blocks"], 5);
    Diagnostics d;
    const auto back = project_from_json(j, d);
    ASSERT_TRUE(back.has_value()) << d.format();
    EXPECT_EQ(back->training.recompute_blocks, 5);
    EXPECT_EQ(*back, p);
}

// FP8 training is "float8" in the file: bfloat16 everywhere but the blocks'
// GEMMs. Every device of the layout needs FP8 tensor cores.
TEST(ProjectIo, Float8IsReadWrittenAndNeedsFp8Devices) {
    Project p = full_project();
    p.training.dtype = DType::bfloat16;
    p.training.float8 = true;
    const json written = project_to_json(p);
    EXPECT_EQ(written["training"]["dtype"], "float8");
    Diagnostics d;
    const auto back = project_from_json(written, d);
    ASSERT_TRUE(back.has_value()) << d.format();
    EXPECT_EQ(back->training, p.training);
    EXPECT_EQ(back->training.dtype, DType::bfloat16);

    // The H100 and the L4 have FP8 tensor cores; the A100 does not.
    const auto analyzed = analyze_project(*back, {}, d);
    EXPECT_FALSE(analyzed.has_value());
    EXPECT_NE(d.format().find("training.dtype: float8 runs the blocks' GEMMs on FP8 tensor cores, "
                              "which n0/c0/g1 (A100-80GB) does not have; use bfloat16, or "
                              "devices with FP8 (H100-SXM"),
              std::string::npos)
        << d.format();
    Project without_a100 = *back;
    without_a100.topology.nodes[0].containers[0].devices[1].spec = "H100-SXM";
    without_a100.training.schedule = ScheduleChoice{"gpipe", ""};
    Diagnostics fine;
    EXPECT_TRUE(analyze_project(without_a100, {}, fine).has_value()) << fine.format();

    json j = written;
    j["training"]["dtype"] = "float4";
    Diagnostics bad;
    (void)project_from_json(j, bad);
    EXPECT_NE(bad.format().find("training.dtype"), std::string::npos) << bad.format();
    EXPECT_NE(bad.format().find("float8"), std::string::npos) << bad.format();
}

// "fused" by default and left out of the file; "add" written and read back;
// anything else named with what it may be.
TEST(ProjectIo, GradientAccumulationIsFusedUnlessTheFileSaysAdd) {
    Project p = full_project();
    EXPECT_EQ(p.training.gradient_accumulation, GradientAccumulation::fused);
    json j = project_to_json(p);
    EXPECT_FALSE(j["training"].contains("gradient_accumulation"));
    p.training.gradient_accumulation = GradientAccumulation::add;
    j = project_to_json(p);
    EXPECT_EQ(j["training"]["gradient_accumulation"], "add");
    Diagnostics d;
    const auto back = project_from_json(j, d);
    ASSERT_TRUE(back.has_value()) << d.format();
    EXPECT_EQ(back->training.gradient_accumulation, GradientAccumulation::add);
    j["training"]["gradient_accumulation"] = "sum";
    Diagnostics bad;
    (void)project_from_json(j, bad);
    EXPECT_EQ(bad.format(),
              "training.gradient_accumulation: must be \"fused\" or \"add\", got \"sum\"");
}

// Gradients in the training dtype unless the file says otherwise; float32
// beside bfloat16 is written and read back; a precision below the weights'
// is refused with what it may be.
TEST(ProjectIo, GradientDtypeIsTheTrainingDtypeUnlessTheFileSaysFloat32) {
    Project p = full_project();
    p.training.dtype = DType::bfloat16;
    EXPECT_EQ(p.training.gradients(), DType::bfloat16);
    json j = project_to_json(p);
    EXPECT_FALSE(j["training"].contains("gradient_dtype"));
    p.training.gradient_dtype = DType::float32;
    j = project_to_json(p);
    EXPECT_EQ(j["training"]["gradient_dtype"], "float32");
    Diagnostics d;
    const auto back = project_from_json(j, d);
    ASSERT_TRUE(back.has_value()) << d.format();
    EXPECT_EQ(back->training.gradients(), DType::float32);
    EXPECT_EQ(*back, p);

    j["training"]["dtype"] = "float32";
    j["training"]["gradient_dtype"] = "bfloat16";
    Diagnostics bad;
    (void)project_from_json(j, bad);
    EXPECT_EQ(bad.format(),
              "training.gradient_dtype: gradients are held as precisely as the weights or more: "
              "\"float32\", or the training dtype \"float32\"");
}

// training.attention_kernel: written only when not FlashAttention-2, so
// files written before it read back alike; an unknown name is refused.
TEST(ProjectIo, TheAttentionKernelRoundTripsAndIsWrittenOnlyWhenChosen) {
    Project p = full_project();
    json j = project_to_json(p);
    EXPECT_FALSE(j["training"].contains("attention_kernel"));
    p.training.attention_kernel = AttentionKernel::flash3;
    j = project_to_json(p);
    EXPECT_EQ(j["training"]["attention_kernel"], "flash3");
    Diagnostics d;
    const auto back = project_from_json(j, d);
    ASSERT_TRUE(back.has_value()) << d.format();
    EXPECT_EQ(back->training.attention_kernel, AttentionKernel::flash3);
    EXPECT_EQ(*back, p);

    j["training"]["attention_kernel"] = "flash4";
    Diagnostics bad;
    (void)project_from_json(j, bad);
    EXPECT_EQ(bad.format(),
              "training.attention_kernel: must be \"flash2\", \"cudnn\" or \"flash3\", got "
              "\"flash4\"");
}

TEST(ProjectIo, EveryExampleRoundTripsThroughAFile) {
    TempDir dir;
    for (const auto& file : example_files()) {
        SCOPED_TRACE(file.string());
        const LoadedProject loaded = load_project_file(file);
        ASSERT_TRUE(loaded.project.has_value()) << loaded.diagnostics.format();
        const fs::path saved = dir.path() / file.filename();
        save_project_file(*loaded.project, saved);
        const LoadedProject again = load_project_file(saved);
        EXPECT_TRUE(again.diagnostics.empty()) << again.diagnostics.format();
        ASSERT_TRUE(again.project.has_value());
        EXPECT_EQ(*again.project, *loaded.project);
    }
}

TEST(ProjectIo, LoadsTheDummyExampleFieldByField) {
    const LoadedProject loaded =
        load_project_file(fs::path(PIPEWRIGHT_ASSETS_DIR) / "examples" / "dummy-2gpu.json");
    ASSERT_TRUE(loaded.project.has_value()) << loaded.diagnostics.format();
    const Project& p = *loaded.project;
    EXPECT_EQ(p.model.name, "dummy");
    EXPECT_EQ(p.model.input.shape, (Shape{20}));
    EXPECT_EQ(p.model.input.dtype, DType::float32);
    EXPECT_EQ(p.model.loss, LossKind::mse);
    ASSERT_EQ(p.model.layers.size(), 3U);
    EXPECT_EQ(p.model.layers[0].name, "net0");
    EXPECT_EQ(p.model.layers[0].type, "linear");
    EXPECT_EQ(p.model.layers[0].params, (json{{"in_features", 20}, {"out_features", 10}}));
    EXPECT_EQ(p.model.layers[1].params, json::object());
    EXPECT_FALSE(p.model.layers[0].cost.has_value());
    EXPECT_EQ(p.topology.links.intra_node, (LinkSpec{32, 10, kPcieEfficiency}));
    ASSERT_EQ(p.topology.nodes.size(), 1U);
    ASSERT_EQ(p.topology.nodes[0].containers.size(), 1U);
    ASSERT_EQ(p.topology.nodes[0].containers[0].devices.size(), 2U);
    EXPECT_EQ(p.topology.nodes[0].containers[0].devices[1].name, "gpu1");
    EXPECT_EQ(p.topology.nodes[0].containers[0].devices[1].spec, "A100-80GB");
    ASSERT_EQ(p.placement.size(), 2U);
    EXPECT_EQ(p.placement[0], (StageAssignment{"node0/c0/gpu0", {"net0", "relu"}}));
    EXPECT_EQ(p.placement[1], (StageAssignment{"node0/c0/gpu1", {"net1"}}));
    EXPECT_EQ(p.training.batch_size, 32);
    EXPECT_EQ(p.training.microbatches, 4);
    EXPECT_FALSE(p.training.microbatch_size.has_value());
    EXPECT_EQ(p.training.schedule.name, "gpipe");
    EXPECT_FALSE(p.training.schedule.from_csv());
    EXPECT_EQ(p.training.optimizer.type, OptimizerKind::sgd);
    EXPECT_DOUBLE_EQ(p.training.optimizer.lr, 0.001);
    EXPECT_EQ(p.training.steps, 10);
}

TEST(ProjectIo, OptionalFieldsTakeTheirDefaults) {
    const json j = json::parse(R"({
      "format": "pipewright-project", "version": 1,
      "model": {"input": {"shape": [4]}, "layers": [{"name": "a", "type": "relu"}]},
      "topology": {"nodes": [{"name": "n", "containers": [{"name": "c", "devices": [
        {"name": "d", "spec": "cpu"}]}]}]},
      "placement": [{"device": "n/c/d", "layers": ["a"]}],
      "training": {"batch_size": 2}
    })");
    const Project p = parse_ok(j);
    EXPECT_EQ(p.model.name, "model");
    EXPECT_EQ(p.model.input.dtype, DType::float32);
    EXPECT_EQ(p.model.loss, LossKind::mse);
    EXPECT_EQ(p.topology.links, LinkClasses{});
    EXPECT_EQ(p.topology.links.intra_container, (LinkSpec{300, 5, kNvlinkEfficiency}));
    EXPECT_EQ(p.topology.links.intra_node, (LinkSpec{32, 10, kPcieEfficiency}));
    EXPECT_EQ(p.topology.links.inter_node, (LinkSpec{50, 20, kNetworkEfficiency}));
    EXPECT_TRUE(p.topology.link_overrides.empty());
    EXPECT_FALSE(p.training.microbatches.has_value());
    EXPECT_FALSE(p.training.microbatch_size.has_value());
    EXPECT_EQ(p.training.resolved_microbatches(), 1);
    EXPECT_EQ(p.training.schedule, ScheduleChoice{});
    EXPECT_EQ(p.training.schedule.name, "gpipe");
    EXPECT_EQ(p.training.optimizer, OptimizerConfig{});
    EXPECT_EQ(p.training.steps, 10);
    EXPECT_EQ(p.training.dtype, DType::float32);
    EXPECT_FALSE(p.training.full_recompute());
    EXPECT_EQ(p.training.seed, 0);
}

TEST(ProjectIo, LinkOverrideIsRead) {
    json j = dummy_json();
    j["topology"]["link_overrides"] = json::parse(
        R"([{"between": ["node0/c0/gpu0", "node0/c0/gpu1"], "bandwidth_GBps": 25,
             "latency_us": 8}])");
    const Diagnostics d = diagnose(j);
    EXPECT_TRUE(d.empty()) << d.format();
    Diagnostics ignored;
    const auto p = project_from_json(j, ignored);
    ASSERT_TRUE(p.has_value());
    ASSERT_EQ(p->topology.link_overrides.size(), 1U);
    EXPECT_EQ(p->topology.link_overrides[0].device_a, "node0/c0/gpu0");
    EXPECT_EQ(p->topology.link_overrides[0].device_b, "node0/c0/gpu1");
    EXPECT_EQ(p->topology.link_overrides[0].link, (LinkSpec{25, 8}));

    // Without latency_us an override has none (not the class default).
    j["topology"]["link_overrides"][0].erase("latency_us");
    Diagnostics d2;
    const auto p2 = project_from_json(j, d2);
    EXPECT_TRUE(d2.empty()) << d2.format();
    ASSERT_TRUE(p2.has_value());
    ASSERT_EQ(p2->topology.link_overrides.size(), 1U);
    EXPECT_EQ(p2->topology.link_overrides[0].link, (LinkSpec{25, 0}));
}

TEST(ProjectIo, LinkOverrideBetweenNeedsTwoPaths) {
    json j = dummy_json();
    j["topology"]["link_overrides"] =
        json::parse(R"([{"between": ["node0/c0/gpu0"], "bandwidth_GBps": 25}])");
    EXPECT_TRUE(has_diagnostic(diagnose(j), "topology.link_overrides[0].between",
                               {"exactly two device paths"}));
}

TEST(ProjectIo, HandBuiltProjectWithEveryFeatureRoundTrips) {
    const Project p = full_project();
    Diagnostics d;
    const auto back = project_from_json(project_to_json(p), d);
    EXPECT_TRUE(d.empty()) << d.format();
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(*back, p);

    TempDir dir;
    const fs::path file = dir.path() / "full.json";
    save_project_file(p, file);
    const LoadedProject loaded = load_project_file(file);
    EXPECT_TRUE(loaded.diagnostics.empty()) << loaded.diagnostics.format();
    ASSERT_TRUE(loaded.project.has_value());
    EXPECT_EQ(*loaded.project, p);
}

TEST(ProjectIo, HandBuiltVariantRoundTrips) {
    // The other branch of each choice: microbatches, a named schedule, adamw,
    // float16, int64 token input, no overrides.
    Project p;
    p.model.name = "tokens";
    p.model.input = {{16}, DType::int64};
    LayerSpec emb;
    emb.name = "embed";
    emb.type = "embedding";
    emb.params = {{"num_embeddings", 100}, {"embedding_dim", 8}};
    p.model.layers = {emb};
    p.topology.nodes = {Node{"n", {Container{"c", {Device{"d", "cpu", {}}}}}}};
    p.placement = {{"n/c/d", {"embed"}}};
    p.training.batch_size = 8;
    p.training.microbatches = 2;
    p.training.schedule = ScheduleChoice{"zb-h1", ""};
    p.training.optimizer = {OptimizerKind::adamw, 0.5, 0.25, 0.125};
    p.training.dtype = DType::float16;
    Diagnostics d;
    const auto back = project_from_json(project_to_json(p), d);
    EXPECT_TRUE(d.empty()) << d.format();
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(*back, p);
}

// ---- atomic save -------------------------------------------------------------

TEST(ProjectIo, SaveReplacesAnExistingFileCompletely) {
    TempDir dir;
    const fs::path file = dir.path() / "project.json";
    write_text(file, std::string(200000, 'x'));
    const Project p = full_project();
    save_project_file(p, file);
    EXPECT_EQ(read_text_file(file), project_to_json(p).dump(2) + "\n");
    const LoadedProject loaded = load_project_file(file);
    ASSERT_TRUE(loaded.project.has_value()) << loaded.diagnostics.format();
    EXPECT_EQ(*loaded.project, p);
}

TEST(ProjectIo, SaveLeavesNoTemporaryFiles) {
    TempDir dir;
    const fs::path file = dir.path() / "p.json";
    save_project_file(full_project(), file);
    save_project_file(full_project(), file);
    EXPECT_EQ(entries_of(dir.path()), (std::vector<std::string>{"p.json"}));
}

// A new file is 0666 less the user's umask, as any editor makes it.
TEST(ProjectIo, SaveOfANewFileFollowsTheUmask) {
    TempDir dir;
    const mode_t previous = ::umask(027);
    save_project_file(full_project(), dir.path() / "p.json");
    ::umask(previous);
    EXPECT_EQ(fs::status(dir.path() / "p.json").permissions(), fs::perms(0640));
    const mode_t open = ::umask(0);
    save_project_file(full_project(), dir.path() / "q.json");
    ::umask(open);
    EXPECT_EQ(fs::status(dir.path() / "q.json").permissions(), fs::perms(0666));
}

// Overwriting never widens (or narrows) a file's permissions.
TEST(ProjectIo, SaveOverAFileKeepsItsPermissions) {
    TempDir dir;
    const fs::path file = dir.path() / "p.json";
    save_project_file(full_project(), file);
    fs::permissions(file, fs::perms(0600), fs::perm_options::replace);
    save_project_file(full_project(), file);
    EXPECT_EQ(fs::status(file).permissions(), fs::perms(0600));
    fs::permissions(file, fs::perms(0664), fs::perm_options::replace);
    save_project_file(full_project(), file);
    EXPECT_EQ(fs::status(file).permissions(), fs::perms(0664));
}

TEST(ProjectIo, SaveIntoAMissingFolderThrowsAndLeavesNothing) {
    TempDir dir;
    const fs::path file = dir.path() / "missing" / "p.json";
    try {
        save_project_file(full_project(), file);
        ADD_FAILURE() << "no exception";
    } catch (const std::runtime_error& e) {
        EXPECT_TRUE(contains(e.what(), file.string())) << e.what();
    }
    EXPECT_FALSE(fs::exists(dir.path() / "missing"));
    EXPECT_TRUE(entries_of(dir.path()).empty());
}

TEST(ProjectIo, SaveIntoAReadOnlyFolderKeepsTheOldFile) {
    TempDir dir;
    const fs::path file = dir.path() / "p.json";
    write_text(file, "old contents\n");
    fs::permissions(dir.path(), fs::perms(0555), fs::perm_options::replace);
    if (::access(dir.path().c_str(), W_OK) == 0) {
        fs::permissions(dir.path(), fs::perms::owner_all, fs::perm_options::add);
        GTEST_SKIP() << "the folder stays writable (running as root?)";
    }
    EXPECT_THROW(save_project_file(full_project(), file), std::runtime_error);
    fs::permissions(dir.path(), fs::perms::owner_all, fs::perm_options::add);
    EXPECT_EQ(read_text_file(file), "old contents\n");
    EXPECT_EQ(entries_of(dir.path()), (std::vector<std::string>{"p.json"}));
}

TEST(ProjectIo, SaveOverAFolderFailsAndCleansUp) {
    TempDir dir;
    const fs::path target = dir.path() / "taken";
    fs::create_directories(target / "inside");
    EXPECT_THROW(save_project_file(full_project(), target), std::runtime_error);
    EXPECT_TRUE(fs::is_directory(target / "inside"));
    EXPECT_EQ(entries_of(dir.path()), (std::vector<std::string>{"taken"}));
}

TEST(ProjectIo, WriteFileAtomicallyWritesExactBytes) {
    TempDir dir;
    const fs::path file = dir.path() / "a.txt";
    const std::string text = std::string("line 1\n\0binary\n", 15) + std::string(100000, 'z');
    write_file_atomically(file, text);
    EXPECT_EQ(read_text_file(file), text);
    write_file_atomically(file, "");
    EXPECT_EQ(read_text_file(file), "");
    EXPECT_EQ(entries_of(dir.path()), (std::vector<std::string>{"a.txt"}));
}

TEST(ProjectIo, LoadingAMissingFileReportsIt) {
    TempDir dir;
    const fs::path file = dir.path() / "nope.json";
    const LoadedProject loaded = load_project_file(file);
    EXPECT_FALSE(loaded.project.has_value());
    ASSERT_EQ(loaded.diagnostics.size(), 1U);
    EXPECT_TRUE(contains(loaded.diagnostics.items()[0].message, file.string()))
        << loaded.diagnostics.format();
}

// ---- structural diagnostics -----------------------------------------------------

}  // namespace
}  // namespace pipewright
