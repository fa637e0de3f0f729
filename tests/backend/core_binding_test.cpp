// CPU ranks on cores of their own: which cores a rank takes, that binding
// reaches every thread of the process, that the transport's threads can be
// made batch work, and that `run` binds its ranks when asked and leaves them
// alone when told not to.
#include "run/core_binding.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <functional>
#include <regex>
#include <sstream>
#include <thread>

#include "cli_runner.h"

namespace pipewright {
namespace {

using backend::allowed_cores;
using backend::bind_process_to;
using backend::cores_of_rank;

TEST(CoreBinding, EachRankTakesItsShareOfTheAllowedCoresInOrder) {
    const std::vector<int> allowed{2, 3, 5, 7, 8, 9};
    EXPECT_EQ(cores_of_rank(allowed, 0, 3, 2), (std::vector<int>{2, 3}));
    EXPECT_EQ(cores_of_rank(allowed, 1, 3, 2), (std::vector<int>{5, 7}));
    EXPECT_EQ(cores_of_rank(allowed, 2, 3, 2), (std::vector<int>{8, 9}));
    EXPECT_EQ(cores_of_rank(allowed, 3, 6, 1), (std::vector<int>{7}));
    // Fewer threads than cores: the last cores stay free.
    EXPECT_EQ(cores_of_rank(allowed, 1, 2, 1), (std::vector<int>{3}));
}

TEST(CoreBinding, RanksThatDoNotFitOrRunAloneStayUnbound) {
    const std::vector<int> allowed{0, 1};
    EXPECT_TRUE(cores_of_rank(allowed, 0, 4, 1).empty());  // 4 ranks on 2 cores
    EXPECT_TRUE(cores_of_rank(allowed, 0, 2, 2).empty());  // 2 × 2 threads on 2 cores
    EXPECT_TRUE(cores_of_rank(allowed, 0, 1, 2).empty());  // one rank: nothing to keep apart
    EXPECT_TRUE(cores_of_rank({}, 0, 2, 1).empty());       // a mask that could not be read
    EXPECT_TRUE(cores_of_rank(allowed, 2, 2, 1).empty());  // not one of the ranks
}

std::vector<int> cores_of_thread(pid_t tid) {
    cpu_set_t mask;
    CPU_ZERO(&mask);
    EXPECT_EQ(sched_getaffinity(tid, sizeof mask, &mask), 0);
    std::vector<int> cores;
    for (int c = 0; c < CPU_SETSIZE; ++c) {
        if (CPU_ISSET(c, &mask)) {
            cores.push_back(c);
        }
    }
    return cores;
}

// Runs `check` in a child process, beside a thread it starts first (whose
// task id it is given), so that what it changes about scheduling leaves the
// test binary's own threads alone. The check passes when `check` returns
// true.
bool in_child_beside_a_thread(const std::function<bool(pid_t)>& check) {
    const pid_t child = fork();
    if (child < 0) {
        return false;
    }
    if (child == 0) {
        std::atomic<pid_t> tid{0};
        std::atomic<bool> stop{false};
        std::thread beside([&] {
            tid = static_cast<pid_t>(syscall(SYS_gettid));
            while (!stop) {
                std::this_thread::yield();
            }
        });
        while (tid == 0) {
            std::this_thread::yield();
        }
        const bool ok = check(tid);
        stop = true;
        beside.join();
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    return waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// A thread started before the binding is bound with the caller; one started
// after inherits it.
TEST(CoreBinding, BindingReachesThreadsStartedBeforeAndAfter) {
    const std::vector<int> allowed = allowed_cores();
    ASSERT_FALSE(allowed.empty());
    const std::vector<int> one{allowed.back()};
    EXPECT_TRUE(in_child_beside_a_thread([&](pid_t early) {
        bool ok = bind_process_to(one).empty();
        ok = ok && cores_of_thread(early) == one && cores_of_thread(0) == one;
        std::vector<int> late_cores;
        std::thread late([&] { late_cores = cores_of_thread(0); });
        late.join();
        return ok && late_cores == one;
    })) << "a thread of the bound process kept other cores";
}

// The transport's threads as batch work: the threads named, and only they.
TEST(CoreBinding, ThreadsScheduledAsBatchWorkAreTheOnesNamed) {
    EXPECT_TRUE(in_child_beside_a_thread([](pid_t started) {
        const std::vector<pid_t> ids = backend::thread_ids();
        bool ok = ids.size() >= 2 && std::find(ids.begin(), ids.end(), started) != ids.end();
        ok = ok && backend::schedule_as_batch({started}).empty();
        return ok && sched_getscheduler(started) == SCHED_BATCH &&
               sched_getscheduler(0) == SCHED_OTHER;
    })) << "the thread is not batch work, or the caller became it";
}

// What the run's first line says: bound, unbound on a busy machine, or
// nothing where binding is off, on GPUs, or the ranks do not fit.
TEST(CoreBinding, TheRunsFirstLineSaysWhatWasChosen) {
    if (allowed_cores().size() < 2) {
        GTEST_SKIP() << "needs two cores";
    }
    using backend::CoreBinding;
    using backend::CoreBindingChoice;
    const auto on = backend::choose_core_binding(CoreBinding::on, false);
    EXPECT_TRUE(on.bind);
    EXPECT_EQ(backend::core_binding_words(on, 2, 1, false), ", each rank on a core of its own");
    EXPECT_EQ(backend::core_binding_words(on, 1, 2, false), "");  // one rank
    EXPECT_EQ(backend::core_binding_words(on, 2, 1, true), "");   // other launchers' ranks too
    const auto off = backend::choose_core_binding(CoreBinding::off, false);
    EXPECT_FALSE(off.bind);
    EXPECT_EQ(backend::core_binding_words(off, 2, 1, false), "");
    const auto gpus = backend::choose_core_binding(CoreBinding::on, true);
    EXPECT_FALSE(gpus.bind);
    EXPECT_EQ(backend::core_binding_words(gpus, 2, 1, false), "");
    const CoreBindingChoice busy{CoreBinding::automatic, false, 1.3};
    EXPECT_EQ(backend::core_binding_words(busy, 2, 1, false),
              ", unbound: other work keeps 1.3 cores busy");
}

std::string read_file(const std::filesystem::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

TEST(CoreBinding, RunBindsEachCpuRankToACoreOfItsOwnWhenAsked) {
    if (allowed_cores().size() < 2) {
        GTEST_SKIP() << "needs two cores";
    }
    const auto dir = test::temp_dir("core-binding");
    const auto project = test::write_project(dir, test::MlpSpec{});
    const auto out = dir / "bound";
    const auto bound =
        test::run_cli("run " + project.string() + " --steps 2 --threads-per-rank 1 " +
                          "--core-binding on --out " + out.string(),
                      dir, "bound");
    ASSERT_EQ(bound.code, 0) << bound.output;
    EXPECT_NE(bound.output.find(out.string() + ", each rank on a core of its own"),
              std::string::npos)
        << bound.output;
    std::smatch m0;
    std::smatch m1;
    const std::string log0 = read_file(out / "rank-0.log");
    const std::string log1 = read_file(out / "rank-1.log");
    const std::regex line(R"(rank (\d): note: bound to core (\d+))");
    ASSERT_TRUE(std::regex_search(log0, m0, line)) << log0;
    ASSERT_TRUE(std::regex_search(log1, m1, line)) << log1;
    EXPECT_EQ(m0[1], "0");
    EXPECT_EQ(m1[1], "1");
    EXPECT_NE(m0[2], m1[2]) << "both ranks on one core";

    const auto off = dir / "unbound";
    const auto unbound = test::run_cli("run " + project.string() +
                                           " --steps 2 --threads-per-rank 1 --core-binding off " +
                                           "--out " + off.string(),
                                       dir, "unbound");
    ASSERT_EQ(unbound.code, 0) << unbound.output;
    EXPECT_EQ(unbound.output.find("of its own"), std::string::npos) << unbound.output;
    EXPECT_EQ(read_file(off / "rank-0.log").find("bound to"), std::string::npos);
}

TEST(CoreBinding, RanksThatDoNotFitTheCoresAreNotBound) {
    const auto dir = test::temp_dir("core-binding-many");
    const auto project = test::write_project(dir, test::MlpSpec{});
    const auto cores = std::to_string(allowed_cores().size());
    const auto r = test::run_cli("run " + project.string() + " --steps 1 --threads-per-rank " +
                                     cores + " --core-binding on --out " + (dir / "run").string(),
                                 dir);
    ASSERT_EQ(r.code, 0) << r.output;
    EXPECT_EQ(r.output.find("of its own"), std::string::npos) << r.output;
    EXPECT_EQ(read_file(dir / "run" / "rank-0.log").find("bound to"), std::string::npos);
}

}  // namespace
}  // namespace pipewright
