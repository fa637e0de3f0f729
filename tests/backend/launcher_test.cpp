// `pipewright run` end to end with real worker processes over c10d/Gloo:
// equivalence with single-process training, outputs, and faults.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "backend_test_util.h"
#include "pipewright/core/project_io.h"
#include "pipewright/core/timeline.h"

namespace pipewright {
namespace {

namespace fs = std::filesystem;

struct Result {
    int code = -1;
    std::string output;  // stdout and stderr
    double seconds = 0;
};

// Runs the CLI with a shell; output goes through a file so that a hung
// child could never block the test on a pipe.
Result run_cli(const std::string& args, const fs::path& dir) {
    const fs::path out = dir / "cli-output.txt";
    const std::string cmd =
        std::string(PIPEWRIGHT_CLI_PATH) + " " + args + " > " + out.string() + " 2>&1";
    const auto start = std::chrono::steady_clock::now();
    const int status = std::system(cmd.c_str());
    Result r;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.output = read_text_file(out);
    return r;
}

fs::path temp_dir(const std::string& name) {
    fs::path d = fs::temp_directory_path() /
                 ("pipewright-backend-" + name + "-" + std::to_string(::getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

fs::path write_project(const fs::path& dir, const test::MlpSpec& spec) {
    const fs::path p = dir / "project.json";
    write_file_atomically(p, test::mlp_project_json(spec));
    return p;
}

TEST(Launcher, GlooRunEqualsSingleProcessTrainingAndWritesOutputs) {
    const auto dir = temp_dir("gloo");
    test::MlpSpec spec;
    spec.schedule = "1f1b";
    const auto project = write_project(dir, spec);
    const auto out = dir / "run";
    const Result r =
        run_cli("run " + project.string() + " --steps 3 --dtype float64 --save-params " +
                    "--threads-per-rank 1 --json --progress json --out " + out.string(),
                dir);
    ASSERT_EQ(r.code, 0) << r.output;

    const auto p = test::analyze_text(test::mlp_project_json(spec));
    std::vector<torch::Tensor> pipelined;
    for (int s = 0; s < p.schedule.num_stages; ++s) {
        std::vector<torch::Tensor> stage;
        torch::load(stage, (out / ("params-stage-" + std::to_string(s) + ".pt")).string());
        pipelined.insert(pipelined.end(), stage.begin(), stage.end());
    }
    const auto reference = test::reference_parameters(p, 3, torch::kFloat64);
    EXPECT_LE(test::max_relative_difference(pipelined, reference), 1e-5);

    for (const char* f : {"timeline.json", "trace.json", "metrics.json", "run.log"}) {
        EXPECT_TRUE(fs::exists(out / f)) << f;
    }
    const Timeline t = load_timeline_file(out / "timeline.json");
    EXPECT_EQ(t.source, "measured");
    EXPECT_EQ(t.num_ranks(), 2);
    std::size_t actions = 0;
    for (const auto& rank : p.schedule.ranks) {
        actions += rank.size();
    }
    EXPECT_EQ(t.events.size(), actions);
    // The summary is the last JSON object printed on stdout.
    const auto summary = nlohmann::json::parse(r.output.substr(r.output.rfind("\n{") + 1));
    EXPECT_EQ(summary.at("losses").size(), 3U);
    EXPECT_GT(summary.at("iteration_time_s").get<double>(), 0);
    EXPECT_GT(summary.at("throughput_samples_per_s").get<double>(), 0);
    EXPECT_EQ(summary.at("devices").size(), 2U);
    EXPECT_NE(r.output.find("{\"event\":\"step\""), std::string::npos) << r.output;
    fs::remove_all(dir);
}

TEST(Launcher, KilledWorkerStopsTheRunNamingTheRank) {
    const auto dir = temp_dir("kill");
    test::MlpSpec spec;
    spec.width = 64;
    const auto project = write_project(dir, spec);
    const auto out = dir / "run";
    Result r;
    std::thread launcher([&] {
        r = run_cli("run " + project.string() + " --steps 1000000 --threads-per-rank 1 --out " +
                        out.string(),
                    dir);
    });
    // Wait until training is under way, then kill rank 1.
    const std::regex pid_line("rank 1: pid ([0-9]+)");
    pid_t victim = 0;
    pid_t other = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
        std::string log;
        try {
            log = read_text_file(out / "run.log");
        } catch (const std::exception&) {
            // not written yet
        }
        std::smatch m;
        if (std::regex_search(log, m, pid_line) && log.find("step 2/") != std::string::npos) {
            victim = std::stoi(m[1]);
            std::smatch m0;
            if (std::regex_search(log, m0, std::regex("rank 0: pid ([0-9]+)"))) {
                other = std::stoi(m0[1]);
            }
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ASSERT_GT(victim, 0) << "training never started";
    const auto killed_at = std::chrono::steady_clock::now();
    ::kill(victim, SIGKILL);
    launcher.join();
    const double after_kill =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - killed_at).count();
    EXPECT_NE(r.code, 0);
    EXPECT_LT(after_kill, 10.0);
    EXPECT_NE(r.output.find("rank 1 failed (killed by signal 9"), std::string::npos) << r.output;
    ASSERT_GT(other, 0);
    EXPECT_NE(::kill(other, 0), 0) << "rank 0 is still running";
    fs::remove_all(dir);
}

TEST(Launcher, TakenPortIsAClearError) {
    const auto dir = temp_dir("port");
    const auto project = write_project(dir, test::MlpSpec{});
    c10d::TCPStoreOptions so;
    so.port = 0;
    so.isServer = true;
    so.waitWorkers = false;
    const c10d::TCPStore taken("127.0.0.1", so);
    const Result r =
        run_cli("run " + project.string() + " --steps 1 --port " + std::to_string(taken.getPort()) +
                    " --out " + (dir / "run").string(),
                dir);
    EXPECT_EQ(r.code, 1) << r.output;
    EXPECT_NE(r.output.find("already in use"), std::string::npos) << r.output;
    EXPECT_LT(r.seconds, 30);
    fs::remove_all(dir);
}

TEST(Launcher, CudaOnACpuOnlyTorchIsAClearError) {
    const auto dir = temp_dir("cuda");
    const auto project = write_project(dir, test::MlpSpec{});
    const Result r = run_cli("run " + project.string() + " --device cuda", dir);
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.output.find("--device cuda"), std::string::npos) << r.output;
    fs::remove_all(dir);
}

}  // namespace
}  // namespace pipewright
