// `run` of a model bigger than the machine is refused before any worker
// starts (it used to start 98 workers and bring the out-of-memory killer
// down on the whole machine), with the figures, unless --force.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <optional>

#include <nlohmann/json.hpp>

#include "cli_test_support.h"
#include "run_machine_check.h"

namespace pipewright {
namespace {

using testing::example;

cli::RunArgs run_of(const std::string& project) {
    cli::RunArgs a;
    a.project = project;
    return a;
}

constexpr std::int64_t kGiB = 1LL << 30;

// A project of 20 linear layers, each a stage on a CPU device of its own.
nlohmann::json twenty_stages() {
    nlohmann::json layers = nlohmann::json::array();
    nlohmann::json devices = nlohmann::json::array();
    nlohmann::json placement = nlohmann::json::array();
    for (int i = 0; i < 20; ++i) {
        const std::string n = std::to_string(i);
        layers.push_back(
            {{"name", "fc" + n}, {"type", "linear"}, {"in_features", 8}, {"out_features", 8}});
        devices.push_back({{"name", "cpu" + n}, {"spec", "cpu"}});
        placement.push_back({{"device", "host/proc/cpu" + n}, {"layers", {"fc" + n}}});
    }
    return {{"format", "pipewright-project"},
            {"version", 1},
            {"model",
             {{"name", "many"},
              {"input", {{"shape", {8}}, {"dtype", "float32"}}},
              {"loss", "mse"},
              {"layers", layers}}},
            {"topology",
             {{"nodes",
               {{{"name", "host"}, {"containers", {{{"name", "proc"}, {"devices", devices}}}}}}}}},
            {"placement", placement},
            {"training",
             {{"batch_size", 40},
              {"microbatches", 20},
              {"schedule", "1f1b"},
              {"optimizer", {{"type", "sgd"}, {"lr", 0.01}}},
              {"steps", 2}}}};
}

TEST(RunMachineCheck, GptThreeOnATwentyFourGigabyteMachineIsRefusedWithTheFigures) {
    const std::string why =
        cli::run_machine_problem(run_of(example("gpt3-175b-p4d.json")), {24 * kGiB, 2});
    EXPECT_NE(why.find("this run needs about"), std::string::npos) << why;
    EXPECT_NE(why.find("but this machine has 24.0 GiB available"), std::string::npos) << why;
    EXPECT_NE(why.find("ranks ×"), std::string::npos) << why;
    EXPECT_NE(why.find("--force"), std::string::npos) << why;
}

TEST(RunMachineCheck, TheCpuExampleFitsAndTooManyRanksForTheCoresDoNot) {
    EXPECT_EQ(cli::run_machine_problem(run_of(example("mlp-cpu.json")), {24 * kGiB, 2}), "");
    // Two ranks against a machine with 100 MiB left: refused on memory.
    const std::string memory =
        cli::run_machine_problem(run_of(example("mlp-cpu.json")), {100LL << 20, 2});
    EXPECT_NE(memory.find("2 ranks ×"), std::string::npos) << memory;
    // 20 tiny stages, a worker each: too many for 2 cores (8 a core), not
    // for 3; a node of a multi-node run counts only its own ranks.
    testing::TempDir dir;
    const std::string many = (dir / "many.json").string();
    std::ofstream(many) << twenty_stages().dump();
    const std::string cores = cli::run_machine_problem(run_of(many), {24 * kGiB, 2});
    EXPECT_NE(cores.find("starts 20 worker processes on 2 cores"), std::string::npos) << cores;
    EXPECT_EQ(cli::run_machine_problem(run_of(many), {24 * kGiB, 3}), "");
    cli::RunArgs node = run_of(many);
    node.nnodes = 2;
    EXPECT_EQ(cli::run_machine_problem(node, {24 * kGiB, 2}), "");
}

// Under torchrun or Slurm each process is one rank: this machine holds the
// launcher's local ranks, not all of the run's.
TEST(RunMachineCheck, UnderALauncherThisMachineHoldsItsLocalRanksOnly) {
    testing::TempDir dir;
    const std::string many = (dir / "many.json").string();
    std::ofstream(many) << twenty_stages().dump();
    const auto environment = [](std::map<std::string, std::string> variables) {
        return [variables](const std::string& name) -> std::optional<std::string> {
            const auto found = variables.find(name);
            return found == variables.end() ? std::nullopt : std::optional(found->second);
        };
    };
    // 20 ranks over 10 machines of 2: 2 here, within 2 cores.
    const auto torchrun = environment({{"RANK", "3"},
                                       {"WORLD_SIZE", "20"},
                                       {"LOCAL_RANK", "1"},
                                       {"LOCAL_WORLD_SIZE", "2"},
                                       {"MASTER_ADDR", "10.0.0.1"},
                                       {"MASTER_PORT", "29500"}});
    EXPECT_EQ(cli::run_machine_problem(run_of(many), {24 * kGiB, 2}, torchrun), "");
    // The same run started by Pipewright's own launcher is 20 ranks here.
    cli::RunArgs own = run_of(many);
    own.launcher = "own";
    EXPECT_NE(cli::run_machine_problem(own, {24 * kGiB, 2}, torchrun)
                  .find("starts 20 worker processes on 2 cores"),
              std::string::npos);
    // A variable the backend will refuse, naming it, is left to it.
    const auto broken = environment({{"RANK", "x"}, {"WORLD_SIZE", "20"}});
    EXPECT_EQ(cli::run_machine_problem(run_of(many), {24 * kGiB, 2}, broken), "");
}

// `profile` builds every layer at once: GPT-3's 175 billion parameters are
// refused with the figures (it grew to 24 GB and was killed in silence).
TEST(RunMachineCheck, ProfilingGptThreeIsRefusedAndTheCpuExampleIsNot) {
    cli::ProfileArgs gpt;
    gpt.project = example("gpt3-175b-p4d.json");
    const std::string why = cli::profile_machine_problem(gpt, {24 * kGiB, 2});
    EXPECT_NE(why.find("profiling this project needs about"), std::string::npos) << why;
    EXPECT_NE(why.find("TiB"), std::string::npos) << why;
    EXPECT_NE(why.find("but this machine has 24.0 GiB available"), std::string::npos) << why;
    EXPECT_NE(why.find("--force"), std::string::npos) << why;
    cli::ProfileArgs mlp;
    mlp.project = example("mlp-cpu.json");
    EXPECT_EQ(cli::profile_machine_problem(mlp, {24 * kGiB, 2}), "");
    EXPECT_NE(cli::profile_machine_problem(mlp, {100LL << 20, 2}), "");
}

// Ranks on GPUs hold the model in the GPUs' memory (the simulation checks
// it against each device): the host's memory does not bound them.
TEST(RunMachineCheck, RanksOnGpusAreNotBoundByTheHostsMemory) {
    cli::RunArgs gpu = run_of(example("gpt3-175b-p4d.json"));
    gpu.device = "cuda";
    EXPECT_EQ(cli::run_machine_problem(gpu, {24 * kGiB, 2}), "");
    gpu.device = "auto";
    cli::MachineResources with_gpus{24 * kGiB, 2};
    with_gpus.has_gpus = true;
    EXPECT_EQ(cli::run_machine_problem(gpu, with_gpus), "");
    gpu.device = "cpu";
    EXPECT_NE(cli::run_machine_problem(gpu, with_gpus), "");
}

TEST(RunMachineCheck, AProjectThatDoesNotLoadIsLeftToTheBackend) {
    EXPECT_EQ(cli::run_machine_problem(run_of("/no/such/project.json"), {1, 1}), "");
}

TEST(RunMachineCheck, ThisMachineHasMemoryAndCores) {
    const cli::MachineResources m = cli::this_machine();
    EXPECT_GT(m.available_bytes, 0);
    EXPECT_GE(m.cores, 1);
}

}  // namespace
}  // namespace pipewright
