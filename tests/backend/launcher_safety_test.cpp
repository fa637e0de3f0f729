// `pipewright run` against hostile input and the faults of real machines:
// what it listens on, where it writes, what it overwrites, signals from the
// terminal, and naming the rank that stopped answering.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <torch/version.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include <torch/csrc/distributed/c10d/FileStore.hpp>

#include "backend_test_util.h"
#include "cli_runner.h"
#include "pipewright/backend/launcher.h"
#include "pipewright/core/project_io.h"
#include "run/rendezvous.h"
#include "run/stderr_capture.h"

namespace pipewright {
namespace {

namespace fs = std::filesystem;
using test::run_cli;
using test::temp_dir;
using test::write_project;

std::string read_or_empty(const fs::path& file) {
    try {
        return read_text_file(file);
    } catch (const std::exception&) {
        return "";
    }
}

// A long run in the background, with the pids of its launcher and ranks
// once training is under way.
class BackgroundRun {
  public:
    // `replicas` > 1: a data-parallel run of that many replicas of the
    // two-rank pipeline.
    BackgroundRun(const fs::path& dir, const std::string& extra_args, int replicas = 1)
        : dir_(dir), out_(dir / "run") {
        test::MlpSpec spec;
        spec.width = 64;
        spec.replicas = replicas;
        const auto project = write_project(dir, spec);
        thread_ = std::thread([this, project, extra_args] {
            result_ =
                run_cli("run " + project.string() + " --steps 1000000 --threads-per-rank 1 --out " +
                            out_.string() + " " + extra_args,
                        dir_);
        });
    }
    ~BackgroundRun() {
        if (thread_.joinable()) {
            if (launcher_ > 0) {
                ::kill(launcher_, SIGKILL);
            }
            thread_.join();
        }
    }
    BackgroundRun(const BackgroundRun&) = delete;
    BackgroundRun& operator=(const BackgroundRun&) = delete;

    // Waits for step 2; false when training never started.
    bool wait_for_training() {
        const std::regex pid_line("rank ([0-9]+): pid ([0-9]+)");
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
        while (std::chrono::steady_clock::now() < deadline) {
            const std::string log = read_or_empty(out_ / "run.log");
            if (log.find("step 2/") != std::string::npos) {
                ranks_.clear();
                for (std::sregex_iterator it(log.begin(), log.end(), pid_line), end; it != end;
                     ++it) {
                    ranks_.push_back(std::stoi((*it)[2]));
                }
                launcher_ = parent_of(ranks_.at(0));
                return launcher_ > 0;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        return false;
    }
    const test::CliResult& finish() {
        thread_.join();
        return result_;
    }
    [[nodiscard]] pid_t launcher() const { return launcher_; }
    [[nodiscard]] const std::vector<pid_t>& ranks() const { return ranks_; }
    [[nodiscard]] const fs::path& out() const { return out_; }

  private:
    static pid_t parent_of(pid_t pid) {
        std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
        std::string text;
        std::getline(stat, text);
        const auto close = text.rfind(')');
        if (close == std::string::npos) {
            return 0;
        }
        std::istringstream rest(text.substr(close + 2));
        char state = 0;
        pid_t parent = 0;
        rest >> state >> parent;
        return parent;
    }
    fs::path dir_;
    fs::path out_;
    std::thread thread_;
    test::CliResult result_;
    pid_t launcher_ = 0;
    std::vector<pid_t> ranks_;
};

// The socket inodes a process holds.
std::set<std::string> socket_inodes(pid_t pid) {
    std::set<std::string> inodes;
    std::error_code ec;
    for (fs::directory_iterator it("/proc/" + std::to_string(pid) + "/fd", ec), end;
         !ec && it != end; it.increment(ec)) {
        const std::string target = fs::read_symlink(it->path(), ec).string();
        if (target.rfind("socket:[", 0) == 0) {
            inodes.insert(target.substr(8, target.size() - 9));
        }
    }
    return inodes;
}

// Local addresses ("0100007F:1F90" as the kernel writes them) of the
// listening TCP sockets among `inodes`.
std::vector<std::string> listening_addresses(const std::set<std::string>& inodes) {
    std::vector<std::string> found;
    for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
        std::ifstream in(table);
        std::string line;
        std::getline(in, line);  // header
        while (std::getline(in, line)) {
            std::istringstream f(line);
            std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
            f >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >>
                timeout >> inode;
            if (state == "0A" && inodes.count(inode) > 0) {
                found.push_back(local);
            }
        }
    }
    return found;
}

bool is_loopback_address(const std::string& kernel_address) {
    const std::string host = kernel_address.substr(0, kernel_address.find(':'));
    // 127.0.0.0/8 (little-endian: last byte 7F), ::1, and ::ffff:127.x.
    return (host.size() == 8 && host.substr(6) == "7F") ||
           host == "00000000000000000000000001000000" ||
           (host.size() == 32 && host.substr(0, 24) == "0000000000000000FFFF0000" &&
            host.substr(30) == "7F");
}

TEST(LauncherSafety, ARunOnOneMachineListensOnLoopbackOnly) {
    const auto dir = temp_dir("listen");
    BackgroundRun run(dir, "");
    ASSERT_TRUE(run.wait_for_training()) << read_or_empty(run.out() / "run.log");
    std::set<std::string> inodes = socket_inodes(run.launcher());
    for (const pid_t rank : run.ranks()) {
        const auto mine = socket_inodes(rank);
        inodes.insert(mine.begin(), mine.end());
    }
    const auto listening = listening_addresses(inodes);
    for (const auto& address : listening) {
        EXPECT_TRUE(is_loopback_address(address)) << "listens on " << address;
    }
    ::kill(run.launcher(), SIGTERM);
    const auto& r = run.finish();
    EXPECT_EQ(r.code, 128 + SIGTERM) << r.output;
    EXPECT_NE(r.output.find("store a private file (no network port)"), std::string::npos)
        << r.output;
    EXPECT_EQ(test::processes_mentioning(run.out().string()), std::vector<pid_t>{});
    fs::remove_all(dir);
}

// A rendezvous store on the network: where the Torch build takes the
// store's socket (upstream 2.1 and later), it listens on the master's
// address alone; LibTorch 1.13 binds every interface, and the launcher says
// so.
TEST(LauncherSafety, AStoreOnTheNetworkListensOnTheMastersAddressWhereTorchLetsIt) {
    const auto dir = temp_dir("listen-master");
    const int port = test::free_port();
    BackgroundRun run(dir, "--master 127.0.0.1:" + std::to_string(port));
    ASSERT_TRUE(run.wait_for_training()) << read_or_empty(run.out() / "run.log");
    const auto listening = listening_addresses(socket_inodes(run.launcher()));
    char port_hex[8];
    std::snprintf(port_hex, sizeof port_hex, "%04X", port);
    std::vector<std::string> store;  // the launcher's sockets on the master's port
    for (const auto& address : listening) {
        if (address.substr(address.find(':') + 1) == port_hex) {
            store.push_back(address);
        }
    }
    ASSERT_FALSE(store.empty()) << "nothing listens on port " << port;
    const std::string log = read_or_empty(run.out() / "run.log");
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
    for (const auto& address : store) {
        EXPECT_TRUE(is_loopback_address(address)) << "listens on " << address;
    }
    EXPECT_NE(log.find("listens on 127.0.0.1 port " + std::to_string(port) + " only"),
              std::string::npos)
        << log;
#else
    EXPECT_TRUE(std::any_of(store.begin(), store.end(), [](const std::string& a) {
        return !is_loopback_address(a);
    })) << "LibTorch 1.13's TCPStore was expected to bind every interface";
    EXPECT_NE(log.find("of every interface of this machine"), std::string::npos) << log;
#endif
    ::kill(run.launcher(), SIGTERM);
    (void)run.finish();
    fs::remove_all(dir);
}

// A closed terminal stops the run like Ctrl-C: every rank stopped, the reason
// in run.log, an exit code that says which signal.
TEST(LauncherSafety, HangupStopsEveryRankAndSaysWhy) {
    const auto dir = temp_dir("hangup");
    BackgroundRun run(dir, "");
    ASSERT_TRUE(run.wait_for_training()) << read_or_empty(run.out() / "run.log");
    ::kill(run.launcher(), SIGHUP);
    const auto& r = run.finish();
    EXPECT_EQ(r.code, 128 + SIGHUP) << r.output;
    EXPECT_NE(read_or_empty(run.out() / "run.log").find("the terminal closed (SIGHUP)"),
              std::string::npos);
    EXPECT_EQ(test::processes_mentioning(run.out().string()), std::vector<pid_t>{});
    fs::remove_all(dir);
}

// `pipewright run … | head -1`: the pipe closes after the first line; the
// launcher stops its ranks instead of dying on SIGPIPE and orphaning them.
TEST(LauncherSafety, AClosedPipeStopsEveryRankAndSaysWhy) {
    const auto dir = temp_dir("pipe");
    const auto project = write_project(dir, test::MlpSpec{});
    const auto out = dir / "run";
    const std::string cmd = std::string("timeout 120 ") + PIPEWRIGHT_CLI_PATH + " run " +
                            project.string() + " --steps 1000000 --threads-per-rank 1 --out " +
                            out.string() + " 2>&1 | head -1 > " + (dir / "first.txt").string();
    ASSERT_EQ(std::system(cmd.c_str()), 0);
    EXPECT_NE(read_or_empty(dir / "first.txt").find("pipewright: running"), std::string::npos);
    EXPECT_NE(read_or_empty(out / "run.log").find("the output pipe closed (SIGPIPE)"),
              std::string::npos)
        << read_or_empty(out / "run.log");
    EXPECT_EQ(test::processes_mentioning(out.string()), std::vector<pid_t>{});
    fs::remove_all(dir);
}

// What LibTorch prints on its own goes to the run's log; the launcher's own
// lines reach the terminal first and alone.
TEST(StderrCapture, LibraryNoiseGoesToTheLogAndOurLinesToTheTerminal) {
    const auto dir = temp_dir("capture");
    const auto terminal = dir / "terminal.txt";
    const int terminal_fd = ::open(terminal.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ASSERT_GE(terminal_fd, 0);
    const int saved = ::dup(STDERR_FILENO);
    ::dup2(terminal_fd, STDERR_FILENO);
    ::close(terminal_fd);
    {
        backend::StderrCapture capture((dir / "run.log").string());
        const std::string noise = "WARNING: Logging before InitGoogleLogging()\n";
        EXPECT_EQ(::write(STDERR_FILENO, noise.data(), noise.size()),
                  static_cast<ssize_t>(noise.size()));
        capture.terminal() << "pipewright: rank 1 failed\n" << std::flush;
    }
    const std::string after = "after\n";
    EXPECT_EQ(::write(STDERR_FILENO, after.data(), after.size()),
              static_cast<ssize_t>(after.size()));
    ::dup2(saved, STDERR_FILENO);
    ::close(saved);
    EXPECT_EQ(read_or_empty(terminal), "pipewright: rank 1 failed\nafter\n");
    EXPECT_EQ(read_or_empty(dir / "run.log"), "WARNING: Logging before InitGoogleLogging()\n");
    fs::remove_all(dir);
}

// kill -STOP on rank 1: rank 0 times out waiting for it, and the launcher
// blames rank 1, not the rank whose wait ran out. Once in a few full runs
// the stopped rank was ended by a SIGHUP from outside instead (the kernel
// sends one to the stopped members of a process group that becomes
// orphaned); the launcher then names rank 1 as killed, which is as right.
TEST(LauncherSafety, AStoppedRankIsNamedNotItsPeer) {
    const auto dir = temp_dir("stopped");
    BackgroundRun run(dir, "--timeout 5");
    ASSERT_TRUE(run.wait_for_training()) << read_or_empty(run.out() / "run.log");
    ASSERT_EQ(run.ranks().size(), 2U);
    ::kill(run.ranks()[1], SIGSTOP);
    const auto& r = run.finish();
    EXPECT_EQ(r.code, 1) << r.output;
    const bool stopped = r.output.find("rank 1 stopped answering") != std::string::npos;
    const bool hung_up =
        r.output.find("rank 1 failed (killed by signal 1 (Hangup))") != std::string::npos;
    EXPECT_TRUE(stopped || hung_up) << r.output;
    if (!stopped) {
        EXPECT_EQ(r.output.find("rank 0 failed ("), std::string::npos) << r.output;
    }
    EXPECT_EQ(test::processes_mentioning(run.out().string()), std::vector<pid_t>{});
    fs::remove_all(dir);
}

// Data parallelism, rank 3 = replica 1's second rank, killed: its pipeline
// peer and its replica peer (rank 1, through the gradients' all-reduce)
// both lose it; the launcher names rank 3, and stops the rest.
TEST(LauncherSafety, AKilledRankOfReplicaOneIsNamed) {
    const auto dir = temp_dir("dp-killed");
    BackgroundRun run(dir, "--timeout 10", 2);
    ASSERT_TRUE(run.wait_for_training()) << read_or_empty(run.out() / "run.log");
    ASSERT_EQ(run.ranks().size(), 4U);
    ::kill(run.ranks()[3], SIGKILL);
    const auto& r = run.finish();
    EXPECT_EQ(r.code, 1) << r.output;
    EXPECT_NE(r.output.find("rank 3 failed (killed by signal 9"), std::string::npos) << r.output;
    EXPECT_EQ(test::processes_mentioning(run.out().string()), std::vector<pid_t>{});
    fs::remove_all(dir);
}

// kill -STOP on replica 1's first rank: the ranks that time out waiting for
// it (its pipeline peer, its copy in replica 0) are not blamed.
TEST(LauncherSafety, AStoppedRankOfReplicaOneIsNamedNotItsPeers) {
    const auto dir = temp_dir("dp-stopped");
    BackgroundRun run(dir, "--timeout 5", 2);
    ASSERT_TRUE(run.wait_for_training()) << read_or_empty(run.out() / "run.log");
    ASSERT_EQ(run.ranks().size(), 4U);
    ::kill(run.ranks()[2], SIGSTOP);
    const auto& r = run.finish();
    EXPECT_EQ(r.code, 1) << r.output;
    // Usually its heartbeat times out. When another process of its process
    // group exits first, the kernel hangs up on the stopped rank (a stopped
    // member of an orphaned group gets SIGHUP): seen once in CI-like load.
    // Either way the stopped rank is named.
    const bool stopped = r.output.find("rank 2 stopped answering") != std::string::npos;
    const bool hung_up =
        r.output.find("rank 2 failed (killed by signal 1 (Hangup))") != std::string::npos;
    EXPECT_TRUE(stopped || hung_up) << r.output;
    EXPECT_EQ(test::processes_mentioning(run.out().string()), std::vector<pid_t>{});
    fs::remove_all(dir);
}

// Rank 1 of three raises at the start of step 1 while ranks 0 and 2 wait
// for it. Its sockets close as it unwinds, so its peers fail at once with
// "Connection closed by peer", and rank 0 used to be reaped, and blamed,
// first. The launcher names rank 1 and its own reason.
TEST(LauncherSafety, ARankThatRaisesIsBlamedNotThePeersWaitingForIt) {
    const auto dir = temp_dir("raises");
    test::MlpSpec spec;
    spec.ranks = 3;
    spec.stages = 3;
    spec.microbatches = 6;
    spec.batch = 12;
    const auto project = write_project(dir, spec);
    ASSERT_EQ(::setenv("PIPEWRIGHT_TEST_RAISE_ON_RANK", "1", 1), 0);
    const auto r = run_cli("run " + project.string() + " --steps 3 --threads-per-rank 1 --out " +
                               (dir / "run").string(),
                           dir);
    ::unsetenv("PIPEWRIGHT_TEST_RAISE_ON_RANK");
    EXPECT_EQ(r.code, 1) << r.output;
    // Its exit status shows when it has exited by then ("rank 1 failed (exit
    // code 1): …"); its reason, from the store, always does.
    const std::regex blamed("rank 1 failed( \\(exit code 1\\))?: injected failure");
    EXPECT_TRUE(std::regex_search(r.output, blamed)) << r.output;
    EXPECT_EQ(r.output.find("rank 0 failed"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("rank 2 failed"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("rank-1.log"), std::string::npos) << r.output;
    const std::string log = read_or_empty(dir / "run" / "run.log");
    EXPECT_TRUE(std::regex_search(log, blamed)) << log;
    EXPECT_EQ(test::processes_mentioning((dir / "run").string()), std::vector<pid_t>{});
    fs::remove_all(dir);
}

// A project's model name never steers where a run writes.
TEST(LauncherSafety, AModelNameCannotLeaveTheRunsFolder) {
    const auto dir = temp_dir("escape");
    test::MlpSpec spec;
    auto project = nlohmann::json::parse(test::mlp_project_json(spec));
    project["model"]["name"] = "../../escaped";
    const fs::path file = dir / "project.json";
    write_file_atomically(file, project.dump(2));
    const fs::path cwd = dir / "a" / "b";
    fs::create_directories(cwd);
    const std::string cmd = "cd " + cwd.string() + " && " + PIPEWRIGHT_CLI_PATH + " run " +
                            file.string() + " --steps 1 > " + (dir / "out.txt").string() + " 2>&1";
    const int status = std::system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << read_or_empty(dir / "out.txt");
    EXPECT_FALSE(fs::exists(dir / "escaped"));
    EXPECT_FALSE(fs::exists(cwd / "runs" / ".." / ".." / "escaped"));
    std::vector<std::string> runs;
    for (const auto& e : fs::directory_iterator(cwd / "runs")) {
        runs.push_back(e.path().filename().string());
    }
    ASSERT_EQ(runs.size(), 1U);
    EXPECT_EQ(runs[0].rfind("______escaped-", 0), 0U) << runs[0];
    fs::remove_all(dir);
}

// A second run into the same folder would mix its outputs with the first's.
TEST(LauncherSafety, AFolderWithFilesIsReplacedOnlyWhenAsked) {
    const auto dir = temp_dir("overwrite");
    const auto project = write_project(dir, test::MlpSpec{});
    const auto out = dir / "run";
    const std::string args = "run " + project.string() + " --steps 1 --out " + out.string();
    ASSERT_EQ(run_cli(args, dir).code, 0);
    const auto before = fs::last_write_time(out / "metrics.json");

    const auto refused = run_cli(args, dir);
    EXPECT_EQ(refused.code, 1) << refused.output;
    EXPECT_NE(refused.output.find("already holds files"), std::string::npos) << refused.output;
    EXPECT_NE(refused.output.find("--overwrite"), std::string::npos) << refused.output;
    EXPECT_EQ(fs::last_write_time(out / "metrics.json"), before);

    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const auto replaced = run_cli(args + " --overwrite", dir);
    EXPECT_EQ(replaced.code, 0) << replaced.output;
    EXPECT_GT(fs::last_write_time(out / "metrics.json"), before);
    EXPECT_EQ(read_text_file(out / "run.log").find("running"),
              read_text_file(out / "run.log").rfind("running"))
        << "the old run.log was appended to";

    // Only a run's own files are ever removed.
    write_file_atomically(out / "notes.txt", "mine\n");
    const auto foreign = run_cli(args + " --overwrite", dir);
    EXPECT_EQ(foreign.code, 1) << foreign.output;
    EXPECT_NE(foreign.output.find("notes.txt, which no run writes"), std::string::npos)
        << foreign.output;
    EXPECT_TRUE(fs::exists(out / "notes.txt"));
    EXPECT_TRUE(fs::exists(out / "metrics.json"));
    fs::remove_all(dir);
}

// The studio writes the project it runs into the new run folder.
TEST(LauncherSafety, TheProjectBeingRunMayLieInTheRunFolder) {
    const auto dir = temp_dir("studio-layout");
    const auto out = dir / "run";
    fs::create_directories(out);
    const auto project = write_project(out, test::MlpSpec{});
    const auto r = run_cli("run " + project.string() + " --steps 1 --out " + out.string(), dir);
    EXPECT_EQ(r.code, 0) << r.output;
    EXPECT_TRUE(fs::exists(out / "metrics.json"));
    EXPECT_TRUE(fs::exists(project));
    fs::remove_all(dir);
}

TEST(LauncherSafety, ThreadsBeyondTheCoresAreAUsageError) {
    const auto dir = temp_dir("threads");
    const auto project = write_project(dir, test::MlpSpec{});
    const auto r = run_cli("run " + project.string() + " --threads-per-rank 100000", dir);
    EXPECT_EQ(r.code, 2) << r.output;
    EXPECT_NE(r.output.find("--threads-per-rank 100000 is more than this machine's"),
              std::string::npos)
        << r.output;
    EXPECT_LT(r.seconds, 30);
    fs::remove_all(dir);
}

TEST(LauncherSafety, ContradictoryRunOptionsAreUsageErrors) {
    const auto dir = temp_dir("usage");
    const auto project = write_project(dir, test::MlpSpec{});
    for (const std::string options : {"--master foo", "--port 29500 --master 127.0.0.1:29500",
                                      "--nnodes 2 --node-rank 5 --master 127.0.0.1:29500"}) {
        const auto r = run_cli("run " + project.string() + " " + options, dir);
        EXPECT_EQ(r.code, 2) << options << "\n" << r.output;
    }
    fs::remove_all(dir);
}

// A worker that cannot write its log (a full disk) still tells the launcher
// why it failed: the reason goes into the store as well.
TEST(LauncherSafety, AWorkerLeavesItsReasonInTheStore) {
    const auto dir = temp_dir("reason");
    const auto project = write_project(dir, test::MlpSpec{});
    const std::string store_file = (dir / "store").string();
    backend::WorkerOptions o;
    o.settings.project = project.string();
    o.settings.schedule = "no-such-schedule";  // refused once the store is open
    o.rank = 0;
    o.world_size = 2;
    o.store_file = store_file;
    o.out_dir = dir.string();
    std::ostringstream full;
    full.setstate(std::ios::badbit);  // every write fails, as on a full disk
    EXPECT_EQ(backend::run_worker(o, full), 1);
    c10d::FileStore store(store_file, -1);
    ASSERT_TRUE(store.check({backend::keys::failure(0)}));
    const std::string reason = backend::get_text(store, backend::keys::failure(0));
    EXPECT_NE(reason.find("no-such-schedule"), std::string::npos) << reason;
    fs::remove_all(dir);
}

}  // namespace
}  // namespace pipewright
