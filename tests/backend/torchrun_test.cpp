// `pipewright run` under the launchers clusters use: the real torchrun of
// this machine's PyTorch starts two processes that each join as the rank
// its environment names, and two processes given Slurm's variables do the
// same; both train to the parameters of a plain run. Bad environments are
// refused before any training, naming the variable.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include "backend_test_util.h"
#include "cli_runner.h"
#include "pipewright/core/project_io.h"

namespace pipewright {
namespace {

namespace fs = std::filesystem;

// The Python with torch's launcher (Debian's python3-torch).
// PIPEWRIGHT_TORCHRUN_PYTHON overrides it: torchrun's agent hosts the
// store, whose protocol changed between Torch 1.13 and 2.x, so a build
// against upstream Torch takes that Torch's torchrun
// (scripts/check-torch-upstream.sh sets it).
const std::string kPython = [] {
    const char* given = std::getenv("PIPEWRIGHT_TORCHRUN_PYTHON");
    return std::string(given != nullptr && *given != '\0' ? given : "/usr/bin/python3");
}();

// `command` through a shell, its output kept in dir/TAG-output.txt.
test::CliResult run_shell(const std::string& command, const fs::path& dir, const std::string& tag) {
    const fs::path out = dir / (tag + "-output.txt");
    const std::string line = command + " > " + out.string() + " 2>&1";
    const int status = std::system(line.c_str());
    test::CliResult r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.output = read_text_file(out);
    return r;
}

// `pipewright ARGS` with `variables` ("A=1 B=2") added to its environment.
test::CliResult run_with(const std::string& variables, const std::string& args, const fs::path& dir,
                         const std::string& tag) {
    return run_shell("env " + variables + " " + PIPEWRIGHT_CLI_PATH + " " + args, dir, tag);
}

bool have_torchrun() {
    const std::string probe = kPython + " -c 'import torch.distributed.run' > /dev/null 2>&1";
    return std::system(probe.c_str()) == 0;
}

// Every stage's parameters of a run: stage 0 on rank 0 in the run folder,
// stage 1 on rank 1 in its rank-1/ folder inside it.
std::vector<torch::Tensor> parameters_of_two_ranks(const fs::path& out) {
    auto all = test::saved_stage_parameters(out, 0);
    const auto second = test::saved_stage_parameters(out / "rank-1", 1);
    all.insert(all.end(), second.begin(), second.end());
    return all;
}

std::vector<torch::Tensor> parameters_of_plain_run(const fs::path& out) {
    auto all = test::saved_stage_parameters(out, 0);
    const auto second = test::saved_stage_parameters(out, 1);
    all.insert(all.end(), second.begin(), second.end());
    return all;
}

void expect_identical(const std::vector<torch::Tensor>& got,
                      const std::vector<torch::Tensor>& expected) {
    ASSERT_EQ(got.size(), expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        EXPECT_TRUE(torch::equal(got[i], expected[i])) << "parameter " << i;
    }
}

struct TwoStageRun {
    fs::path dir;
    fs::path project;
    std::string training;  // the options every run of the test shares
};

TwoStageRun two_stage_run(const std::string& name) {
    TwoStageRun r;
    r.dir = test::temp_dir(name);
    test::MlpSpec spec;  // two stages on two CPU ranks, 1F1B
    r.project = test::write_project(r.dir, spec);
    r.training = " --steps 3 --dtype float64 --save-params --threads-per-rank 1 --timeout 30";
    return r;
}

fs::path plain_run(const TwoStageRun& r) {
    const fs::path out = r.dir / "plain";
    const auto plain = test::run_cli(
        "run " + r.project.string() + r.training + " --launcher own --out " + out.string(), r.dir,
        "plain");
    EXPECT_EQ(plain.code, 0) << plain.output;
    return out;
}

TEST(Torchrun, TwoProcessesTrainToTheParametersOfAPlainRun) {
    if (!have_torchrun()) {
        GTEST_SKIP() << kPython << " -m torch.distributed.run is not available "
                     << "(install Debian's python3-torch to run this test)";
    }
    const auto r = two_stage_run("torchrun");
    const fs::path out = r.dir / "torchrun";
    const int port = test::free_port();
    // --redirects 1 --tee 1: torch 1.13's torchrun under Python 3.11 reads
    // its default "0" as no setting at all and fails before starting
    // anything; these (stdout through a log and on to the terminal) read.
    const auto run = run_shell(
        kPython +
            " -m torch.distributed.run --no_python --nproc_per_node 2 --redirects 1 --tee 1 "
            "--master_port " +
            std::to_string(port) + " " + PIPEWRIGHT_CLI_PATH + " run " + r.project.string() +
            r.training + " --out " + out.string(),
        r.dir, "torchrun");
    ASSERT_EQ(run.code, 0) << run.output;
    for (const int rank : {0, 1}) {
        EXPECT_NE(run.output.find("pipewright: launcher: torchrun, rank " + std::to_string(rank) +
                                  " of 2, master 127.0.0.1:" + std::to_string(port)),
                  std::string::npos)
            << run.output;
    }
    for (const char* f : {"timeline.json", "trace.json", "metrics.json", "run.log"}) {
        EXPECT_TRUE(fs::exists(out / f)) << f;
    }
    EXPECT_TRUE(fs::exists(out / "rank-1" / "summary.json"));
    expect_identical(parameters_of_two_ranks(out), parameters_of_plain_run(plain_run(r)));
    fs::remove_all(r.dir);
}

// torchrun's own restart: a rank fails once (in the job's first attempt),
// the agent stops both and starts them again with
// TORCHELASTIC_RESTART_COUNT=1, and they resume from the checkpoint of
// step 1 to the parameters of a run that never failed.
TEST(Torchrun, ARankThatFailsOnceIsRestartedAndResumesFromItsCheckpoint) {
    if (!have_torchrun()) {
        GTEST_SKIP() << kPython << " -m torch.distributed.run is not available "
                     << "(install Debian's python3-torch to run this test)";
    }
    const auto r = two_stage_run("torchrun-restart");
    const fs::path out = r.dir / "torchrun";
    const auto run = run_shell(
        "env PIPEWRIGHT_TEST_RAISE_ON_RANK=1 " + kPython +
            " -m torch.distributed.run --no_python --nproc_per_node 2 --max_restarts 1 "
            "--redirects 1 --tee 1 --master_port " +
            std::to_string(test::free_port()) + " " + PIPEWRIGHT_CLI_PATH + " run " +
            r.project.string() + r.training + " --checkpoint-every 1 --out " + out.string(),
        r.dir, "torchrun");
    ASSERT_EQ(run.code, 0) << run.output;
    EXPECT_NE(run.output.find("injected failure"), std::string::npos) << run.output;
    EXPECT_NE(run.output.find("resuming from " + (out / "checkpoints/step-000001").string() +
                              " (TORCHELASTIC_RESTART_COUNT=1"),
              std::string::npos)
        << run.output;
    expect_identical(parameters_of_two_ranks(out), parameters_of_plain_run(plain_run(r)));
    fs::remove_all(r.dir);
}

TEST(Slurm, TwoTasksTrainToTheParametersOfAPlainRun) {
    const auto r = two_stage_run("slurm");
    const fs::path out = r.dir / "slurm";
    const std::string common =
        "SLURM_NTASKS=2 SLURM_NODEID=0 SLURM_STEP_ID=0 SLURM_JOB_NODELIST=localhost " +
        std::string("MASTER_PORT=") + std::to_string(test::free_port());
    const std::string args =
        "run " + r.project.string() + r.training + " --launcher slurm --json --out " + out.string();
    test::CliResult task1;
    std::thread second([&] {
        task1 = run_with(common + " SLURM_PROCID=1 SLURM_LOCALID=1", args, r.dir, "task1");
    });
    const auto task0 = run_with(common + " SLURM_PROCID=0 SLURM_LOCALID=0", args, r.dir, "task0");
    second.join();
    ASSERT_EQ(task0.code, 0) << task0.output;
    ASSERT_EQ(task1.code, 0) << task1.output;
    EXPECT_NE(task0.output.find("launcher: slurm, rank 0 of 2, master localhost:"),
              std::string::npos)
        << task0.output;
    const auto summary = nlohmann::json::parse(test::last_json_object(task0.output));
    EXPECT_TRUE(summary.at("complete").get<bool>());
    expect_identical(parameters_of_two_ranks(out), parameters_of_plain_run(plain_run(r)));
    fs::remove_all(r.dir);
}

// A job Slurm requeued (SLURM_RESTART_COUNT=1) resumes by itself from the
// checkpoint its first attempt saved in the same --out (whose rank-1/
// folder it replaces), and ends as a run never stopped.
TEST(Slurm, ARequeuedJobResumesFromItsCheckpoint) {
    const auto r = two_stage_run("slurm-requeued");
    const fs::path out = r.dir / "slurm";
    const auto attempt = [&](int steps, const std::string& restart, const std::string& tag) {
        const std::string common =
            restart +
            "SLURM_NTASKS=2 SLURM_NODEID=0 SLURM_STEP_ID=0 SLURM_JOB_NODELIST=localhost " +
            "MASTER_PORT=" + std::to_string(test::free_port());
        const std::string args = "run " + r.project.string() + " --steps " + std::to_string(steps) +
                                 " --dtype float64 --save-params --threads-per-rank 1 --timeout 30 "
                                 "--checkpoint-every 2 --launcher slurm --out " +
                                 out.string();
        test::CliResult task1;
        std::thread second([&] {
            task1 = run_with(common + " SLURM_PROCID=1 SLURM_LOCALID=1", args, r.dir, tag + "1");
        });
        const auto task0 =
            run_with(common + " SLURM_PROCID=0 SLURM_LOCALID=0", args, r.dir, tag + "0");
        second.join();
        EXPECT_EQ(task0.code, 0) << task0.output;
        EXPECT_EQ(task1.code, 0) << task1.output;
        return task0;
    };
    (void)attempt(2, "", "first");
    const auto again = attempt(3, "SLURM_RESTART_COUNT=1 ", "again");
    EXPECT_NE(again.output.find("resuming from " + (out / "checkpoints/step-000002").string() +
                                " (SLURM_RESTART_COUNT=1: the job was restarted)"),
              std::string::npos)
        << again.output;
    EXPECT_EQ(again.output.find("step 1/3"), std::string::npos) << again.output;
    expect_identical(parameters_of_two_ranks(out), parameters_of_plain_run(plain_run(r)));
    fs::remove_all(r.dir);
}

// A rank killed mid-run: both processes stop, and rank 0's names it.
TEST(Slurm, AKilledRankIsNamed) {
    const auto r = two_stage_run("slurm-killed");
    const fs::path out = r.dir / "slurm";
    const std::string common = "SLURM_NTASKS=2 SLURM_STEP_ID=0 SLURM_JOB_NODELIST=localhost " +
                               std::string("MASTER_PORT=") + std::to_string(test::free_port());
    const std::string args = "run " + r.project.string() +
                             " --steps 2000 --threads-per-rank 1 --timeout 10 --out " +
                             out.string();
    test::CliResult task1;
    std::thread second([&] {
        task1 = run_with(common + " SLURM_PROCID=1 SLURM_LOCALID=1", args, r.dir, "task1");
    });
    test::CliResult task0;
    std::thread first([&] {
        task0 = run_with(common + " SLURM_PROCID=0 SLURM_LOCALID=0", args, r.dir, "task0");
    });
    // Rank 1's worker writes into rank-1/: the only process that names it.
    std::vector<pid_t> victim;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
    while (victim.empty() && std::chrono::steady_clock::now() < deadline) {
        std::string log;
        try {
            log = read_text_file(out / "run.log");
        } catch (const std::exception&) {
            // not written yet
        }
        if (log.find("step 2/") != std::string::npos) {
            victim = test::processes_mentioning((out / "rank-1").string());
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (victim.size() == 1) {
        ::kill(victim.front(), SIGKILL);
    }
    first.join();
    second.join();
    ASSERT_EQ(victim.size(), 1U) << "training never started: " << task0.output;
    EXPECT_EQ(task0.code, 1) << task0.output;
    EXPECT_EQ(task1.code, 1) << task1.output;
    EXPECT_NE(task0.output.find("rank 1 failed (killed by signal 9"), std::string::npos)
        << task0.output;
    EXPECT_EQ(test::processes_mentioning(r.dir.string()), std::vector<pid_t>{});
    fs::remove_all(r.dir);
}

const std::string kTorchrunRank0 =
    "RANK=0 LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=29999";

TEST(LaunchEnvironmentRefusals, AWorldSizeThatIsNotTheProjectsRanksNamesBoth) {
    const auto r = two_stage_run("world");
    const auto run =
        run_with(kTorchrunRank0 + " WORLD_SIZE=3",
                 "run " + r.project.string() + r.training + " --out " + (r.dir / "run").string(),
                 r.dir, "world");
    EXPECT_EQ(run.code, 2) << run.output;
    EXPECT_NE(run.output.find("WORLD_SIZE is 3, but " + r.project.string() + " runs on 2 ranks"),
              std::string::npos)
        << run.output;
    EXPECT_FALSE(fs::exists(r.dir / "run")) << "refused before the run folder";
    fs::remove_all(r.dir);
}

TEST(LaunchEnvironmentRefusals, MalformedVariablesAreNamed) {
    const auto r = two_stage_run("malformed");
    const std::string args = "run " + r.project.string() + r.training;
    const auto rank = run_with("RANK=first WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29999",
                               args, r.dir, "rank");
    EXPECT_EQ(rank.code, 2) << rank.output;
    EXPECT_NE(rank.output.find("RANK must be a whole number from 0 up, got \"first\""),
              std::string::npos)
        << rank.output;
    const auto master = run_with("RANK=0 WORLD_SIZE=2 MASTER_PORT=29999",
                                 args + " --launcher torchrun", r.dir, "master");
    EXPECT_EQ(master.code, 2) << master.output;
    EXPECT_NE(master.output.find("MASTER_ADDR is not set"), std::string::npos) << master.output;
    const auto nodes = run_with("PET_NNODES=two", args, r.dir, "pet");
    EXPECT_EQ(nodes.code, 2) << nodes.output;
    EXPECT_NE(nodes.output.find("PET_NNODES"), std::string::npos) << nodes.output;
    fs::remove_all(r.dir);
}

TEST(AgentFlags, ReadTorchrunsPetVariablesWhenNotGiven) {
    const auto r = two_stage_run("pet");
    const int port = test::free_port();
    // PET_MASTER_PORT alone: torchrun's default address, this launcher
    // (node 0 of one) hosting the store there.
    const auto run =
        run_with("PET_NNODES=1 PET_NODE_RANK=0 PET_MASTER_PORT=" + std::to_string(port),
                 "run " + r.project.string() + r.training + " --out " + (r.dir / "run").string(),
                 r.dir, "pet");
    ASSERT_EQ(run.code, 0) << run.output;
    EXPECT_NE(run.output.find("store 127.0.0.1:" + std::to_string(port)), std::string::npos)
        << run.output;
    const auto both =
        run_with("PET_MASTER_PORT=" + std::to_string(port),
                 "run " + r.project.string() + " --master 127.0.0.1:1", r.dir, "both");
    EXPECT_EQ(both.code, 2) << both.output;
    EXPECT_NE(both.output.find("give either --master HOST:PORT or --master-addr/--master-port"),
              std::string::npos)
        << both.output;
    fs::remove_all(r.dir);
}

}  // namespace
}  // namespace pipewright
