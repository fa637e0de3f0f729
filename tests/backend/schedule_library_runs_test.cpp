// Looped BFS, ZB-H2, interleaved zero bubble and ZB-V run for real: worker
// processes over c10d/Gloo train to the same parameters as one process
// (the in-process cases are in equivalence_test.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "backend_test_util.h"
#include "cli_runner.h"

namespace pipewright {
namespace {

namespace fs = std::filesystem;

struct LibraryCase {
    const char* schedule;
    int ranks;
    int stages;
    int microbatches;
};

class ScheduleLibraryRuns : public ::testing::TestWithParam<LibraryCase> {};

// Runs `spec` in worker processes for two steps and compares their saved
// parameters with single-process training.
void expect_workers_train_as_one_process(const test::MlpSpec& spec, const std::string& name) {
    const auto dir = test::temp_dir(name);
    const auto project = test::write_project(dir, spec);
    const auto out = dir / "run";
    const auto r = test::run_cli("run " + project.string() +
                                     " --steps 2 --dtype float64 --save-params "
                                     "--threads-per-rank 1 --out " +
                                     out.string(),
                                 dir);
    ASSERT_EQ(r.code, 0) << r.output;

    const auto p = test::analyze_text(test::mlp_project_json(spec));
    ASSERT_EQ(p.schedule.name, spec.schedule);
    std::vector<torch::Tensor> pipelined;
    for (int s = 0; s < p.schedule.num_stages; ++s) {
        std::vector<torch::Tensor> stage;
        stage = test::saved_stage_parameters(out, s);
        pipelined.insert(pipelined.end(), stage.begin(), stage.end());
    }
    const auto reference = test::reference_parameters(p, 2, torch::kFloat64);
    EXPECT_LE(test::max_relative_difference(pipelined, reference), 1e-5);
    fs::remove_all(dir);
}

TEST_P(ScheduleLibraryRuns, GlooWorkersTrainAsOneProcess) {
    const LibraryCase c = GetParam();
    test::MlpSpec spec;
    spec.schedule = c.schedule;
    spec.ranks = c.ranks;
    spec.stages = c.stages;
    spec.layers = std::max(4, c.stages);
    spec.microbatches = c.microbatches;
    spec.batch = 2 * c.microbatches;
    expect_workers_train_as_one_process(spec, std::string("library-") + c.schedule);
}

// The house issue's reproduction: `fc0 | act0 | fc1` under zb-h1 on three
// workers, where rank 1's weight pass has no weights (it crashed with "grad
// requires non-empty inputs").
TEST(ScheduleLibraryRunsParameterless, ZeroBubbleStageWithoutParametersRuns) {
    test::MlpSpec spec;
    spec.schedule = "zb-h1";
    spec.ranks = 3;
    spec.stages = 3;
    spec.layers = 2;
    spec.stage_entries = {1, 1, 1};
    spec.microbatches = 4;
    spec.batch = 8;
    expect_workers_train_as_one_process(spec, "library-parameterless");
}

INSTANTIATE_TEST_SUITE_P(
    Library, ScheduleLibraryRuns,
    ::testing::Values(LibraryCase{"looped-bfs", 2, 4, 3}, LibraryCase{"zb-h2", 3, 3, 5},
                      LibraryCase{"interleaved-zb", 2, 4, 6}, LibraryCase{"zbv", 2, 4, 5},
                      LibraryCase{"dualpipev", 2, 4, 5}, LibraryCase{"zb-auto", 3, 3, 4}),
    [](const auto& test_info) {
        std::string name = test_info.param.schedule;
        for (auto& ch : name) {
            ch = ch == '-' ? '_' : ch;
        }
        return name;
    });

}  // namespace
}  // namespace pipewright
