// The profiler's transfer measurement between two processes: the second
// one's command line, and what the profiler says when it fails.
#include "profile/transfer_peer.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli_runner.h"
#include "pipewright/backend/backend_error.h"
#include "pipewright/backend/profiler.h"
#include "profile/rank_thread_conditions.h"

namespace pipewright::backend::profiling {
namespace {

TEST(TransferPeer, ItsArgumentsComeBackAsWritten) {
    TransferPeerOptions o;
    o.store_file = "/tmp/pipewright-profile-x/store";
    o.host = "127.0.0.1";
    o.sizes = {4096, 262144, 4194304};
    o.repeats = 7;
    o.timeout = std::chrono::milliseconds(12'345);
    o.bind = true;
    std::string error;
    const auto back = parse_transfer_peer_arguments(transfer_peer_arguments(o), error);
    ASSERT_TRUE(back.has_value()) << error;
    EXPECT_EQ(*back, o);
}

TEST(TransferPeer, ArgumentsTheProfilerNeverWritesAreRefused) {
    std::string error;
    EXPECT_FALSE(parse_transfer_peer_arguments({"--store"}, error));
    EXPECT_EQ(error, "arguments come in pairs: --name value");
    EXPECT_FALSE(parse_transfer_peer_arguments({"--colour", "red"}, error));
    EXPECT_EQ(error, "unknown argument --colour");
    EXPECT_FALSE(parse_transfer_peer_arguments({"--store", "s", "--sizes", "4k"}, error));
    EXPECT_EQ(error, "a number was expected");
    EXPECT_FALSE(parse_transfer_peer_arguments({"--store", "s"}, error));
    EXPECT_EQ(error, "--store, --sizes and --repeats (at least 1) are needed");

    std::ostringstream err;
    EXPECT_EQ(run_transfer_peer({"--colour", "red"}, err), 2);
    EXPECT_EQ(err.str(), "pipewright-backend transfer-peer: unknown argument --colour\n");
}

// A second process that ends at once is named as soon as it has, not after
// the whole timeout.
TEST(TransferPeer, ASecondProcessThatEndsIsReportedWithItsExit) {
    TransferOptions o;
    o.message_bytes = {4096, 65536};
    o.repeats = 2;
    o.timeout_s = 120;
    o.peer_program = "/bin/false";
    try {
        (void)measure_transfer(o);
        FAIL() << "a transfer was measured without a second rank";
    } catch (const BackendError& e) {
        EXPECT_STREQ(e.what(), "the transfer measurement's second process ended (exit code 1)");
    }
}

// A second process killed while it measures (here after a second, by
// `timeout`, which kills its process group) is named with its exit, not as
// the connection Gloo lost.
TEST(TransferPeer, ASecondProcessKilledMidwayIsNamed) {
    const auto dir = test::temp_dir("transfer-peer-killed");
    const auto script = dir / "peer.sh";
    {
        std::ofstream out(script);
        out << "#!/bin/sh\nexec timeout -s KILL 1 " << PIPEWRIGHT_BACKEND_PATH << " \"$@\"\n";
    }
    std::filesystem::permissions(script, std::filesystem::perms::owner_all);
    TransferOptions o;
    o.message_bytes = {4096, 65536, 1 << 20};
    o.repeats = 5000;  // far longer than a second
    o.timeout_s = 120;
    o.peer_program = script.string();
    try {
        (void)measure_transfer(o);
        FAIL() << "the transfer was measured to the end";
    } catch (const BackendError& e) {
        EXPECT_STREQ(
            e.what(),
            "the transfer measurement's second process ended (killed by signal 9 (Killed))");
    }
}

// The profiler's own thread plays rank 0: it gets its cores and scheduling
// back afterwards.
TEST(TransferPeer, TheProfilersThreadIsGivenBackAsItWas) {
    cpu_set_t before;
    ASSERT_EQ(sched_getaffinity(0, sizeof before, &before), 0);
    {
        RankThreadConditions conditions(0, true);
        EXPECT_EQ(sched_getscheduler(0), SCHED_BATCH);
        conditions.transport_made();
        EXPECT_EQ(sched_getscheduler(0), SCHED_OTHER);
    }
    cpu_set_t after;
    ASSERT_EQ(sched_getaffinity(0, sizeof after, &after), 0);
    EXPECT_TRUE(CPU_EQUAL(&before, &after));
    EXPECT_EQ(sched_getscheduler(0), SCHED_OTHER);
}

}  // namespace
}  // namespace pipewright::backend::profiling
