// Multi-node runs as torchrun does them: one launcher per node, each starting
// only its node's ranks, meeting at node 0's store. Two launchers on this
// machine act as two nodes; faults of the rendezvous end quickly and clearly.
#include <gtest/gtest.h>

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>
#include <utility>

#include "backend_test_util.h"
#include "cli_runner.h"
#include "pipewright/backend/launcher.h"
#include "pipewright/core/project_io.h"
#include "pipewright/core/timeline.h"

namespace pipewright {
namespace {

namespace fs = std::filesystem;
using test::run_cli;

TEST(NodeRanks, SplitsRanksEvenlyInRankOrder) {
    const auto n1 = backend::node_ranks(4, 2, 1, std::nullopt);
    EXPECT_EQ(n1.first, 2);
    EXPECT_EQ(n1.count, 2);
    const auto single = backend::node_ranks(3, 1, 0, std::nullopt);
    EXPECT_EQ(single.first, 0);
    EXPECT_EQ(single.count, 3);
    const auto given = backend::node_ranks(6, 3, 2, 2);
    EXPECT_EQ(given.first, 4);
    EXPECT_EQ(given.count, 2);
}

std::string problem_of(int world, int nnodes, int node_rank, std::optional<int> per_node) {
    try {
        (void)backend::node_ranks(world, nnodes, node_rank, per_node);
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "";
}

TEST(NodeRanks, RefusesLayoutsThatDoNotAddUp) {
    EXPECT_NE(problem_of(3, 2, 0, std::nullopt).find("do not split evenly over 2 nodes"),
              std::string::npos);
    EXPECT_NE(problem_of(4, 2, 0, 3).find("makes 6 ranks, but the run has 4 (one per device"),
              std::string::npos);
    EXPECT_NE(problem_of(4, 2, 2, std::nullopt).find("--node-rank must be from 0 to 1"),
              std::string::npos);
    EXPECT_NE(problem_of(4, 0, 0, std::nullopt).find("--nnodes must be at least 1"),
              std::string::npos);
}

std::vector<double> losses_of(const test::CliResult& r) {
    return nlohmann::json::parse(test::last_json_object(r.output))
        .at("losses")
        .get<std::vector<double>>();
}

// The same run (`common`) on one launcher, and node 0's losses against it,
// step by step: three steps each.
void expect_losses_of_one_launcher(const test::CliResult& node0, const std::string& common,
                                   const fs::path& dir) {
    const auto single = run_cli(common + " --out " + (dir / "single").string(), dir, "single");
    ASSERT_EQ(single.code, 0) << single.output;
    const auto expected = losses_of(single);
    const auto got = losses_of(node0);
    ASSERT_EQ(got.size(), 3U);
    ASSERT_EQ(got.size(), expected.size());
    for (std::size_t k = 0; k < got.size(); ++k) {
        EXPECT_NEAR(got[k], expected[k], 1e-12 * std::abs(expected[k])) << "step " << k;
    }
}

// `common` on two launchers of this machine, as nodes 0 and 1 of one run,
// each writing into dir/nodeN.
// `second` (when given) is node 1's command instead.
std::pair<test::CliResult, test::CliResult> run_two_nodes(const std::string& common,
                                                          const fs::path& dir,
                                                          const std::string& second_command = "") {
    const std::string master = "127.0.0.1:" + std::to_string(test::free_port());
    test::CliResult node0, node1;
    std::thread second([&] {
        node1 = run_cli((second_command.empty() ? common : second_command) +
                            " --nnodes 2 --node-rank 1 --master " + master + " --out " +
                            (dir / "node1").string(),
                        dir, "node1");
    });
    node0 = run_cli(common + " --nnodes 2 --node-rank 0 --master " + master + " --out " +
                        (dir / "node0").string(),
                    dir, "node0");
    second.join();
    return {node0, node1};
}

TEST(MultiNode, TwoLaunchersCompleteARunWithTheLossesOfOneLauncher) {
    const auto dir = test::temp_dir("nodes");
    test::MlpSpec spec;
    spec.ranks = 4;
    spec.stages = 4;
    spec.microbatches = 4;
    spec.schedule = "1f1b";
    const auto project = test::write_project(dir, spec);
    const std::string common =
        "run " + project.string() +
        " --steps 3 --dtype float64 --threads-per-rank 1 --json --timeout 30";
    const auto [node0, node1] = run_two_nodes(common, dir);
    ASSERT_EQ(node0.code, 0) << node0.output;
    ASSERT_EQ(node1.code, 0) << node1.output;

    expect_losses_of_one_launcher(node0, common, dir);

    // Node 0 holds the complete run: every rank's lane and every action.
    const Timeline t = load_timeline_file(dir / "node0" / "timeline.json");
    const auto p = test::analyze_text(test::mlp_project_json(spec));
    std::size_t actions = 0;
    for (const auto& rank : p.schedule.ranks) {
        actions += rank.size();
    }
    EXPECT_EQ(t.events.size(), actions);
    const auto summary0 = nlohmann::json::parse(test::last_json_object(node0.output));
    EXPECT_EQ(summary0.at("devices").size(), 4U);
    EXPECT_TRUE(summary0.at("complete").get<bool>());
    EXPECT_EQ(summary0.at("nnodes"), 2);
    // Node 1 keeps its own log and the summary of its ranks 2 and 3.
    const auto summary1 = nlohmann::json::parse(read_text_file(dir / "node1" / "summary.json"));
    EXPECT_FALSE(summary1.at("complete").get<bool>());
    ASSERT_EQ(summary1.at("devices").size(), 2U);
    EXPECT_EQ(summary1.at("devices").at(0).at("rank"), 2);
    EXPECT_TRUE(fs::exists(dir / "node1" / "run.log"));
    EXPECT_FALSE(fs::exists(dir / "node1" / "timeline.json"));
    EXPECT_EQ(test::processes_mentioning(dir.string()), std::vector<pid_t>{});
    fs::remove_all(dir);
}

// Node 1 runs another project than node 0: another learning rate (which
// used to train a model that is neither, in silence) or another width
// (which used to abort inside Gloo). Both nodes refuse, before training,
// naming the first difference.
struct MixedCase {
    const char* name;
    std::function<void(nlohmann::json&)> edit;
    const char* difference;
};

class MixedProjects : public ::testing::TestWithParam<MixedCase> {};

TEST_P(MixedProjects, AreRefusedOnEveryNodeWithTheFirstDifference) {
    const MixedCase c = GetParam();
    const auto dir = test::temp_dir(std::string("mixed-") + c.name);
    test::MlpSpec spec;
    spec.ranks = 2;
    spec.stages = 2;
    const auto a = test::write_project(dir, spec);
    auto other = nlohmann::json::parse(test::mlp_project_json(spec));
    c.edit(other);
    const auto b = dir / "b.json";
    write_file_atomically(b, other.dump(2));
    const std::string options = " --steps 3 --threads-per-rank 1 --timeout 30";
    const auto [node0, node1] =
        run_two_nodes("run " + a.string() + options, dir, "run " + b.string() + options);
    EXPECT_NE(node0.code, 0) << node0.output;
    EXPECT_NE(node1.code, 0) << node1.output;
    EXPECT_NE(node0.output.find(c.difference), std::string::npos) << node0.output;
    EXPECT_NE(node1.output.find(c.difference), std::string::npos) << node1.output;
    EXPECT_NE(node1.output.find("another configuration than node 0"), std::string::npos)
        << node1.output;
    EXPECT_EQ(node1.output.find("lost the rendezvous store"), std::string::npos) << node1.output;
    EXPECT_EQ(test::processes_mentioning(dir.string()), std::vector<pid_t>{});
    fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(
    Differences, MixedProjects,
    ::testing::Values(MixedCase{"lr",
                                [](nlohmann::json& j) { j["training"]["optimizer"]["lr"] = 0.5; },
                                "project.training.optimizer.lr"},
                      MixedCase{"width",
                                [](nlohmann::json& j) {
                                    j["model"]["layers"][0]["out_features"] = 32;  // fc0
                                    j["model"]["layers"][2]["in_features"] = 32;   // fc1
                                },
                                "project.model.layers[0].out_features"},
                      MixedCase{"seed", [](nlohmann::json& j) { j["training"]["seed"] = 8; },
                                "project.training.seed"}),
    [](const auto& test_info) { return std::string(test_info.param.name); });

// Data parallelism over two launchers: --nproc-per-node 2 gives each node
// one replica of the two-rank pipeline (world ranks in replica order), and
// the run trains as the same run on one launcher does.
TEST(MultiNode, TwoReplicasOnTwoLaunchersTrainAsOnOne) {
    const auto dir = test::temp_dir("nodes-dp");
    test::MlpSpec spec;
    spec.replicas = 2;
    spec.zero_stage = 1;
    spec.optimizer = "adam";
    const auto project = test::write_project(dir, spec);
    const std::string common =
        "run " + project.string() +
        " --steps 3 --dtype float64 --threads-per-rank 1 --json --timeout 30";
    const auto [node0, node1] = run_two_nodes(common + " --nproc-per-node 2", dir);
    ASSERT_EQ(node0.code, 0) << node0.output;
    ASSERT_EQ(node1.code, 0) << node1.output;
    expect_losses_of_one_launcher(node0, common, dir);
    EXPECT_EQ(load_timeline_file(dir / "node0" / "timeline.json").num_ranks(), 4);
    // Node 1 ran replica 1: world ranks 2 and 3.
    const auto summary1 = nlohmann::json::parse(read_text_file(dir / "node1" / "summary.json"));
    ASSERT_EQ(summary1.at("devices").size(), 2U);
    EXPECT_EQ(summary1.at("devices").at(0).at("rank"), 2);
    EXPECT_EQ(test::processes_mentioning(dir.string()), std::vector<pid_t>{});
    fs::remove_all(dir);
}

TEST(MultiNode, UnreachableMasterIsAClearErrorWithinTheTimeout) {
    const auto dir = test::temp_dir("unreachable");
    test::MlpSpec spec;
    spec.ranks = 4;
    spec.stages = 4;
    const auto project = test::write_project(dir, spec);
    const auto out = dir / "run";
    const auto r = run_cli("run " + project.string() +
                               " --nnodes 2 --node-rank 1 --timeout 2 --master 127.0.0.1:" +
                               std::to_string(test::free_port()) + " --out " + out.string(),
                           dir);
    EXPECT_EQ(r.code, 1) << r.output;
    EXPECT_NE(r.output.find("cannot reach the master 127.0.0.1:"), std::string::npos) << r.output;
    // Ours is the only word: no glog preamble, no c10d socket lines.
    EXPECT_EQ(r.output.find("InitGoogleLogging"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("socket.cpp"), std::string::npos) << r.output;
    EXPECT_LT(r.seconds, 15);
    EXPECT_EQ(test::processes_mentioning(out.string()), std::vector<pid_t>{});
    fs::remove_all(dir);
}

TEST(MultiNode, NodeThatNeverArrivesIsNamedAfterTheTimeout) {
    const auto dir = test::temp_dir("absent");
    test::MlpSpec spec;
    spec.ranks = 4;
    spec.stages = 4;
    const auto project = test::write_project(dir, spec);
    const auto out = dir / "run";
    const auto r = run_cli("run " + project.string() +
                               " --nnodes 2 --node-rank 0 --timeout 3 --threads-per-rank 1 "
                               "--master 127.0.0.1:" +
                               std::to_string(test::free_port()) + " --out " + out.string(),
                           dir);
    EXPECT_EQ(r.code, 1) << r.output;
    EXPECT_NE(r.output.find("ranks 2 and 3 never joined within 3.00 s (node 1 did not arrive"),
              std::string::npos)
        << r.output;
    EXPECT_GE(r.seconds, 3);
    EXPECT_LT(r.seconds, 20);
    EXPECT_EQ(test::processes_mentioning(out.string()), std::vector<pid_t>{});
    fs::remove_all(dir);
}

TEST(MultiNode, LayoutThatDoesNotMatchTheProjectIsRefused) {
    const auto dir = test::temp_dir("layout");
    const auto project = test::write_project(dir, test::MlpSpec{});  // 2 devices
    const auto r =
        run_cli("run " + project.string() + " --nnodes 2 --node-rank 0 " +
                    "--nproc-per-node 2 --master 127.0.0.1:" + std::to_string(test::free_port()),
                dir);
    EXPECT_EQ(r.code, 2) << r.output;
    EXPECT_NE(r.output.find("makes 4 ranks, but the run has 2 (one per device of every replica)"),
              std::string::npos)
        << r.output;
    fs::remove_all(dir);
}

// Two launchers on one machine (the documented way to try multi-node) share
// its cores instead of each giving its ranks all of them.
TEST(MultiNode, LaunchersOnOneMachineShareItsCores) {
    const auto dir = test::temp_dir("share");
    const auto project = test::write_project(dir, test::MlpSpec{});  // 2 ranks
    const std::string common = "run " + project.string() + " --steps 1 --json --timeout 30";
    const auto [node0, node1] = run_two_nodes(common, dir);
    ASSERT_EQ(node0.code, 0) << node0.output;
    ASSERT_EQ(node1.code, 0) << node1.output;
    const int cores = static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
    const auto summary = nlohmann::json::parse(test::last_json_object(node0.output));
    for (const auto& device : summary.at("devices")) {
        EXPECT_EQ(device.at("threads").get<int>(), std::max(1, cores / 2)) << device.dump();
    }
    fs::remove_all(dir);
}

// The pid of the launcher (`pipewright run`) whose --out is `out`.
pid_t launcher_of(const fs::path& out) {
    for (const pid_t pid : test::processes_mentioning(out.string())) {
        std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
        std::vector<std::string> argv;
        for (std::string arg; std::getline(in, arg, '\0');) {
            argv.push_back(arg);
        }
        if (argv.size() > 1 && argv[0].find("pipewright") != std::string::npos &&
            argv[1] == "run") {
            return pid;
        }
    }
    return 0;
}

// A node whose launcher is killed takes its ranks along; the other node's
// ranks fail on a closed connection, and their launcher names the node that
// went silent, not its own rank.
TEST(MultiNode, AKilledNodeIsNamedByTheNodeThatRemains) {
    const auto dir = test::temp_dir("killed-node");
    test::MlpSpec spec;
    spec.width = 64;
    const auto project = test::write_project(dir, spec);
    const std::string common =
        "run " + project.string() + " --steps 1000000 --threads-per-rank 1 --timeout 30";
    const std::string master = "127.0.0.1:" + std::to_string(test::free_port());
    test::CliResult node0, node1;
    std::thread first([&] {
        node0 = run_cli(common + " --nnodes 2 --node-rank 0 --master " + master + " --out " +
                            (dir / "node0").string(),
                        dir, "node0");
    });
    std::thread second([&] {
        node1 = run_cli(common + " --nnodes 2 --node-rank 1 --master " + master + " --out " +
                            (dir / "node1").string(),
                        dir, "node1");
    });
    pid_t victim = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
    while (victim == 0 && std::chrono::steady_clock::now() < deadline) {
        std::string log;
        try {
            log = read_text_file(dir / "node0" / "run.log");
        } catch (const std::exception&) {
            // not written yet
        }
        if (log.find("step 2/") != std::string::npos) {
            victim = launcher_of(dir / "node1");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (victim > 0) {
        ::kill(victim, SIGKILL);
    } else {
        ::kill(launcher_of(dir / "node0"), SIGKILL);
    }
    first.join();
    second.join();
    ASSERT_GT(victim, 0) << "training never started";
    EXPECT_EQ(node0.code, 1) << node0.output;
    EXPECT_NE(node0.output.find("rank 1 (node 1) stopped answering"), std::string::npos)
        << node0.output;
    EXPECT_EQ(test::processes_mentioning(dir.string()), std::vector<pid_t>{});
    fs::remove_all(dir);
}

}  // namespace
}  // namespace pipewright
