// A measured profile is untrusted input like a project (issue 18): the same
// ranges apply, sizes that would wrap once multiplied are refused, and a
// profile that does not fit the model is reported, not silently applied.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "pipewright/core/project_io.h"
#include "pipewright/sim/cost_model.h"
#include "pipewright/sim/profile.h"
#include "pipewright/sim/profile_coverage.h"

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

// Every diagnostic of profile_from_json(j), or "" when it is accepted.
std::string problems_of(const nlohmann::json& j) {
    try {
        (void)profile_from_json(j);
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

TEST(ProfileChecks, ActivationBytesThatWouldWrapAreRefused) {
    // 2^59 bytes wrapped to 4.5 MiB and "every device fits"; the same value
    // in a project is refused, and now here too.
    nlohmann::json j = profile_to_json(small_profile());
    j["layers"][0]["activation_bytes"] = std::int64_t{1} << 59;
    const std::string message = problems_of(j);
    EXPECT_TRUE(contains(message, "layers[0].activation_bytes")) << message;
    EXPECT_TRUE(contains(message, "from 0 to 1000000000000")) << message;
}

TEST(ProfileChecks, TransferAndTimesOutsideTheRangesAreRefused) {
    nlohmann::json j = profile_to_json(small_profile());
    j["transfer"]["bandwidth_GBps"] = 5e-324;
    EXPECT_TRUE(contains(problems_of(j), "bandwidth_GBps from 0.001 to 1000000")) << problems_of(j);
    j = profile_to_json(small_profile());
    j["layers"][0]["forward_ms"] = 1e300;
    EXPECT_TRUE(contains(problems_of(j), "from 0 to 1000000000")) << problems_of(j);
    j = profile_to_json(small_profile());
    j["microbatch_size"] = std::int64_t{1} << 40;
    EXPECT_TRUE(contains(problems_of(j), "from 1 to 2147483647")) << problems_of(j);
}

TEST(ProfileChecks, DuplicateKeysAndDeepNestingInAProfileFileAreRefused) {
    const auto file = std::filesystem::temp_directory_path() /
                      ("pw-profile-" + std::to_string(::getpid()) + ".json");
    std::string text = profile_to_json(small_profile()).dump();
    text.insert(text.rfind('}'), ",\"microbatch_size\": 4");
    std::ofstream(file) << text;
    try {
        (void)load_profile_file(file);
        ADD_FAILURE() << "a duplicated key was accepted";
    } catch (const InputError& e) {
        EXPECT_TRUE(contains(e.what(), "microbatch_size: appears twice")) << e.what();
    }
    std::ofstream(file) << std::string(60'000, '[') << std::string(60'000, ']');
    try {
        (void)load_profile_file(file);
        ADD_FAILURE() << "60,000 levels were accepted";
    } catch (const InputError& e) {
        EXPECT_TRUE(contains(e.what(), "nested deeper than 64 levels")) << e.what();
    }
    std::filesystem::remove(file);
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

}  // namespace
}  // namespace pipewright
