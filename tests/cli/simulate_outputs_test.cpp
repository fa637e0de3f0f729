// Issue 18: --trace and --timeline are streamed to disk, and a file estimated
// larger than --max-output-size is refused (none written) with its size and
// the option to go on; running out of memory ends with a message, not an abort.

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cstdlib>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli_test_support.h"
#include "simulate_outputs.h"

namespace pipewright {
namespace {

using testing::example;
using testing::run_cli;
using testing::TempDir;

std::string read_text(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

TEST(SimulateOutputs, ByteSizesReadWithTheirUnits) {
    using cli::parse_byte_size;
    EXPECT_EQ(parse_byte_size("0"), 0u);
    EXPECT_EQ(parse_byte_size("123456"), 123456u);
    EXPECT_EQ(parse_byte_size("10B"), 10u);
    EXPECT_EQ(parse_byte_size("2KiB"), 2048u);
    EXPECT_EQ(parse_byte_size("2k"), 2048u);
    EXPECT_EQ(parse_byte_size("2kB"), 2000u);
    EXPECT_EQ(parse_byte_size("1.5GiB"), 1610612736u);
    EXPECT_EQ(parse_byte_size("4gib"), 4294967296u);
    EXPECT_EQ(parse_byte_size("500MB"), 500000000u);
    EXPECT_EQ(parse_byte_size("1TB"), 1000000000000u);
    for (const char* bad : {"", "GiB", "-1", "1 GiB", "1XB", "nan", "inf", "1e3", "9e99TiB"}) {
        EXPECT_FALSE(parse_byte_size(bad).has_value()) << bad;
    }
}

TEST(SimulateOutputs, AnOutputOverTheLimitIsRefusedWithItsSizeAndTheWayOn) {
    TempDir dir;
    const auto trace = dir / "trace.json";
    const auto timeline = dir / "timeline.json";
    auto r = run_cli({"simulate", example("seven-layers-two-nodes.json"), "--trace", trace.string(),
                      "--timeline", timeline.string(), "--max-output-size", "1KiB"});
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_NE(r.err.find("the trace " + trace.string() + " would take about"), std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("more than the limit of 1.00 KiB"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("pass --max-output-size 1MiB"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("the timeline"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(trace));
    EXPECT_FALSE(std::filesystem::exists(timeline));
    EXPECT_TRUE(std::filesystem::is_empty(dir / ""));  // no temporary file left either
    EXPECT_TRUE(r.out.empty()) << r.out;

    // Raised as the message says, both files are written.
    r = run_cli({"simulate", example("seven-layers-two-nodes.json"), "--trace", trace.string(),
                 "--timeline", timeline.string(), "--max-output-size", "1MiB"});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_TRUE(nlohmann::json::parse(read_text(trace)).contains("traceEvents"));
    EXPECT_EQ(nlohmann::json::parse(read_text(timeline))["format"], "pipewright-timeline");
}

TEST(SimulateOutputs, AnUnreadableSizeIsAUsageError) {
    auto r = run_cli({"simulate", example("dummy-2gpu.json"), "--max-output-size", "lots"});
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("expected a size such as 4GiB"), std::string::npos) << r.err;
}

TEST(SimulateOutputs, StreamedFilesAreOneLineOfCompactJsonAsBefore) {
    TempDir dir;
    const auto trace = dir / "trace.json";
    const auto timeline = dir / "timeline.json";
    auto r = run_cli({"simulate", example("resnet50-2gpu-pipelined.json"), "--trace",
                      trace.string(), "--timeline", timeline.string()});
    ASSERT_EQ(r.code, 0) << r.err;
    const std::string trace_text = read_text(trace);
    const std::string timeline_text = read_text(timeline);
    // What dump() of the parsed document gives, plus the final newline.
    EXPECT_EQ(trace_text, nlohmann::json::parse(trace_text).dump() + "\n");
    EXPECT_EQ(timeline_text, nlohmann::json::parse(timeline_text).dump() + "\n");
}

// The address space (KiB) the program holds once started: with LibTorch
// linked it is far more than without. Measured on a `validate` that waits
// for its input on a pipe (a limit found by trying is no good: some limits
// below this one make OpenBLAS's start-up spin).
long address_space_to_start_kib() {
    int input[2];
    if (::pipe(input) != 0) {
        return 0;
    }
    const pid_t child = ::fork();
    if (child == 0) {
        ::dup2(input[0], STDIN_FILENO);
        ::close(input[0]);
        ::close(input[1]);
        const int null = ::open("/dev/null", O_WRONLY);
        ::dup2(null, STDOUT_FILENO);
        ::dup2(null, STDERR_FILENO);
        ::execl(PIPEWRIGHT_CLI_PATH, PIPEWRIGHT_CLI_PATH, "validate", "/dev/stdin",
                static_cast<char*>(nullptr));
        ::_exit(127);
    }
    ::close(input[0]);
    const auto peak_kib = [child] {
        std::ifstream status("/proc/" + std::to_string(child) + "/status");
        for (std::string line; std::getline(status, line);) {
            if (line.rfind("VmPeak:", 0) == 0) {
                return std::stol(line.substr(7));
            }
        }
        return 0L;
    };
    // Settled: the same peak for half a second (it is blocked reading).
    long peak = 0;
    int steady = 0;
    for (int i = 0; i < 600 && steady < 10; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        const long now = peak_kib();
        steady = now == peak && now > 0 ? steady + 1 : 0;
        peak = now;
    }
    ::close(input[1]);
    int status = 0;
    ::waitpid(child, &status, 0);
    return peak;
}

TEST(SimulateOutputs, RunningOutOfMemoryEndsWithAMessageAndExitOne) {
#if defined(__SANITIZE_ADDRESS__)
    GTEST_SKIP() << "AddressSanitizer reserves more address space than the limit below";
#endif
#if defined(__SANITIZE_THREAD__)
    GTEST_SKIP() << "ThreadSanitizer maps its shadow memory at fixed addresses and does not "
                    "start under an address-space limit";
#endif
    const long start_kib = address_space_to_start_kib();
    ASSERT_GT(start_kib, 0);
    // 8 million (stage, micro-batch) pairs need about 600 MB; 200 MB more
    // than the start needs makes the allocation fail, which used to abort.
    const std::string command =
        "ulimit -v " + std::to_string(start_kib + 200 * 1024) + "; exec '" + PIPEWRIGHT_CLI_PATH +
        "' simulate '" + example("resnet50-2gpu-pipelined.json") + "' -m 4000000 -b 4000000 2>&1";
    FILE* pipe = ::popen(command.c_str(), "r");
    ASSERT_NE(pipe, nullptr);
    std::string output;
    char buffer[256];
    while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) {
        output += buffer;
    }
    const int status = ::pclose(pipe);
    ASSERT_TRUE(WIFEXITED(status)) << output;
    EXPECT_EQ(WEXITSTATUS(status), 1) << output;
    EXPECT_NE(output.find("pipewright: out of memory: "), std::string::npos) << output;
}

// An output that is an input (the same file, by any path or link) or
// another output is refused before any work, and the input is untouched.
TEST(SimulateOutputs, AnOutputThatIsAnInputIsRefusedAndTheInputKept) {
    TempDir dir;
    const auto project = dir / "p.json";
    std::filesystem::copy_file(example("mlp-cpu.json"), project);
    const std::string before = read_text(project);
    std::filesystem::create_symlink(project, dir / "link.json");
    for (const char* option : {"--trace", "--timeline", "--export-csv"}) {
        for (const auto& target : {project, dir / "link.json", dir / "." / "p.json"}) {
            const auto r = run_cli({"simulate", project.string(), option, target.string()});
            EXPECT_EQ(r.code, 2) << option << " " << target << "\n" << r.err;
            EXPECT_NE(r.err.find("is the project this command reads"), std::string::npos) << r.err;
            EXPECT_EQ(read_text(project), before) << option << " " << target;
        }
    }
    // A profile given as input, written over by --timeline.
    const auto profile = dir / "prof.json";
    { std::ofstream(profile) << "{}"; }
    auto r = run_cli({"simulate", project.string(), "--profile", profile.string(), "--timeline",
                      profile.string()});
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("is the --profile this command reads"), std::string::npos) << r.err;
    EXPECT_EQ(read_text(profile), "{}");
    // Two outputs in one file.
    r = run_cli({"simulate", project.string(), "--trace", (dir / "t.json").string(), "--timeline",
                 (dir / "t.json").string()});
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("--trace and --timeline name the same file"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir / "t.json"));
    // Distinct files are written as before.
    r = run_cli({"simulate", project.string(), "--trace", (dir / "t.json").string(), "--timeline",
                 (dir / "tl.json").string()});
    EXPECT_EQ(r.code, 0) << r.err;
}

}  // namespace
}  // namespace pipewright
