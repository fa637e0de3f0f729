// A measured profile is untrusted input like a project (issue 18): sizes that
// would wrap once multiplied are refused, and a profile that does not fit the
// model is reported, not silently applied. Reading the file itself is tested
// with core (tests/core/profile_test.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "pipewright/core/layer_catalog.h"
#include "pipewright/core/profile.h"
#include "pipewright/core/project_io.h"
#include "pipewright/sim/cost_model.h"
#include "pipewright/sim/profile_coverage.h"
#include "pipewright/sim/stage_memory.h"

namespace pipewright {
namespace {

const std::filesystem::path kExamples = std::filesystem::path(PIPEWRIGHT_ASSETS_DIR) / "examples";

Profile small_profile() {
    Profile p;
    p.microbatch_size = 1;
    p.layers = {{"net0", 1.0, 0.5, 0.5, std::nullopt, std::nullopt, std::nullopt}};
    p.transfer = LinkSpec{10.0, 5.0};
    return p;
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

TEST(ProfileChecks, StaticMemoryThatOverflowsIsRefused) {
    Training adam;
    adam.optimizer.type = OptimizerKind::adam;
    EXPECT_GT(static_memory_bytes(1'000'000, adam), 0);
    EXPECT_THROW((void)static_memory_bytes(std::int64_t{1} << 61, adam), InputError);
}

TEST(ProfileChecks, ActivationsOfEveryMicroBatchThatCannotBeCountedAreRefused) {
    // 1 TB per sample measured at micro-batch size 1, scaled to 2^30 samples.
    auto loaded = load_project_file(kExamples / "dummy-2gpu.json");
    ASSERT_TRUE(loaded.project.has_value());
    Diagnostics d;
    AnalysisOptions options;
    options.batch_size = 1 << 30;
    options.microbatches = 1;
    options.schedule = "gpipe";
    auto project = analyze_project(*loaded.project, options, d);
    ASSERT_TRUE(project.has_value()) << d.format();
    Profile p = small_profile();
    p.layers[0].activation_bytes = 1'000'000'000'000;
    CostModelOptions costs;
    costs.profile = &p;
    try {
        (void)stage_costs(*project, costs);
        ADD_FAILURE() << "activations beyond 2^62 bytes were accepted";
    } catch (const InputError& e) {
        EXPECT_TRUE(contains(e.what(), "more than Pipewright can count")) << e.what();
    }
}

TEST(ProfileCoverage, AProfileOfAnotherModelMatchesNothing) {
    auto loaded = load_project_file(kExamples / "dummy-2gpu.json");
    ASSERT_TRUE(loaded.project.has_value());
    Profile other;
    other.layers = {{"conv1", 1, 1, 1, std::nullopt, std::nullopt, std::nullopt}};
    other.transfer = LinkSpec{1, 1};
    const ProfileCoverage c = profile_coverage(other, loaded.project->model);
    EXPECT_TRUE(c.matches_none());
    const auto warnings = profile_warnings(c);
    ASSERT_EQ(warnings.size(), 1U);
    EXPECT_TRUE(contains(warnings[0], "none of the model's 3 layers (it lists conv1)"))
        << warnings[0];
    EXPECT_TRUE(contains(warnings[0], "transfer fit still replaces every link")) << warnings[0];
    EXPECT_EQ(describe_cost_sources(c),
              "0 of 3 layers and the transfers from the profile; analytic estimate for net0, "
              "relu, net1");
}

TEST(ProfileCoverage, APartialProfileNamesWhatIsMissing) {
    auto loaded = load_project_file(kExamples / "dummy-2gpu.json");
    ASSERT_TRUE(loaded.project.has_value());
    const ProfileCoverage c = profile_coverage(small_profile(), loaded.project->model);
    EXPECT_FALSE(c.matches_none());
    const auto warnings = profile_warnings(c);
    ASSERT_EQ(warnings.size(), 1U);
    EXPECT_TRUE(contains(warnings[0], "lacks 2 layers of 3 (relu, net1)")) << warnings[0];
}

// A profile of a layer of the same name but other sizes (a model made 8×
// wider after profiling) is told, where it used to be applied in silence.
TEST(ProfileCoverage, ALayerMeasuredAtOtherSizesIsNamedWithBothSizes) {
    auto loaded = load_project_file(kExamples / "dummy-2gpu.json");
    ASSERT_TRUE(loaded.project.has_value());
    Profile p = small_profile();
    // As measured: the model's own sizes, so nothing to say.
    const auto& net0 = loaded.project->model.layers.at(0);
    Diagnostics d;
    const auto analysis = analyze_layer(net0, loaded.project->model.input.shape,
                                        loaded.project->model.input.dtype, d, "");
    ASSERT_TRUE(analysis.has_value()) << d.format();
    p.layers[0].parameters = analysis->parameters;
    p.layers[0].output_shape = analysis->output_shape;
    EXPECT_TRUE(profile_coverage(p, loaded.project->model).resized.empty());
    // Other parameters.
    p.layers[0].parameters = analysis->parameters / 8;
    ProfileCoverage c = profile_coverage(p, loaded.project->model);
    ASSERT_EQ(c.resized.size(), 1U);
    EXPECT_TRUE(contains(c.resized[0], "net0 (")) << c.resized[0];
    EXPECT_TRUE(contains(c.resized[0], "parameters when profiled")) << c.resized[0];
    const auto warnings = profile_warnings(c);
    EXPECT_TRUE(std::any_of(warnings.begin(), warnings.end(), [](const std::string& w) {
        return contains(w, "at other sizes: net0") && contains(w, "profile it again");
    }));
    // Same parameters, another output.
    p.layers[0].parameters = analysis->parameters;
    p.layers[0].output_shape = std::vector<std::int64_t>{3};
    c = profile_coverage(p, loaded.project->model);
    ASSERT_EQ(c.resized.size(), 1U);
    EXPECT_TRUE(contains(c.resized[0], "output [3] when profiled")) << c.resized[0];
}

// A layer measured at 1 and 16 samples is priced at 8 from the line between
// them, not by scaling one size (issue 30: a plan at micro-batches of 1
// promised 4.3 ms from times measured at 16; the run took 130 ms).
TEST(ProfileSizes, ALayerIsPricedAtTheSimulatedSizeFromTheSizesMeasured) {
    auto loaded = load_project_file(kExamples / "dummy-2gpu.json");  // 4 micro-batches of 8
    ASSERT_TRUE(loaded.project.has_value());
    Diagnostics d;
    auto project = analyze_project(*loaded.project, {}, d);
    ASSERT_TRUE(project.has_value()) << d.format();
    ASSERT_EQ(project->microbatch_size, 8);
    Profile p = small_profile();
    p.layers[0].forward_ms = 1.0;  // at 1 sample
    p.layers[0].other_sizes = {{16, 4.0, 2.0, 2.0, std::nullopt}};
    CostModelOptions costs;
    costs.profile = &p;
    const LayerCost c = layer_cost(*project, 0, project->rank_specs[0], costs);
    EXPECT_NEAR(c.forward_s, (1.0 + 3.0 * 7 / 15) * 1e-3, 1e-12);
    // Proportional scaling from 1 sample would have said 8 ms; from 16, 2 ms.
    EXPECT_NEAR(c.backward_input_s, (0.5 + 1.5 * 7 / 15) * 1e-3, 1e-12);
}

// Four CPU ranks of one thread on a 2-core machine take turns: the
// simulation stretches their compute as if all computed at once, and says so.
TEST(ProfileMachine, MoreRanksThanTheProfilesCoresAreWarnedAbout) {
    Profile p = small_profile();
    p.device_kind = "cpu";
    p.machine.cores = 2;
    p.machine.threads = 1;
    EXPECT_FALSE(profile_oversubscription_warning(p, 2));
    const auto four = profile_oversubscription_warning(p, 4);
    ASSERT_TRUE(four);
    for (const char* part : {"a machine of 2 cores", "runs 4 CPU ranks of 1 Torch thread each",
                             "times their compute 2 times as long", "4 cores or more"}) {
        EXPECT_TRUE(contains(*four, part)) << part << "\n" << *four;
    }
    p.machine.threads = 2;  // two ranks of two threads need 4 cores
    EXPECT_TRUE(profile_oversubscription_warning(p, 2));
    p.machine.cores = 0;  // an older profile without its machine
    EXPECT_FALSE(profile_oversubscription_warning(p, 64));
    p.machine.cores = 2;
    p.device_kind = "cuda";  // each GPU rank has its own device
    EXPECT_FALSE(profile_oversubscription_warning(p, 64));
}

// Ranks × threads over the cores, over the turns the profile's own
// concurrent ranks already took.
TEST(ProfileMachine, RanksThatOutnumberTheCoresComputeLongerByTheirShare) {
    Profile p = small_profile();
    p.device_kind = "cpu";
    p.machine.cores = 2;
    p.machine.threads = 1;
    p.machine.concurrent_ranks = 2;
    EXPECT_DOUBLE_EQ(profile_core_sharing(p, 2), 1.0);
    EXPECT_DOUBLE_EQ(profile_core_sharing(p, 4), 2.0);
    EXPECT_DOUBLE_EQ(profile_core_sharing(p, 6), 3.0);
    p.machine.concurrent_ranks = 4;  // the profile saw them take turns already
    EXPECT_DOUBLE_EQ(profile_core_sharing(p, 4), 1.0);
    EXPECT_DOUBLE_EQ(profile_core_sharing(p, 8), 2.0);
    p.machine.concurrent_ranks = 1;
    p.machine.threads = 2;  // two ranks of two threads on 2 cores
    EXPECT_DOUBLE_EQ(profile_core_sharing(p, 2), 2.0);
    p.device_kind = "cuda";
    EXPECT_DOUBLE_EQ(profile_core_sharing(p, 64), 1.0);
    p.device_kind = "cpu";
    p.machine.cores = 0;  // an older profile without its machine
    EXPECT_DOUBLE_EQ(profile_core_sharing(p, 64), 1.0);
}

// The same profile prices the 4-rank mixture of experts' layers twice as long
// as a 2-core machine's share gives them, and the 2-rank MLP's as measured.
TEST(ProfileMachine, ACpuLayoutThatOutnumbersTheCoresIsPricedWithItsTurns) {
    for (const auto& [example, ranks] : std::vector<std::pair<std::string, int>>{
             {"mlp-cpu.json", 2}, {"mixtral-tiny-e2-cpu.json", 4}}) {
        SCOPED_TRACE(example);
        auto loaded = load_project_file(kExamples / example);
        ASSERT_TRUE(loaded.project.has_value());
        Diagnostics d;
        auto project = analyze_project(*loaded.project, {}, d);
        ASSERT_TRUE(project.has_value()) << d.format();
        Profile p;
        p.device_kind = "cpu";
        p.microbatch_size = project->microbatch_size;
        p.machine.cores = 2;
        p.machine.threads = 1;
        p.machine.concurrent_ranks = 2;
        const std::string& first = project->project.model.layers.at(0).name;
        p.layers = {{first, 1.0, 0.5, 0.25, std::nullopt, std::nullopt, std::nullopt}};
        p.layers[0].optimizer_ms = 0.125;
        CostModelOptions costs;
        costs.profile = &p;
        const LayerCost c = layer_cost(*project, 0, project->rank_specs[0], costs);
        const double turns = ranks / 2.0;
        EXPECT_DOUBLE_EQ(c.forward_s, 1e-3 * turns);
        EXPECT_DOUBLE_EQ(c.backward_input_s, 0.5e-3 * turns);
        EXPECT_DOUBLE_EQ(c.backward_weight_s, 0.25e-3 * turns);
        EXPECT_DOUBLE_EQ(c.optimizer_s, 0.125e-3 * turns);
    }
}

TEST(ProfileSizes, ASizeBelowOrFarAboveTheMeasuredOnesIsWarnedAbout) {
    Profile p = small_profile();
    p.microbatch_size = 16;
    p.layers[0].other_sizes = {{32, 2.0, 1.0, 1.0, std::nullopt}};
    EXPECT_FALSE(profile_size_warning(p, 16));
    EXPECT_FALSE(profile_size_warning(p, 24));
    EXPECT_FALSE(profile_size_warning(p, 64)) << "twice the largest is still near";
    const auto below = profile_size_warning(p, 1, "pipewright profile p.json");
    ASSERT_TRUE(below);
    for (const char* part : {"micro-batches of 16 and 32 samples", "this layout runs 1",
                             "extrapolated down", "pipewright profile p.json --sizes 1,16,32"}) {
        EXPECT_TRUE(contains(*below, part)) << part << "\n" << *below;
    }
    const auto above = profile_size_warning(p, 65);
    ASSERT_TRUE(above);
    EXPECT_TRUE(contains(*above, "more than twice the largest size measured")) << *above;
    EXPECT_TRUE(contains(*above, "profile --sizes 16,32,65")) << *above;
}

}  // namespace
}  // namespace pipewright
