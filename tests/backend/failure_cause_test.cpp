// Which failed rank is blamed (failure_cause.h): the first with a reason of
// its own, never a peer that only lost its connection to it.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <csignal>

#include "run/failure_cause.h"

namespace pipewright::backend {
namespace {

constexpr int kExitedWithOne = 1 << 8;  // waitpid's status for exit(1)
constexpr int kKilled = SIGKILL;        // waitpid's status for a SIGKILL

TEST(FailureCause, ClosedConnectionsAndTimeoutsAreConsequences) {
    EXPECT_TRUE(
        is_consequence("[../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection "
                       "closed by peer [127.0.0.1]:4321"));
    EXPECT_TRUE(is_consequence("Read error [127.0.0.1]:1: Connection reset by peer"));
    EXPECT_TRUE(is_consequence("Timed out waiting 5000ms for recv operation to complete"));
    EXPECT_FALSE(is_consequence("grad requires non-empty inputs."));
    EXPECT_FALSE(is_consequence("stage 1: forward before its input arrived"));
    EXPECT_FALSE(is_consequence(""));
}

TEST(FailureCause, TheRankWithItsOwnReasonIsBlamedThoughItReportedLater) {
    const std::vector<RankFailure> all{{0, kExitedWithOne, "[gloo] Connection closed by peer", 1},
                                       {1, kExitedWithOne, "grad requires non-empty inputs.", 2},
                                       {2, kExitedWithOne, "[gloo] Connection closed by peer", 3}};
    EXPECT_EQ(first_cause(all).rank, 1);
}

TEST(FailureCause, OfTwoOwnReasonsTheFirstReportedIsBlamed) {
    const std::vector<RankFailure> all{{0, kExitedWithOne, "out of memory", 3},
                                       {2, kExitedWithOne, "bad shape", 2}};
    EXPECT_EQ(first_cause(all).rank, 2);
}

TEST(FailureCause, AKilledRankIsBlamedBeforePeersThatLostIt) {
    const std::vector<RankFailure> all{{0, kExitedWithOne, "[gloo] Connection closed by peer", 1},
                                       {3, kKilled, "step 4/10", std::nullopt}};
    EXPECT_EQ(first_cause(all).rank, 3);
}

TEST(FailureCause, WithOnlyConsequencesTheFirstReportedIsBlamed) {
    const std::vector<RankFailure> all{{1, std::nullopt, "Timed out waiting for recv", 2},
                                       {0, kExitedWithOne, "[gloo] Connection closed by peer", 1}};
    EXPECT_EQ(first_cause(all).rank, 0);
    EXPECT_EQ(first_cause({{4, kExitedWithOne, "", std::nullopt}}).rank, 4);
    EXPECT_THROW((void)first_cause({}), std::invalid_argument);
}

}  // namespace
}  // namespace pipewright::backend
