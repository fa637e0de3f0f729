// Checkpoints and resume of real runs (run/checkpoint.h): 2 steps, a
// checkpoint, a resume and 2 more steps end with the parameters of 4 steps
// never stopped, bit for bit (a pipeline with dropout and Adam, two
// replicas under ZeRO-1, a tensor-parallel decoder); torn checkpoints and
// those of another project or layout are refused before any training; a
// restarted job resumes by itself.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "backend_test_util.h"
#include "cli_runner.h"
#include "pipewright/core/project_io.h"
#include "resume_check.h"

namespace pipewright {
namespace {

namespace fs = std::filesystem;
using test::all_saved;
using test::identical;
using test::two_plus_two;
using test::TwoPlusTwo;

// A two-stage pipeline with a dropout layer (its masks must continue from
// the saved random state) and Adam (its moments and step count).
fs::path write_dropout_project(const fs::path& dir, test::MlpSpec spec, double lr = 0.01) {
    nlohmann::json p = nlohmann::json::parse(test::mlp_project_json(spec));
    auto& layers = p.at("model").at("layers");
    nlohmann::json with_dropout = nlohmann::json::array();
    for (const auto& l : layers) {
        with_dropout.push_back(l);
        if (l.at("name") == "act0") {
            with_dropout.push_back({{"name", "drop0"}, {"type", "dropout"}, {"p", 0.25}});
        }
    }
    layers = with_dropout;
    for (auto& stage : p.at("placement")) {
        auto& names = stage.at("layers");
        for (std::size_t i = 0; i < names.size(); ++i) {
            if (names[i] == "act0") {
                names.insert(names.begin() + static_cast<std::ptrdiff_t>(i) + 1, "drop0");
                break;
            }
        }
    }
    p.at("training").at("optimizer").at("lr") = lr;
    const fs::path file = dir / "project.json";
    write_file_atomically(file, p.dump(2));
    return file;
}

test::MlpSpec pipeline_spec() {
    test::MlpSpec s;
    s.schedule = "1f1b";
    s.optimizer = "adam";
    return s;
}

constexpr const char* kExact = " --dtype float64 --threads-per-rank 1";

std::string run_args(const fs::path& project, const std::string& options, const fs::path& out) {
    return "run " + project.string() + kExact + " " + options + " --out " + out.string();
}

TEST(CheckpointRuns, APipelineResumedAfterTwoStepsEndsAsFourStepsNeverStopped) {
    const auto dir = test::temp_dir("ckpt-pipeline");
    const auto project = write_dropout_project(dir, pipeline_spec());
    const TwoPlusTwo t = two_plus_two(dir, project, 2, 1, 1);
    EXPECT_TRUE(identical(t.resumed, t.uninterrupted));
    EXPECT_NE(
        t.resume_output.find("resuming from " + (dir / "first/checkpoints/step-000002").string() +
                             ": the state after step 2, training on from step 3 of 4"),
        std::string::npos)
        << t.resume_output;
    EXPECT_NE(t.resume_output.find("step 3/4"), std::string::npos) << t.resume_output;
    EXPECT_EQ(t.resume_output.find("step 1/4"), std::string::npos) << t.resume_output;
    // The summary and metrics.json number the steps on from the checkpoint.
    EXPECT_NE(t.resume_output.find("2 steps (3 to 4, resumed after step 2)"), std::string::npos)
        << t.resume_output;
    EXPECT_NE(t.resume_output.find("(step 3 -> 4)"), std::string::npos) << t.resume_output;
    std::ifstream metrics(dir / "resumed/metrics.json");
    const nlohmann::json m = nlohmann::json::parse(metrics);
    ASSERT_EQ(m.at("steps").size(), 2U);
    EXPECT_EQ(m.at("steps")[0].at("step"), 2);  // counted from 0, as every run's are
    EXPECT_EQ(m.at("steps")[1].at("step"), 3);
    fs::remove_all(dir);
}

TEST(CheckpointRuns, TwoReplicasUnderZeroOneResumeAsNeverStopped) {
    const auto dir = test::temp_dir("ckpt-dp");
    test::MlpSpec s = pipeline_spec();
    s.replicas = 2;
    s.zero_stage = 1;  // each rank saves its own shard of the optimizer state
    s.microbatches = 4;
    s.batch = 16;
    const auto project = test::write_project(dir, s);
    const TwoPlusTwo t = two_plus_two(dir, project, 2, 2, 1);
    EXPECT_TRUE(identical(t.resumed, t.uninterrupted));
    fs::remove_all(dir);
}

TEST(CheckpointRuns, ATensorParallelDecoderResumesAsNeverStopped) {
    const auto dir = test::temp_dir("ckpt-tp");
    const fs::path project = fs::path(PIPEWRIGHT_ASSETS_DIR) / "examples/gpt-tiny-t2p2-cpu.json";
    // One run of 4 steps saving after 2 and 4, and a resume of its older
    // checkpoint, named as such.
    const auto whole = test::run_cli(
        run_args(project, "--steps 4 --save-params --checkpoint-every 2", dir / "whole"), dir,
        "whole");
    ASSERT_EQ(whole.code, 0) << whole.output;
    EXPECT_TRUE(fs::exists(dir / "whole/checkpoints/step-000004/manifest.json"));
    const auto resumed =
        test::run_cli(run_args(project,
                               "--steps 4 --save-params --resume " +
                                   (dir / "whole/checkpoints/step-000002").string(),
                               dir / "resumed"),
                      dir, "resumed");
    ASSERT_EQ(resumed.code, 0) << resumed.output;
    EXPECT_TRUE(identical(all_saved(dir / "resumed", 2, 1, 2), all_saved(dir / "whole", 2, 1, 2)));
    fs::remove_all(dir);
}

// Several stages a rank, looped (interleaved 1F1B) and in a V (ZB-V): each
// rank saves and resumes every stage it holds.
TEST(CheckpointRuns, InterleavedAndVPipelinesResumeAsNeverStopped) {
    for (const char* schedule : {"interleaved-1f1b", "zbv"}) {
        SCOPED_TRACE(schedule);
        const auto dir = test::temp_dir(std::string("ckpt-") + schedule);
        test::MlpSpec spec = pipeline_spec();
        spec.schedule = schedule;
        spec.stages = 4;  // two a rank
        const fs::path project = test::write_project(dir, spec);
        const auto t = two_plus_two(dir, project, 4, 1, 1);
        EXPECT_TRUE(identical(t.uninterrupted, t.resumed));
        fs::remove_all(dir);
    }
}

TEST(CheckpointRuns, OnlyTheLastTwoCheckpointsAreKept) {
    const auto dir = test::temp_dir("ckpt-keep");
    const auto project = test::write_project(dir, pipeline_spec());
    const auto r = test::run_cli(
        run_args(project,
                 "--steps 4 --checkpoint-every 1 --checkpoint-dir " + (dir / "saves").string(),
                 dir / "run"),
        dir);
    ASSERT_EQ(r.code, 0) << r.output;
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir / "saves")) {
        names.push_back(e.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    EXPECT_EQ(names, (std::vector<std::string>{"step-000003", "step-000004"}));
    const auto manifest =
        nlohmann::json::parse(std::ifstream(dir / "saves/step-000004/manifest.json"));
    EXPECT_EQ(manifest.at("step"), 4);
    EXPECT_EQ(manifest.at("world_size"), 2);
    ASSERT_EQ(manifest.at("ranks").size(), 2U);
    EXPECT_EQ(manifest.at("ranks")[1].at("bytes").get<std::uintmax_t>(),
              fs::file_size(dir / "saves/step-000004/rank-1.pt"));
    fs::remove_all(dir);
}

// A checkpoint after 2 steps of the pipeline project, in dir/first.
fs::path saved_checkpoint(const fs::path& dir, const fs::path& project) {
    const auto r = test::run_cli(run_args(project, "--steps 2 --checkpoint-every 1", dir / "first"),
                                 dir, "first");
    EXPECT_EQ(r.code, 0) << r.output;
    return dir / "first/checkpoints";
}

// A refusal before any training: no step ran, no worker wrote a log.
void expect_refused(const test::CliResult& r, const std::string& words) {
    EXPECT_NE(r.code, 0) << r.output;
    EXPECT_NE(r.output.find(words), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("step 3/"), std::string::npos) << r.output;
}

TEST(CheckpointRuns, ATornCheckpointIsRefusedSayingWhatIsMissing) {
    const auto dir = test::temp_dir("ckpt-torn");
    const auto project = write_dropout_project(dir, pipeline_spec());
    const fs::path saves = saved_checkpoint(dir, project);
    // A rank file cut short.
    fs::resize_file(saves / "step-000002/rank-1.pt", 100);
    const auto short_file = test::run_cli(
        run_args(project, "--steps 4 --resume " + saves.string(), dir / "short"), dir, "short");
    expect_refused(short_file, "step-000002 is torn: rank-1.pt has 100 bytes, the manifest says");
    // The older complete one is named, to be asked for.
    EXPECT_NE(short_file.output.find("give --resume " + (saves / "step-000001").string()),
              std::string::npos)
        << short_file.output;
    // A rank file missing.
    fs::remove(saves / "step-000002/rank-1.pt");
    expect_refused(
        test::run_cli(run_args(project, "--steps 4 --resume " + saves.string(), dir / "missing"),
                      dir, "missing"),
        "step-000002 is torn: rank-1.pt is missing");
    // No manifest: a save that never finished.
    fs::remove(saves / "step-000001/manifest.json");
    expect_refused(
        test::run_cli(run_args(project, "--steps 4 --resume " + (saves / "step-000001").string(),
                               dir / "unfinished"),
                      dir, "unfinished"),
        "step-000001 is torn: it has no manifest.json");
    fs::remove_all(dir);
}

TEST(CheckpointRuns, ACheckpointOfAnotherProjectOrLayoutIsRefusedNamingTheDifference) {
    const auto dir = test::temp_dir("ckpt-other");
    const auto project = write_dropout_project(dir, pipeline_spec());
    const fs::path saves = saved_checkpoint(dir, project);
    const auto other_dir = dir / "other";
    fs::create_directories(other_dir);
    const auto other = write_dropout_project(other_dir, pipeline_spec(), 0.02);
    expect_refused(
        test::run_cli(run_args(other, "--steps 4 --resume " + saves.string(), dir / "lr"), dir,
                      "lr"),
        "is of another project or layout (project.training.optimizer.lr 0.02 here, "
        "0.01 there");
    // Both stages on one rank: another world size.
    test::MlpSpec one = pipeline_spec();
    one.ranks = 1;
    one.schedule = "gpipe";  // two stages on one rank
    const auto one_dir = dir / "one";
    fs::create_directories(one_dir);
    const auto one_rank = write_dropout_project(one_dir, one);
    expect_refused(
        test::run_cli(run_args(one_rank, "--steps 4 --resume " + saves.string(), dir / "world"),
                      dir, "world"),
        "was saved by a run of 2 ranks; this one has 1");
    // Nothing left to train.
    expect_refused(
        test::run_cli(run_args(project, "--steps 2 --resume " + saves.string(), dir / "done"), dir,
                      "done"),
        "nothing is left to train");
    fs::remove_all(dir);
}

TEST(CheckpointRuns, ARestartedJobResumesFromItsCheckpointsByItself) {
    const auto dir = test::temp_dir("ckpt-restart");
    const auto project = write_dropout_project(dir, pipeline_spec());
    const auto whole =
        test::run_cli(run_args(project, "--steps 4 --save-params", dir / "whole"), dir, "whole");
    ASSERT_EQ(whole.code, 0) << whole.output;
    // The first attempt stops after 2 steps; the restarted one runs the same
    // command line into the same folder.
    const auto first = test::run_cli(
        run_args(project, "--steps 2 --checkpoint-every 2", dir / "job"), dir, "first");
    ASSERT_EQ(first.code, 0) << first.output;
    ::setenv("TORCHELASTIC_RESTART_COUNT", "1", 1);
    const auto again = test::run_cli(
        run_args(project, "--steps 4 --checkpoint-every 2 --save-params", dir / "job"), dir,
        "again");
    ::unsetenv("TORCHELASTIC_RESTART_COUNT");
    ASSERT_EQ(again.code, 0) << again.output;
    EXPECT_NE(again.output.find("resuming from " + (dir / "job/checkpoints/step-000002").string() +
                                " (TORCHELASTIC_RESTART_COUNT=1: the job was restarted)"),
              std::string::npos)
        << again.output;
    EXPECT_TRUE(identical(all_saved(dir / "job", 2), all_saved(dir / "whole", 2)));
    EXPECT_TRUE(fs::exists(dir / "job/checkpoints/step-000004/manifest.json"));
    fs::remove_all(dir);
}

}  // namespace
}  // namespace pipewright
