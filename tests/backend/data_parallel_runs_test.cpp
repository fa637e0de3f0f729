// Real data-parallel runs: two replicas of a two-rank pipeline, four worker
// processes over Gloo. Each replica trains on its half of the global batch
// and the replicas average their gradients (REDUCE_GRAD), so after a few
// steps the parameters must equal single-process training on the whole
// batch, on every replica, with the all-reduce alone (ZeRO 0) and with the
// optimizer state sharded (ZeRO-1).
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>

#include "backend_test_util.h"
#include "cli_runner.h"
#include "pipewright/backend/modules.h"
#include "pipewright/core/project_io.h"
#include "pipewright/core/timeline.h"

namespace pipewright {
namespace {

namespace fs = std::filesystem;

struct DataParallelCase {
    std::string schedule;
    int zero_stage = 0;
    bool overlap = true;
    double bucket_MiB = 25;
    std::string optimizer = "sgd";
};

test::MlpSpec spec_of(const DataParallelCase& c) {
    test::MlpSpec s;
    s.schedule = c.schedule;
    s.ranks = 2;
    s.stages = 2;
    s.microbatches = 4;  // per replica
    s.batch = 16;        // global: 8 per replica, micro-batches of 2
    s.optimizer = c.optimizer;
    s.replicas = 2;
    s.zero_stage = c.zero_stage;
    s.overlap_gradient_sync = c.overlap;
    s.bucket_MiB = c.bucket_MiB;
    return s;
}

// The same model trained by one process on the whole batch: one replica, the
// global batch cut into the same micro-batches (D·m of them).
AnalyzedProject single_process(test::MlpSpec s) {
    s.microbatches *= s.replicas;
    s.replicas = 1;
    return test::analyze_text(test::mlp_project_json(s));
}

std::vector<torch::Tensor> saved_parameters(const AnalyzedProject& p, const fs::path& out,
                                            int replica) {
    std::vector<torch::Tensor> all;
    for (int s = 0; s < p.schedule.num_stages; ++s) {
        const auto stage = test::saved_stage_parameters(out, s, replica);
        all.insert(all.end(), stage.begin(), stage.end());
    }
    return all;
}

class DataParallelRuns : public ::testing::TestWithParam<DataParallelCase> {};

TEST_P(DataParallelRuns, EveryReplicaEndsWithTheWeightsOfSingleProcessTraining) {
    const DataParallelCase c = GetParam();
    const test::MlpSpec spec = spec_of(c);
    const auto dir = test::temp_dir("dp-" + c.schedule);
    const auto project = test::write_project(dir, spec);
    const auto out = dir / "run";
    const auto r = test::run_cli("run " + project.string() +
                                     " --steps 3 --dtype float64 --save-params "
                                     "--threads-per-rank 1 --json --out " +
                                     out.string(),
                                 dir);
    ASSERT_EQ(r.code, 0) << r.output;

    const AnalyzedProject p = test::analyze_text(test::mlp_project_json(spec));
    const AnalyzedProject whole = single_process(spec);
    ASSERT_EQ(p.data_parallel(), 2);
    ASSERT_EQ(whole.microbatch_size, p.microbatch_size);
    const auto reference = test::reference_parameters(whole, 3, torch::kFloat64);
    const auto replica0 = saved_parameters(p, out, 0);
    const auto replica1 = saved_parameters(p, out, 1);
    EXPECT_LE(test::max_relative_difference(replica0, reference), 1e-5);
    EXPECT_LE(test::max_relative_difference(replica1, replica0), 1e-12)
        << "the replicas drifted apart";
    const auto initial =
        backend::build_model(whole, static_cast<std::uint64_t>(whole.project.training.seed),
                             torch::kFloat64)
            ->parameters();
    EXPECT_GT(test::max_relative_difference(reference, initial), 1e-4) << "training did nothing";
    // Half the batch is not the whole: a replica that trained alone on its
    // share (no reduction) would end elsewhere.
    test::MlpSpec half = spec;
    half.replicas = 1;
    half.batch = spec.batch / 2;
    const auto alone = test::reference_parameters(test::analyze_text(test::mlp_project_json(half)),
                                                  3, torch::kFloat64);
    EXPECT_GT(test::max_relative_difference(alone, reference), 1e-4);

    // The timeline has every rank of both replicas, each with its stages'
    // REDUCE_GRAD: timed, and carrying the stage's gradient bytes.
    const Timeline t = load_timeline_file(out / "timeline.json");
    ASSERT_EQ(t.num_ranks(), 4);
    EXPECT_EQ(t.devices[2], p.replicas[1][0].path);
    std::size_t actions = 0;
    for (const auto& rank : p.schedule.ranks) {
        actions += rank.size();
    }
    EXPECT_EQ(t.events.size(), 2 * actions);
    std::vector<int> reductions(4, 0);
    for (const auto& e : t.events) {
        if (e.action.type == ActionType::reduce_grad) {
            ++reductions[static_cast<std::size_t>(e.rank)];
            EXPECT_GT(e.bytes, 0);
            EXPECT_LE(e.start_s, e.end_s);
        }
        if (e.action.type == ActionType::send_forward) {
            // Sends go to the next rank of the same replica.
            EXPECT_EQ(e.peer_rank / 2, e.rank / 2) << to_string(e.action);
        }
    }
    EXPECT_EQ(reductions, std::vector<int>(4, 1));

    const auto summary = nlohmann::json::parse(test::last_json_object(r.output));
    EXPECT_EQ(summary.at("data_parallel"), 2);
    EXPECT_EQ(summary.at("zero_stage"), c.zero_stage);
    EXPECT_EQ(summary.at("batch_size"), 16);
    EXPECT_EQ(summary.at("devices").size(), 4U);
    EXPECT_EQ(summary.at("losses").size(), 3U);
    fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(SchedulesAndZero, DataParallelRuns,
                         ::testing::Values(DataParallelCase{"gpipe", 0, true, 25, "sgd"},
                                           // Buckets of 1 KiB: one all-reduce per weight or less.
                                           DataParallelCase{"gpipe", 1, false, 0.001, "adam"},
                                           DataParallelCase{"1f1b", 0, false, 0.001, "sgd"},
                                           DataParallelCase{"1f1b", 1, true, 25, "adam"},
                                           DataParallelCase{"zb-h1", 0, true, 0.001, "adamw"},
                                           DataParallelCase{"zb-h1", 1, false, 25, "sgd"}),
                         [](const auto& test_info) {
                             const DataParallelCase& c = test_info.param;
                             std::string name =
                                 c.schedule + "_zero" + std::to_string(c.zero_stage) +
                                 (c.overlap ? "_overlap" : "_sync") + "_" + c.optimizer;
                             for (auto& ch : name) {
                                 ch = std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
                             }
                             return name;
                         });

// --data-parallel replaces the project's size, and `compare` matches the
// simulation's lanes (replica 0's) with the measured lanes on their devices.
TEST(DataParallelRuns, CommandLineSizeAndCompareAgainstTheSimulation) {
    const auto dir = test::temp_dir("dp-compare");
    test::MlpSpec spec;
    spec.replicas = 2;  // four devices
    auto json = nlohmann::json::parse(test::mlp_project_json(spec));
    json.erase("data_parallel");  // one replica unless told
    write_file_atomically(dir / "project.json", json.dump(2));
    const auto project = dir / "project.json";
    const auto out = dir / "run";
    const auto r =
        test::run_cli("run " + project.string() +
                          " --data-parallel 2 --steps 3 --threads-per-rank 1 --out " + out.string(),
                      dir, "run");
    ASSERT_EQ(r.code, 0) << r.output;
    EXPECT_NE(r.output.find("on 2 replicas"), std::string::npos) << r.output;
    const auto sim = dir / "sim.json";
    const auto s = test::run_cli(
        "simulate " + project.string() + " --data-parallel 2 --timeline " + sim.string(), dir,
        "simulate");
    ASSERT_EQ(s.code, 0) << s.output;
    const auto c =
        test::run_cli("compare " + sim.string() + " " + out.string() + " --json", dir, "compare");
    ASSERT_EQ(c.code, 0) << c.output;
    const auto j = nlohmann::json::parse(test::last_json_object(c.output));
    ASSERT_EQ(load_timeline_file(sim).num_ranks(), 2);
    EXPECT_EQ(j.at("measured_lanes"), nlohmann::json({0, 1}));
    EXPECT_NE(j.at("note").get<std::string>().find("2 other lanes"), std::string::npos);
    bool reduce_row = false;
    for (const auto& row : j.at("rows")) {
        reduce_row = reduce_row || row.at("what") == "median REDUCE_GRAD";
    }
    EXPECT_TRUE(reduce_row) << j.dump(2);
    fs::remove_all(dir);
}

}  // namespace
}  // namespace pipewright
