// `pipewright import`: TorchScript files written by Debian's python3-torch
// (tests/torchscript/make_fixtures.py) are split into the right layers with
// the right shapes, parameters and costs; files that do not split are
// refused in words; and pipelined training of an imported module over two
// worker processes ends with the parameters of single-process training of
// the same file.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "backend_test_util.h"
#include "cli_runner.h"
#include "pipewright/backend/backend_error.h"
#include "pipewright/backend/modules.h"
#include "pipewright/backend/tensor_data.h"
#include "pipewright/backend/torchscript_import.h"
#include "pipewright/core/project_io.h"

namespace pipewright {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kFixtures = PIPEWRIGHT_TORCHSCRIPT_FIXTURES;

#define REQUIRE_FIXTURE(name)                                              \
    if (kFixtures.empty() || !fs::exists(kFixtures / (name))) {            \
        GTEST_SKIP() << "no TorchScript fixture " << (name)                \
                     << ": install python3-torch and python3-torchvision " \
                        "(scripts/setup-debian.sh) and configure again";   \
    }

backend::ImportResult import_file(const std::string& name, Shape shape, int depth = 0,
                                  DType dtype = DType::float32, int devices = 1) {
    backend::ImportOptions o;
    o.module_file = kFixtures / name;
    o.input_shape = std::move(shape);
    o.input_dtype = dtype;
    o.depth = depth;
    o.devices = devices;
    o.batch_size = 8;
    return backend::import_torchscript(o);
}

std::vector<std::string> names(const backend::ImportResult& r) {
    std::vector<std::string> out;
    for (const auto& l : r.layers) {
        out.push_back(l.path);
    }
    return out;
}

std::string refusal(const std::string& name, Shape shape) {
    try {
        (void)import_file(name, std::move(shape));
    } catch (const backend::BackendError& e) {
        return e.what();
    }
    return "(imported)";
}

TEST(TorchScriptImport, AScriptedSequentialIsItsChildrenWithTheirShapesParametersAndCosts) {
    REQUIRE_FIXTURE("mlp.pt");
    const auto r = import_file("mlp.pt", {8});
    EXPECT_EQ(names(r), (std::vector<std::string>{"0", "1", "2", "3", "4", "5", "6"}));
    const std::vector<std::int64_t> params{8 * 32 + 32,  0, 32 * 32 + 32, 0,
                                           32 * 32 + 32, 0, 32 * 4 + 4};
    for (std::size_t i = 0; i < r.layers.size(); ++i) {
        EXPECT_EQ(r.layers[i].parameters, params[i]) << i;
        EXPECT_EQ(r.layers[i].output_shape, (Shape{i == 6 ? 4 : 32})) << i;
    }
    EXPECT_EQ(r.layers[0].module_type, "Linear");
    EXPECT_EQ(r.layers[1].module_type, "ReLU");
    // A linear is 2 FLOPs a multiply-add, the same for each backward half,
    // and keeps its input for the weight gradient.
    const auto& first = r.project.model.layers[0].params;
    EXPECT_DOUBLE_EQ(first["forward_flops"].get<double>(), 2.0 * 8 * 32);
    EXPECT_DOUBLE_EQ(first["backward_input_flops"].get<double>(), 2.0 * 8 * 32);
    EXPECT_DOUBLE_EQ(first["backward_weight_flops"].get<double>(), 2.0 * 8 * 32);
    EXPECT_DOUBLE_EQ(first["stashed_elements"].get<double>(), 8);
    EXPECT_DOUBLE_EQ(r.project.model.layers[2].params["stashed_elements"].get<double>(), 32);
    // The project analyses, as simulate would read it.
    Diagnostics d;
    EXPECT_TRUE(analyze_project(r.project, {}, d)) << d.format();
}

TEST(TorchScriptImport, ATracedModuleSplitsAsTheScriptedOne) {
    REQUIRE_FIXTURE("mlp-traced.pt");
    const auto r = import_file("mlp-traced.pt", {8});
    EXPECT_EQ(r.layers.size(), 7u);
    EXPECT_EQ(r.layers.back().output_shape, Shape{4});
}

TEST(TorchScriptImport, GlueBetweenChildrenRunsWithTheChildBefore) {
    REQUIRE_FIXTURE("cnn.pt");
    const auto r = import_file("cnn.pt", {3, 16, 16});
    EXPECT_EQ(names(r),
              (std::vector<std::string>{"conv1", "bn1", "relu", "pool", "conv2", "avgpool", "fc"}));
    EXPECT_EQ(r.layers[4].output_shape, (Shape{16, 4, 4}));
    EXPECT_EQ(r.layers[5].glue, std::vector<std::string>{"flatten"});
    EXPECT_EQ(r.layers[5].output_shape, Shape{16});
    // 3x3 convolution, 3 -> 8 channels, on 16 x 16 outputs.
    EXPECT_DOUBLE_EQ(r.layers[0].forward_flops, 2.0 * 16 * 16 * 8 * 27);
    // 3x3, stride 2, 8 -> 16 channels, on 4 x 4 outputs.
    EXPECT_DOUBLE_EQ(r.layers[4].forward_flops, 2.0 * 4 * 4 * 16 * 72);
}

TEST(TorchScriptImport, DepthSplitsSequentialChildrenAndKeepsOthersWhole) {
    REQUIRE_FIXTURE("gpt.pt");
    const auto top = import_file("gpt.pt", {16}, 0, DType::int64);
    EXPECT_EQ(names(top), (std::vector<std::string>{"embed", "blocks", "ln_f", "head"}));
    EXPECT_EQ(top.project.model.layers[0].params["vocabulary"], 64);
    EXPECT_EQ(top.layers[3].output_shape, (Shape{16, 64}));
    const auto deep = import_file("gpt.pt", {16}, 1, DType::int64);
    EXPECT_EQ(names(deep), (std::vector<std::string>{"embed", "blocks.0", "blocks.1", "blocks.2",
                                                     "blocks.3", "ln_f", "head"}));
    ASSERT_EQ(deep.kept_whole.size(), 1u);
    EXPECT_NE(deep.kept_whole[0].find("embed (TokenAndPosition)"), std::string::npos);
    EXPECT_NE(deep.kept_whole[0].find("positions"), std::string::npos) << deep.kept_whole[0];
    std::int64_t total = 0;
    for (const auto& l : deep.layers) {
        total += l.parameters;
    }
    // embedding 64x32 + positions 16x32, 4 blocks, final norm, head 32x64.
    const std::int64_t block =
        2 * 2 * 32 + (32 * 96 + 96) + (32 * 32 + 32) + (32 * 128 + 128) + (128 * 32 + 32);
    EXPECT_EQ(total, 64 * 32 + 16 * 32 + 4 * block + 2 * 32 + 32 * 64);
}

TEST(TorchScriptImport, TorchvisionResNet18) {
    REQUIRE_FIXTURE("resnet18.pt");
    const auto r = import_file("resnet18.pt", {3, 32, 32}, 0, DType::float32, 4);
    EXPECT_EQ(names(r), (std::vector<std::string>{"conv1", "bn1", "relu", "maxpool", "layer1",
                                                  "layer2", "layer3", "layer4", "avgpool", "fc"}));
    std::int64_t total = 0;
    for (const auto& l : r.layers) {
        total += l.parameters;
    }
    EXPECT_EQ(total, 11181642);  // torchvision's resnet18(num_classes=10)
    EXPECT_EQ(r.layers[8].glue, std::vector<std::string>{"flatten"});
    EXPECT_EQ(r.project.topology.devices().size(), 4u);
    // The command line splits the layers over the 4 devices with the planner.
    const auto dir = test::temp_dir("ts-resnet");
    const auto placed = test::run_cli("import " + (kFixtures / "resnet18.pt").string() +
                                          " --input-shape 3,32,32 --devices 4 --dry-run --json",
                                      dir);
    ASSERT_EQ(placed.code, 0) << placed.output;
    EXPECT_EQ(json::parse(test::last_json_object(placed.output))["stages"], 4);
    fs::remove_all(dir);
    const auto deep = import_file("resnet18.pt", {3, 32, 32}, 1);
    EXPECT_EQ(deep.layers.size(), 14u);
    EXPECT_EQ(deep.layers[4].path, "layer1.0");
    EXPECT_EQ(deep.layers[4].module_type, "BasicBlock");
}

TEST(TorchScriptImport, FreshWeightsComeFromTheSeedAndTheUnknownAreNamed) {
    REQUIRE_FIXTURE("cnn.pt");
    backend::ImportOptions o;
    o.module_file = kFixtures / "cnn.pt";
    o.input_shape = {3, 16, 16};
    o.reinitialise = true;
    const auto fresh = backend::import_torchscript(o);
    EXPECT_TRUE(fresh.kept_from_file.empty());  // Conv2d, BatchNorm2d, Linear: all known
    Diagnostics d;
    const auto p = analyze_project(fresh.project, {}, d);
    ASSERT_TRUE(p) << d.format();
    o.reinitialise = false;
    const auto from_file = *analyze_project(backend::import_torchscript(o).project, {}, d);
    auto params = [](const AnalyzedProject& a, std::uint64_t seed) {
        return backend::build_model(a, seed, torch::kFloat64)->parameters();
    };
    const auto file = params(from_file, 3);
    const auto seeded = params(*p, 3);
    EXPECT_EQ(test::max_relative_difference(params(from_file, 4), file), 0) << "the file's";
    EXPECT_EQ(test::max_relative_difference(params(*p, 3), seeded), 0) << "same seed";
    EXPECT_GT(test::max_relative_difference(params(*p, 4), seeded), 0.1) << "another seed";
    EXPECT_GT(test::max_relative_difference(seeded, file), 0.1) << "not the file's";
    // PyTorch's defaults: the first convolution within ±1/sqrt(3·3·3), the
    // batch-norm's scale 1.
    EXPECT_LE(seeded[0].abs().max().item<double>(), 1 / std::sqrt(27.0));
    EXPECT_EQ(seeded[2].min().item<double>(), 1.0);

    o.module_file = kFixtures / "gpt.pt";
    o.input_shape = {16};
    o.input_dtype = DType::int64;
    o.reinitialise = true;
    EXPECT_EQ(backend::import_torchscript(o).kept_from_file,
              std::vector<std::string>{"embed.positions"});
}

TEST(TorchScriptImport, WhatDoesNotSplitIsRefusedInWords) {
    REQUIRE_FIXTURE("skip.pt");
    EXPECT_NE(refusal("skip.pt", {8}).find("skip connection"), std::string::npos)
        << refusal("skip.pt", {8});
    EXPECT_NE(refusal("two-inputs.pt", {8}).find("takes 2 inputs"), std::string::npos)
        << refusal("two-inputs.pt", {8});
    EXPECT_NE(refusal("state-dict.pt", {8}).find("is not a TorchScript file"), std::string::npos)
        << refusal("state-dict.pt", {8});
    EXPECT_NE(refusal("missing.pt", {8}).find("no such file"), std::string::npos);
    const std::string shape = refusal("mlp.pt", {9});
    EXPECT_NE(shape.find("layer \"0\" (Linear) fails on the model input of shape [9]"),
              std::string::npos)
        << shape;
    EXPECT_NE(shape.find("--input-shape"), std::string::npos) << shape;
    EXPECT_NE(shape.find("shapes cannot be multiplied"), std::string::npos) << shape;
    EXPECT_EQ(shape.find("Traceback"), std::string::npos) << shape;
    // A shape far beyond the machine: refused with the figures, before any
    // allocation fails.
    const std::string huge = refusal("mlp.pt", {1000000, 1000000});
    EXPECT_NE(huge.find("the 2 samples the layers are measured on take"), std::string::npos)
        << huge;
    EXPECT_NE(huge.find("TiB"), std::string::npos) << huge;
    // A forward that raises: the exception's own words, and the layer.
    const std::string raised = refusal("raises.pt", {8});
    EXPECT_NE(raised.find("layer \"1\""), std::string::npos) << raised;
    EXPECT_NE(raised.find("boom from forward"), std::string::npos) << raised;
    EXPECT_EQ(raised.find("TorchScript interpreter"), std::string::npos) << raised;
}

// A forward that never returns ends the import within --timeout, naming the
// layer (it used to hang until killed).
TEST(TorchScriptImport, AForwardThatNeverReturnsEndsTheImportNamingTheLayer) {
    REQUIRE_FIXTURE("hangs.pt");
    const auto dir = test::temp_dir("ts-hangs");
    const auto r =
        test::run_cli("import " + (kFixtures / "hangs.pt").string() +
                          " --input-shape 8 --timeout 1 --out " + (dir / "hangs.json").string(),
                      dir);
    EXPECT_EQ(r.code, 1) << r.output;
    EXPECT_NE(r.output.find("layer \"1\" (Hangs) did not finish one forward and backward within "
                            "1 s"),
              std::string::npos)
        << r.output;
    EXPECT_LT(r.seconds, 30);
    EXPECT_FALSE(fs::exists(dir / "hangs.json"));
    fs::remove_all(dir);
}

// The device spec is the catalog's, whatever its case, and checked before
// any layer is measured.
TEST(TorchScriptImport, TheDeviceSpecIsReadInAnyCaseAndCheckedFirst) {
    REQUIRE_FIXTURE("mlp.pt");
    const auto dir = test::temp_dir("ts-device-spec");
    auto r = test::run_cli("import " + (kFixtures / "mlp.pt").string() +
                               " --input-shape 8 --devices 2 --device-spec a100-80gb --out " +
                               (dir / "mlp.json").string(),
                           dir, "lower");
    ASSERT_EQ(r.code, 0) << r.output;
    EXPECT_NE(read_text_file(dir / "mlp.json").find("\"A100-80GB\""), std::string::npos);
    r = test::run_cli("import " + (kFixtures / "mlp.pt").string() +
                          " --input-shape 8 --device-spec b9000 --out " +
                          (dir / "other.json").string(),
                      dir, "unknown");
    EXPECT_EQ(r.code, 2) << r.output;
    EXPECT_NE(r.output.find("--device-spec: no device \"b9000\" in the catalog; give one of"),
              std::string::npos)
        << r.output;
    EXPECT_FALSE(fs::exists(dir / "other.json"));
    fs::remove_all(dir);
}

// `import m.pt --out m.pt` (or through a link) would replace the module it
// reads: refused before any layer is measured, the file kept.
TEST(TorchScriptImport, AnOutThatIsTheModuleIsRefusedAndTheModuleKept) {
    REQUIRE_FIXTURE("mlp.pt");
    const auto dir = test::temp_dir("ts-over-input");
    const auto module = dir / "m.pt";
    fs::copy_file(kFixtures / "mlp.pt", module);
    const auto size = fs::file_size(module);
    fs::create_symlink(module, dir / "link.pt");
    for (const auto& out : {module, dir / "link.pt"}) {
        const auto r = test::run_cli(
            "import " + module.string() + " --input-shape 8 --out " + out.string(), dir);
        EXPECT_EQ(r.code, 2) << r.output;
        EXPECT_NE(r.output.find("is the TorchScript file this command reads"), std::string::npos)
            << r.output;
        EXPECT_EQ(fs::file_size(module), size);
    }
    fs::remove_all(dir);
}

TEST(TorchScriptImport, TheProjectKeepsTheFileRelativeAndAnEditedChainIsRefused) {
    REQUIRE_FIXTURE("mlp.pt");
    const auto dir = test::temp_dir("ts-relative");
    fs::copy_file(kFixtures / "mlp.pt", dir / "mlp.pt");
    const auto r =
        test::run_cli("import " + (dir / "mlp.pt").string() +
                          " --input-shape 8 --devices 2 --out " + (dir / "mlp.json").string(),
                      dir);
    ASSERT_EQ(r.code, 0) << r.output;
    std::ifstream in(dir / "mlp.json");
    json j = json::parse(in);
    EXPECT_EQ(j["model"]["layers"][0]["module"], "mlp.pt");
    EXPECT_EQ(j["placement"].size(), 2u);
    // Loaded from anywhere, the file is found beside the project.
    const auto loaded = load_project_file(dir / "mlp.json");
    ASSERT_TRUE(loaded.project);
    EXPECT_EQ(loaded.project->model.layers[0].params["module"], (dir / "mlp.pt").string());
    // Two layers' submodules swapped: no longer the order the forward runs
    // them in (the shapes still chain: both are 32 -> 32).
    j["model"]["layers"][2]["submodule"] = "4";
    j["model"]["layers"][4]["submodule"] = "2";
    write_file_atomically(dir / "swapped.json", j.dump());
    const auto run = test::run_cli("run " + (dir / "swapped.json").string() + " --steps 1", dir);
    EXPECT_NE(run.code, 0);
    EXPECT_NE(run.output.find("in the order its forward runs them"), std::string::npos)
        << run.output;
    fs::remove_all(dir);
}

// The module file swapped after import (it used to abort a rank inside
// Gloo when the sizes differed): the digest recorded at import tells, and
// run and profile refuse in words before any worker starts.
TEST(TorchScriptImport, AModuleFileChangedAfterImportIsRefusedInWords) {
    REQUIRE_FIXTURE("cnn.pt");
    const auto dir = test::temp_dir("ts-swapped-file");
    fs::copy_file(kFixtures / "mlp.pt", dir / "mlp.pt");
    auto r = test::run_cli("import " + (dir / "mlp.pt").string() +
                               " --input-shape 8 --devices 2 --out " + (dir / "mlp.json").string(),
                           dir, "import");
    ASSERT_EQ(r.code, 0) << r.output;
    const json j = json::parse(read_text_file(dir / "mlp.json"));
    ASSERT_TRUE(j["model"]["layers"][0]["module_digest"].is_string()) << j.dump(2);
    fs::copy_file(kFixtures / "cnn.pt", dir / "mlp.pt", fs::copy_options::overwrite_existing);
    for (const char* command : {"run", "profile"}) {
        r = test::run_cli(
            std::string(command) + " " + (dir / "mlp.json").string() +
                (std::string(command) == "run" ? " --steps 1"
                                               : " --out " + (dir / "p.json").string()),
            dir, command);
        EXPECT_EQ(r.code, 1) << r.output;
        EXPECT_NE(r.output.find("has changed since it was imported"), std::string::npos)
            << r.output;
        EXPECT_NE(r.output.find("import it again"), std::string::npos) << r.output;
        EXPECT_EQ(r.output.find("rank 0"), std::string::npos) << "refused before any worker";
    }
    fs::remove_all(dir);
}

TEST(TorchScriptImport, RunOnAFolderOfSamplesEqualsSingleProcessTrainingOnThem) {
    REQUIRE_FIXTURE("cnn-data/inputs.pt");
    const auto dir = test::temp_dir("ts-data");
    const auto project = dir / "cnn.json";
    auto r =
        test::run_cli("import " + (kFixtures / "cnn.pt").string() +
                          " --input-shape 3,16,16 --devices 2 -b 8 -m 4 --out " + project.string(),
                      dir, "import");
    ASSERT_EQ(r.code, 0) << r.output;
    const auto data = kFixtures / "cnn-data";
    const auto out = dir / "run";
    r = test::run_cli("run " + project.string() + " --data " + data.string() +
                          " --steps 3 --dtype float64 --save-params --threads-per-rank 1 --out " +
                          out.string(),
                      dir, "run");
    ASSERT_EQ(r.code, 0) << r.output;
    const AnalyzedProject p = test::analyze_file(project.string());
    const backend::TensorData samples(data, p, torch::kFloat64);
    EXPECT_EQ(samples.samples(), 20);
    // Step 2 wraps around: samples 16 to 19, then 0 to 3.
    const auto third = samples.batch(2);
    EXPECT_TRUE(torch::equal(third.inputs[2], samples.batch(0).inputs[0]));
    const auto reference = test::reference_parameters(
        p, 3, torch::kFloat64, [&](int step) { return samples.batch(step); });
    std::vector<torch::Tensor> saved;
    for (int s = 0; s < 2; ++s) {
        std::vector<torch::Tensor> stage;
        stage = test::saved_stage_parameters(out, s);
        saved.insert(saved.end(), stage.begin(), stage.end());
    }
    EXPECT_LE(test::max_relative_difference(saved, reference), 1e-9);
    // Trained on the synthetic task instead, the parameters differ.
    EXPECT_GT(
        test::max_relative_difference(test::reference_parameters(p, 3, torch::kFloat64), reference),
        1e-6);

    // A folder whose tensors do not fit the model is refused before any
    // worker starts, naming the file.
    const auto wrong = dir / "wrong";
    fs::create_directories(wrong);
    fs::copy_file(data / "wrong-inputs.pt", wrong / "inputs.pt");
    fs::copy_file(data / "targets.pt", wrong / "targets.pt");
    r = test::run_cli("run " + project.string() + " --data " + wrong.string() + " --steps 1", dir,
                      "wrong");
    EXPECT_NE(r.code, 0);
    EXPECT_NE(r.output.find("inputs.pt has shape [20]; it must be [N, 3, 16, 16]"),
              std::string::npos)
        << r.output;
    r = test::run_cli(
        "run " + project.string() + " --data " + (dir / "none").string() + " --steps 1", dir,
        "none");
    EXPECT_NE(r.code, 0);
    EXPECT_NE(r.output.find("cannot read"), std::string::npos) << r.output;
    fs::remove_all(dir);
}

// Each stage's saved parameters, in model order.
std::vector<torch::Tensor> saved_parameters(const fs::path& out, int stages) {
    std::vector<torch::Tensor> all;
    for (int s = 0; s < stages; ++s) {
        std::vector<torch::Tensor> saved;
        saved = test::saved_stage_parameters(out, s);
        all.insert(all.end(), saved.begin(), saved.end());
    }
    return all;
}

struct ImportedRun {
    std::string file;
    std::string shape;
    std::string options;  // import options
    std::string schedule;
};

void PrintTo(const ImportedRun& c, std::ostream* out) {
    *out << c.file << " " << c.schedule;
}

// On synthetic data an imported model learns a teacher of its own
// architecture (weights drawn from the seed), so a new user sees the loss
// fall; random classes kept it at ln(classes). The run says so first.
TEST(TorchScriptImport, AnImportedCnnsLossFallsOnSyntheticData) {
    REQUIRE_FIXTURE("cnn.pt");
    const auto dir = test::temp_dir("ts-learns");
    const auto project = dir / "project.json";
    auto r =
        test::run_cli("import " + (kFixtures / "cnn.pt").string() +
                          " --input-shape 3,16,16 --devices 2 -b 16 -m 4 --out " + project.string(),
                      dir, "import");
    ASSERT_EQ(r.code, 0) << r.output;
    r = test::run_cli("run " + project.string() + " --steps 10 --threads-per-rank 1 --json --out " +
                          (dir / "run").string(),
                      dir, "run");
    ASSERT_EQ(r.code, 0) << r.output;
    EXPECT_NE(r.output.find("data: synthetic"), std::string::npos) << r.output;
    const auto losses = nlohmann::json::parse(test::last_json_object(r.output))
                            .at("losses")
                            .get<std::vector<double>>();
    ASSERT_EQ(losses.size(), 10U);
    EXPECT_LT(losses.back(), 0.75 * losses.front()) << r.output;
    fs::remove_all(dir);
}

class TorchScriptRuns : public ::testing::TestWithParam<ImportedRun> {};

TEST_P(TorchScriptRuns, PipelinedTrainingEqualsSingleProcessTrainingOfTheFile) {
    const ImportedRun c = GetParam();
    REQUIRE_FIXTURE(c.file);
    const auto dir = test::temp_dir("ts-run");
    const auto project = dir / "project.json";
    auto r = test::run_cli("import " + (kFixtures / c.file).string() + " --input-shape " + c.shape +
                               " --devices 2 -b 8 -m 4 " + c.options + " --out " + project.string(),
                           dir, "import");
    ASSERT_EQ(r.code, 0) << r.output;
    const auto out = dir / "run";
    r = test::run_cli("run " + project.string() + " --schedule " + c.schedule +
                          " --steps 3 --dtype float64 --save-params --threads-per-rank 1 --out " +
                          out.string(),
                      dir, "run");
    ASSERT_EQ(r.code, 0) << r.output;
    const AnalyzedProject p = test::analyze_file(project.string());
    ASSERT_EQ(p.schedule.num_stages, 2);
    const auto reference = test::reference_parameters(p, 3, torch::kFloat64);
    const auto initial =
        backend::build_model(p, 0, torch::kFloat64)->parameters();  // the file's weights
    EXPECT_GT(test::max_relative_difference(initial, reference), 1e-6) << "training did nothing";
    EXPECT_LE(test::max_relative_difference(saved_parameters(out, 2), reference), 1e-9);
    fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(
    Files, TorchScriptRuns,
    ::testing::Values(ImportedRun{"cnn.pt", "3,16,16", "", "1f1b"},
                      ImportedRun{"cnn.pt", "3,16,16", "", "zb-h1"},
                      ImportedRun{"gpt.pt", "16", "--input-dtype int64 --depth 1", "1f1b"},
                      ImportedRun{"gpt.pt", "16", "--input-dtype int64 --depth 1 --init seed",
                                  "gpipe"},
                      ImportedRun{"mlp-traced.pt", "8", "--loss mse", "gpipe"}),
    [](const auto& param_info) {
        std::string name = param_info.param.file.substr(0, param_info.param.file.find('.')) + "_" +
                           param_info.param.schedule;
        for (char& ch : name) {
            ch = std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
        }
        return name;
    });

}  // namespace
}  // namespace pipewright
