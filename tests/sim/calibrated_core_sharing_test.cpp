// A CPU device calibration records the machine it measured (its cores, the
// Torch threads its kernels ran with): a layout whose ranks need more
// threads than those cores takes turns on them, and its kernels are priced
// that many times as long, with a warning that says so.
#include <gtest/gtest.h>

#include <filesystem>

#include "../cpu_calibration_fixture.h"
#include "pipewright/core/core_sharing.h"
#include "pipewright/core/diagnostics.h"
#include "pipewright/core/project_io.h"
#include "pipewright/sim/cost_model.h"
#include "pipewright/sim/device_calibration_fit.h"
#include "pipewright/sim/planner.h"
#include "pipewright/sim/simulation.h"

namespace pipewright {
namespace {

const std::filesystem::path kExamples = std::filesystem::path(PIPEWRIGHT_ASSETS_DIR) / "examples";

struct Priced {
    AnalyzedProject project;
    LayerCost first_layer;
};

Priced priced(const std::string& example, const DeviceCatalog& catalog) {
    auto loaded = load_project_file(kExamples / example);
    EXPECT_TRUE(loaded.project.has_value());
    AnalysisOptions options;
    options.catalog = &catalog;
    Diagnostics d;
    auto project = analyze_project(*loaded.project, options, d);
    EXPECT_TRUE(project.has_value()) << d.format();
    const LayerCost c = layer_cost(*project, 0, project->rank_specs[0], {});
    return {std::move(*project), c};
}

TEST(CoreSharing, IsTheRanksThreadsOverTheCoresBeyondWhatWasMeasured) {
    EXPECT_DOUBLE_EQ(core_sharing(2, 1, 2), 1.0);
    EXPECT_DOUBLE_EQ(core_sharing(2, 1, 4), 2.0);
    EXPECT_DOUBLE_EQ(core_sharing(2, 2, 3), 3.0);
    EXPECT_DOUBLE_EQ(core_sharing(2, 1, 4, 4), 1.0);  // measured taking turns already
    EXPECT_DOUBLE_EQ(core_sharing(2, 1, 8, 4), 2.0);
    EXPECT_DOUBLE_EQ(core_sharing(0, 1, 64), 1.0);  // cores not recorded
    EXPECT_FALSE(core_sharing_warning("the calibration", 2, 1, 2));
    EXPECT_FALSE(core_sharing_warning("the calibration", 0, 1, 64));
    const auto four = core_sharing_warning("the calibration", 2, 1, 4);
    ASSERT_TRUE(four);
    EXPECT_NE(four->find("the calibration was measured on a machine of 2 cores, and this layout "
                         "runs 4 CPU ranks of 1 Torch thread each"),
              std::string::npos)
        << *four;
    EXPECT_NE(four->find("2 times as long as the calibration measured it"), std::string::npos)
        << *four;
}

TEST(CalibratedCoreSharing, RanksThatOutnumberTheCalibratedCoresTakeTurns) {
    const DeviceCatalog two_cores =
        calibrated_catalog(DeviceCatalog::builtin(), {cpu_calibration(2, 1)});
    const DeviceCatalog unrecorded =
        calibrated_catalog(DeviceCatalog::builtin(), {cpu_calibration(0, 1)});
    const DeviceCatalog many_cores =
        calibrated_catalog(DeviceCatalog::builtin(), {cpu_calibration(64, 1)});
    for (const auto& [example, ranks] : std::vector<std::pair<std::string, int>>{
             {"mlp-cpu.json", 2}, {"mixtral-tiny-e2-cpu.json", 4}}) {
        SCOPED_TRACE(example);
        const Priced shared = priced(example, two_cores);
        const Priced alone = priced(example, many_cores);
        const double turns = ranks / 2.0;
        EXPECT_DOUBLE_EQ(shared.project.rank_specs[0].core_sharing, turns);
        EXPECT_DOUBLE_EQ(alone.project.rank_specs[0].core_sharing, 1.0);
        EXPECT_DOUBLE_EQ(shared.first_layer.forward_s, alone.first_layer.forward_s * turns);
        EXPECT_DOUBLE_EQ(shared.first_layer.backward_input_s,
                         alone.first_layer.backward_input_s * turns);
        EXPECT_DOUBLE_EQ(shared.first_layer.optimizer_s, alone.first_layer.optimizer_s * turns);
        EXPECT_EQ(calibrated_core_sharing_warning(shared.project).has_value(), ranks > 2);
        EXPECT_FALSE(calibrated_core_sharing_warning(alone.project));
        // A calibration that does not record its machine stretches nothing.
        const Priced old_file = priced(example, unrecorded);
        EXPECT_DOUBLE_EQ(old_file.project.rank_specs[0].core_sharing, 1.0);
        EXPECT_DOUBLE_EQ(old_file.first_layer.forward_s, alone.first_layer.forward_s);
        EXPECT_FALSE(calibrated_core_sharing_warning(old_file.project));
    }
}

TEST(CalibratedCoreSharing, TheIterationOfALayoutThatTakesTurnsIsLonger) {
    const DeviceCatalog two_cores =
        calibrated_catalog(DeviceCatalog::builtin(), {cpu_calibration(2, 1)});
    const DeviceCatalog many_cores =
        calibrated_catalog(DeviceCatalog::builtin(), {cpu_calibration(64, 1)});
    const Priced shared = priced("mixtral-tiny-e2-cpu.json", two_cores);
    const Priced alone = priced("mixtral-tiny-e2-cpu.json", many_cores);
    const double longer = simulate_project(shared.project).iteration_time_s;
    const double shorter = simulate_project(alone.project).iteration_time_s;
    // Compute doubles; the links' transfers do not.
    EXPECT_GT(longer, 1.3 * shorter);
    EXPECT_LT(longer, 2.0 * shorter + 1e-12);
}

}  // namespace
}  // namespace pipewright

namespace pipewright {
namespace {

// The planner judges each layout as analyze_project would have it: a layout
// whose CPU ranks outnumber the calibrated cores takes its turns there too,
// so the plan's estimate is what `simulate` says of the planned project.
TEST(CalibratedCoreSharing, APlanPricesItsLayoutAsSimulateDoes) {
    const DeviceCatalog two_cores =
        calibrated_catalog(DeviceCatalog::builtin(), {cpu_calibration(2, 1)});
    auto loaded = load_project_file(kExamples / "mixtral-tiny-e2-cpu.json");
    ASSERT_TRUE(loaded.project.has_value());
    PlanOptions options;
    options.catalog = &two_cores;
    const PlanResult r = plan_pipeline(*loaded.project, options);
    ASSERT_TRUE(r.feasible) << r.why_nothing_fits;
    ASSERT_TRUE(r.plan.report.has_value());
    AnalysisOptions analysis;
    analysis.catalog = &two_cores;
    Diagnostics d;
    const auto analyzed = analyze_project(r.project, analysis, d);
    ASSERT_TRUE(analyzed) << d.format();
    EXPECT_NEAR(simulate_project(*analyzed, {}, Recording::summary).iteration_time_s,
                r.plan.report->iteration_time_s, 1e-12);
    ASSERT_TRUE(r.input.report.has_value()) << r.input.reason;
    const auto input = analyze_project(*loaded.project, analysis, d);
    ASSERT_TRUE(input) << d.format();
    EXPECT_NEAR(simulate_project(*input, {}, Recording::summary).iteration_time_s,
                r.input.report->iteration_time_s, 1e-12);
}

}  // namespace
}  // namespace pipewright
