// Real runs (worker processes over Gloo) of the schedules that equivalence_test
// does not cover: naive model parallelism and a schedule imported from
// PyTorch's CSV form. Both must train exactly as single-process training.
#include <gtest/gtest.h>

#include <filesystem>

#include "backend_test_util.h"
#include "cli_runner.h"
#include "pipewright/backend/modules.h"
#include "pipewright/core/project_io.h"
#include "pipewright/core/timeline.h"

namespace pipewright {
namespace {

namespace fs = std::filesystem;

std::vector<torch::Tensor> saved_parameters(const AnalyzedProject& p, const fs::path& out) {
    std::vector<torch::Tensor> all;
    for (int s = 0; s < p.schedule.num_stages; ++s) {
        std::vector<torch::Tensor> stage;
        stage = test::saved_stage_parameters(out, s);
        all.insert(all.end(), stage.begin(), stage.end());
    }
    return all;
}

// Runs the project for 3 steps in float64 into dir/run and compares with
// plain training.
void expect_equivalent_run(const test::MlpSpec& spec, const std::string& extra,
                           const fs::path& dir) {
    const auto project = test::write_project(dir, spec);
    const auto out = dir / "run";
    const auto r =
        test::run_cli("run " + project.string() + " --steps 3 --dtype float64 " +
                          "--save-params --threads-per-rank 1 --out " + out.string() + " " + extra,
                      dir);
    ASSERT_EQ(r.code, 0) << r.output;
    const auto p = test::analyze_text(test::mlp_project_json(spec));
    const auto reference = test::reference_parameters(p, 3, torch::kFloat64);
    EXPECT_LE(test::max_relative_difference(saved_parameters(p, out), reference), 1e-5);
    const auto initial =
        backend::build_model(p, static_cast<std::uint64_t>(p.project.training.seed),
                             torch::kFloat64)
            ->parameters();
    EXPECT_GT(test::max_relative_difference(reference, initial), 1e-4) << "training did nothing";
}

TEST(ScheduleRuns, NaiveOnThreeRanksEqualsSingleProcessTraining) {
    test::MlpSpec spec;
    spec.schedule = "naive";
    spec.ranks = 3;
    spec.stages = 3;
    spec.layers = 4;
    spec.microbatches = 3;
    spec.batch = 12;
    spec.optimizer = "adam";
    const auto dir = test::temp_dir("naive");
    expect_equivalent_run(spec, "", dir);
    fs::remove_all(dir);
}

// Not one of the generators: rank 0 runs three forwards before its first
// backward (1F1B would run two), rank 1 alternates.
constexpr const char* kCustomCsv =
    "0F0,0F1,0F2,0B0,0F3,0B1,0B2,0B3\n"
    "1F0,1B0,1F1,1B1,1F2,1B2,1F3,1B3\n";

TEST(ScheduleRuns, CsvImportedScheduleEqualsSingleProcessTrainingAndRunsInItsOrder) {
    const auto dir = test::temp_dir("csv");
    const auto csv = dir / "custom.csv";
    write_file_atomically(csv, kCustomCsv);
    test::MlpSpec spec;
    spec.microbatches = 4;
    spec.batch = 16;
    expect_equivalent_run(spec, "--schedule-csv " + csv.string(), dir);
    if (HasFatalFailure()) {
        return;
    }
    // The measured timeline follows the CSV's order on rank 0.
    const Timeline t = load_timeline_file(dir / "run" / "timeline.json");
    std::vector<std::string> rank0;
    for (const auto& e : t.events) {
        if (e.rank == 0 && is_compute(e.action.type)) {
            rank0.push_back(to_string(e.action));
        }
    }
    EXPECT_EQ(rank0,
              (std::vector<std::string>{"0F0", "0F1", "0F2", "0B0", "0F3", "0B1", "0B2", "0B3"}));
    fs::remove_all(dir);
}

}  // namespace
}  // namespace pipewright
