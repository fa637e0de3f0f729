// Which launcher assigns the rank, read from fake environments: torchrun's
// and Kubeflow's variables, Slurm's (with its node lists), and refusals that
// name the variable.
#include <gtest/gtest.h>

#include <map>

#include "pipewright/core/launch_environment.h"

namespace pipewright {
namespace {

Environment fake(std::map<std::string, std::string> variables) {
    return [variables](const std::string& name) -> std::optional<std::string> {
        const auto found = variables.find(name);
        if (found == variables.end()) {
            return std::nullopt;
        }
        return found->second;
    };
}

const std::map<std::string, std::string> kTorchrun{{"RANK", "1"},
                                                   {"WORLD_SIZE", "2"},
                                                   {"LOCAL_RANK", "1"},
                                                   {"LOCAL_WORLD_SIZE", "2"},
                                                   {"MASTER_ADDR", "127.0.0.1"},
                                                   {"MASTER_PORT", "29500"}};

const std::map<std::string, std::string> kSlurm{{"SLURM_PROCID", "3"},
                                                {"SLURM_NTASKS", "4"},
                                                {"SLURM_LOCALID", "1"},
                                                {"SLURM_NODEID", "1"},
                                                {"SLURM_JOB_NODELIST", "gpu[07-08]"},
                                                {"SLURM_STEP_ID", "0"}};

std::string refusal(const std::string& choice, const std::map<std::string, std::string>& env) {
    try {
        (void)launch_from_environment(choice, fake(env));
    } catch (const LaunchError& e) {
        return e.what();
    }
    return "";
}

std::map<std::string, std::string> with(std::map<std::string, std::string> env,
                                        const std::string& name, const std::string& value) {
    env[name] = value;
    return env;
}

std::map<std::string, std::string> without(std::map<std::string, std::string> env,
                                           const std::string& name) {
    env.erase(name);
    return env;
}

TEST(LaunchEnvironment, TorchrunVariablesAssignTheRank) {
    const auto l = launch_from_environment("auto", fake(kTorchrun));
    ASSERT_TRUE(l);
    EXPECT_EQ(l->launcher, "torchrun");
    EXPECT_EQ(l->rank, 1);
    EXPECT_EQ(l->world_size, 2);
    EXPECT_EQ(l->local_rank, 1);
    EXPECT_EQ(l->local_world_size, 2);
    EXPECT_EQ(l->master_host, "127.0.0.1");
    EXPECT_EQ(l->master_port, 29500);
    EXPECT_FALSE(l->agent_store);
    EXPECT_EQ(describe(*l), "launcher: torchrun, rank 1 of 2, master 127.0.0.1:29500");
}

TEST(LaunchEnvironment, TorchrunsStaticRendezvousSharesItsAgentsStorePerAttempt) {
    auto env = with(kTorchrun, "TORCHELASTIC_USE_AGENT_STORE", "True");
    env["TORCHELASTIC_RESTART_COUNT"] = "2";
    const auto l = launch_from_environment("torchrun", fake(env));
    ASSERT_TRUE(l);
    EXPECT_TRUE(l->agent_store);
    EXPECT_EQ(l->store_prefix, "pipewright/attempt_2");
    const auto c10d = launch_from_environment(
        "torchrun", fake(with(kTorchrun, "TORCHELASTIC_USE_AGENT_STORE", "False")));
    EXPECT_FALSE(c10d->agent_store);
}

TEST(LaunchEnvironment, SlurmVariablesAssignTheRankAndTheFirstNodeIsTheMaster) {
    const auto l = launch_from_environment("auto", fake(kSlurm));
    ASSERT_TRUE(l);
    EXPECT_EQ(l->launcher, "slurm");
    EXPECT_EQ(l->rank, 3);
    EXPECT_EQ(l->world_size, 4);
    EXPECT_EQ(l->local_rank, 1);
    EXPECT_EQ(l->master_host, "gpu07");
    EXPECT_EQ(l->master_port, kDefaultSlurmMasterPort);
    const auto port = launch_from_environment("slurm", fake(with(kSlurm, "MASTER_PORT", "4000")));
    EXPECT_EQ(port->master_port, 4000);
    const auto addr = launch_from_environment("slurm", fake(with(kSlurm, "MASTER_ADDR", "h0")));
    EXPECT_EQ(addr->master_host, "h0");
}

TEST(LaunchEnvironment, AutoPrefersTorchrunThenSlurmElseItsOwn) {
    auto both = kTorchrun;
    both.insert(kSlurm.begin(), kSlurm.end());
    EXPECT_EQ(launch_from_environment("auto", fake(both))->launcher, "torchrun");
    EXPECT_EQ(launch_from_environment("slurm", fake(both))->launcher, "slurm");
    EXPECT_FALSE(launch_from_environment("auto", fake({})));
    // A batch script's own shell, and a step of one task, start the run
    // themselves.
    EXPECT_FALSE(launch_from_environment("auto", fake(without(kSlurm, "SLURM_STEP_ID"))));
    EXPECT_FALSE(launch_from_environment("auto", fake(with(kSlurm, "SLURM_NTASKS", "1"))));
    EXPECT_FALSE(launch_from_environment("own", fake(kTorchrun)));
    // Kubeflow's pod variables for a torchrun inside it: a node, not a rank.
    const std::map<std::string, std::string> pod{{"RANK", "0"},
                                                 {"WORLD_SIZE", "4"},
                                                 {"MASTER_ADDR", "job-master-0"},
                                                 {"MASTER_PORT", "23456"},
                                                 {"PET_NPROC_PER_NODE", "2"},
                                                 {"PET_NNODES", "2"}};
    EXPECT_FALSE(launch_from_environment("auto", fake(pod)));
}

TEST(LaunchEnvironment, MissingOrMalformedVariablesAreNamed) {
    EXPECT_NE(refusal("torchrun", with(kTorchrun, "RANK", "one"))
                  .find("RANK must be a whole "
                        "number from 0 up, got "
                        "\"one\""),
              std::string::npos);
    EXPECT_NE(refusal("torchrun", with(kTorchrun, "WORLD_SIZE", "0")).find("WORLD_SIZE"),
              std::string::npos);
    EXPECT_NE(
        refusal("torchrun", with(kTorchrun, "RANK", "2")).find("RANK is 2, but WORLD_SIZE is 2"),
        std::string::npos);
    EXPECT_NE(refusal("torchrun", without(kTorchrun, "MASTER_ADDR")).find("MASTER_ADDR is not set"),
              std::string::npos);
    EXPECT_NE(refusal("torchrun", with(kTorchrun, "MASTER_PORT", "70000")).find("MASTER_PORT"),
              std::string::npos);
    EXPECT_NE(refusal("torchrun", with(kTorchrun, "LOCAL_RANK", "2")).find("LOCAL_WORLD_SIZE is 2"),
              std::string::npos);
    EXPECT_NE(refusal("torchrun", {}).find("RANK is not set"), std::string::npos);
    EXPECT_NE(refusal("slurm", with(kSlurm, "SLURM_PROCID", "-1")).find("SLURM_PROCID"),
              std::string::npos);
    EXPECT_NE(refusal("slurm", without(kSlurm, "SLURM_JOB_NODELIST"))
                  .find("SLURM_JOB_NODELIST is not set"),
              std::string::npos);
    EXPECT_NE(refusal("slurm", with(kSlurm, "SLURM_JOB_NODELIST", "n[3-1]"))
                  .find("SLURM_JOB_NODELIST is not a Slurm node list"),
              std::string::npos);
    EXPECT_NE(refusal("mpi", {}).find("--launcher must be"), std::string::npos);
}

TEST(SlurmNodeList, ExpandsRangesListsAndPadding) {
    using V = std::vector<std::string>;
    EXPECT_EQ(expand_slurm_nodelist("node[01-04,07]", "L"),
              (V{"node01", "node02", "node03", "node04", "node07"}));
    EXPECT_EQ(expand_slurm_nodelist("a,b", "L"), (V{"a", "b"}));
    EXPECT_EQ(expand_slurm_nodelist("localhost", "L"), (V{"localhost"}));
    EXPECT_EQ(expand_slurm_nodelist("gpu[9-10]-ib,cpu1", "L"), (V{"gpu9-ib", "gpu10-ib", "cpu1"}));
    EXPECT_EQ(expand_slurm_nodelist("x[098-100]", "L"), (V{"x098", "x099", "x100"}));
    for (const char* bad : {"", "a,,b", "a,", "n[1-2", "[1-2]", "n[]", "n[a-b]", "n[2-1]"}) {
        EXPECT_THROW((void)expand_slurm_nodelist(bad, "L"), LaunchError) << bad;
    }
}

}  // namespace
}  // namespace pipewright
