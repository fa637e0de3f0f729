// Adversarial input through the command line (issue 18). Every file is
// generated here; the large cases are sparse files or devices, never
// committed data.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_test_support.h"
#include "pipewright/core/project_io.h"
#include "report_format.h"

namespace pipewright {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::example;
using testing::run_cli;
using testing::TempDir;

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

json dummy() {
    return json::parse(read_text_file(example("dummy-2gpu.json")));
}

std::string write(const fs::path& path, const std::string& text) {
    std::ofstream(path) << text;
    return path.string();
}

// Runs `body` with the current folder set to `dir`, restored afterwards.
template <typename Body>
void in_folder(const fs::path& dir, Body body) {
    const fs::path before = fs::current_path();
    fs::current_path(dir);
    body();
    fs::current_path(before);
}

TEST(CliInput, DevZeroEndsQuicklyWithAMessage) {
    const auto start = std::chrono::steady_clock::now();
    const auto r = run_cli({"simulate", "/dev/zero"});
    EXPECT_EQ(r.code, 1);
    EXPECT_TRUE(contains(r.err, "/dev/zero: is a device")) << r.err;
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

TEST(CliInput, AGigabyteFileIsRefusedBeforeItIsRead) {
    TempDir dir;
    const fs::path file = dir / "zeros.json";
    { std::ofstream out(file); }
    fs::resize_file(file, std::uintmax_t{3} << 30);  // sparse: no disk, no memory
    const auto r = run_cli({"validate", file.string()});
    EXPECT_EQ(r.code, 1);
    EXPECT_TRUE(contains(r.err, "larger than 256 MiB (268435456 bytes)")) << r.err;
}

TEST(CliInput, DeepNestingIsAMessageNotACrash) {
    TempDir dir;
    std::string text = dummy().dump();
    const std::string anchor = "\"in_features\":20";
    ASSERT_TRUE(contains(text, anchor)) << text;
    text.replace(text.find(anchor), anchor.size(),
                 "\"in_features\":" + std::string(60'000, '[') + std::string(60'000, ']'));
    const auto r = run_cli({"simulate", write(dir / "deep.json", text)});
    EXPECT_EQ(r.code, 1);
    EXPECT_TRUE(contains(r.err, "nested deeper than 64 levels")) << r.err;
}

TEST(CliInput, DuplicateKeysAreProblems) {
    TempDir dir;
    std::string text = dummy().dump();
    const std::string anchor = "\"batch_size\":32";
    ASSERT_TRUE(contains(text, anchor)) << text;
    text.replace(text.find(anchor), anchor.size(), "\"batch_size\":64,\"batch_size\":32");
    const auto r = run_cli({"validate", write(dir / "twice.json", text)});
    EXPECT_EQ(r.code, 1);
    EXPECT_TRUE(contains(r.err, "training.batch_size: appears twice")) << r.err;
}

TEST(CliInput, AbsurdNumbersInAProjectAreRefusedWithTheirRange) {
    TempDir dir;
    json j = dummy();
    j["topology"]["nodes"][0]["containers"][0]["devices"][0]["memory_GiB"] = 9e9;
    j["topology"]["links"]["intra_container"]["bandwidth_GBps"] = 5e-324;
    j["training"]["batch_size"] = std::int64_t{1} << 40;
    const auto r = run_cli({"simulate", write(dir / "absurd.json", j.dump())});
    EXPECT_EQ(r.code, 1);
    EXPECT_TRUE(contains(r.err, "memory_GiB: must be a number from")) << r.err;
    EXPECT_TRUE(contains(r.err, "bandwidth_GBps: must be a number from 0.001")) << r.err;
    EXPECT_TRUE(contains(r.err, "batch_size: must be at most 2147483647, got 1099511627776"))
        << r.err;
    EXPECT_FALSE(contains(r.out + r.err, "inf")) << r.out << r.err;
}

TEST(CliInput, OptionRangesAreSaidInWords) {
    for (const auto& args :
         {std::vector<std::string>{"simulate", example("dummy-2gpu.json"), "-m", "0"},
          std::vector<std::string>{"plan", example("dummy-2gpu.json"), "-m", "0"},
          std::vector<std::string>{"run", example("dummy-2gpu.json"), "--steps", "0"}}) {
        const auto r = run_cli(args);
        EXPECT_EQ(r.code, 2) << r.err;
        EXPECT_TRUE(contains(r.err, "must be at least 1, got 0")) << r.err;
        EXPECT_FALSE(contains(r.err, "1797693")) << r.err;
    }
    auto r = run_cli({"run", example("dummy-2gpu.json"), "--timeout", "0"});
    EXPECT_EQ(r.code, 2);
    EXPECT_TRUE(contains(r.err, "--timeout: must be a number from 0.001 to 604800, got 0"))
        << r.err;
    r = run_cli({"simulate", example("dummy-2gpu.json"), "-m", "3000000000"});
    EXPECT_EQ(r.code, 2);
    EXPECT_TRUE(contains(r.err, "must be at most 2147483647")) << r.err;
}

TEST(CliInput, NanAndInfinityAreNotNumbersHere) {
    for (const char* value : {"nan", "inf", "-nan", "1e999"}) {
        auto r = run_cli({"simulate", example("dummy-2gpu.json"), "--efficiency", value});
        EXPECT_EQ(r.code, 2) << value;
        EXPECT_TRUE(contains(r.err, "--efficiency: must be a number from 0.001 to 1")) << r.err;
        r = run_cli({"run", example("dummy-2gpu.json"), "--timeout", value});
        EXPECT_EQ(r.code, 2) << value;
    }
}

TEST(CliInput, ScheduleCsvOnTheCommandLineStartsFromTheCurrentFolder) {
    // Before: ./sched.csv was looked up next to the project, silently
    // simulating another schedule.
    TempDir dir;
    fs::create_directories(dir / "proj");
    const std::string project = write(dir / "proj" / "project.json", dummy().dump());
    write(dir / "proj" / "sched.csv",
          "0F0,0F1,0B0,0B1\n1F0,1F1,1B0,1B1\n");  // 2 micro-batches: the wrong file
    write(dir / "sched.csv", "0F0,0F1,0F2,0F3,0B0,0B1,0B2,0B3\n1F0,1B0,1F1,1B1,1F2,1B2,1F3,1B3\n");
    in_folder(dir / "", [&] {
        const auto r = run_cli({"simulate", "proj/project.json", "--schedule-csv", "./sched.csv"});
        ASSERT_EQ(r.code, 0) << r.err;
        EXPECT_TRUE(contains(r.out, "4 micro-batches of 8")) << r.out;
    });
}

TEST(CliInput, AProfileOfAnotherModelIsReported) {
    TempDir dir;
    const json profile = {{"format", "pipewright-profile"},
                          {"version", 1},
                          {"microbatch_size", 8},
                          {"layers",
                           {{{"name", "conv1"},
                             {"forward_ms", 1},
                             {"backward_input_ms", 1},
                             {"backward_weight_ms", 1}}}},
                          {"transfer", {{"bandwidth_GBps", 1}, {"latency_us", 10}}}};
    const std::string file = write(dir / "other.json", profile.dump());
    const auto r = run_cli({"simulate", example("dummy-2gpu.json"), "--profile", file});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_TRUE(contains(r.err, "warning: the profile measured none of the model's 3 layers"))
        << r.err;
    EXPECT_TRUE(contains(r.out,
                         "Costs       0 of 3 layers and the transfers from the profile; "
                         "analytic estimate for net0, relu, net1"))
        << r.out;
    const auto fine = run_cli({"simulate", example("dummy-2gpu.json")});
    EXPECT_FALSE(contains(fine.out, "Costs")) << fine.out;
}

TEST(CliInput, ControlCharactersInNamesNeverReachTheTerminal) {
    TempDir dir;
    json j = dummy();
    j["model"]["name"] = "evil\x1b]0;title\x07\nFAKE LINE";
    j["topology"]["nodes"][0]["name"] = "n\x1b[2J";
    j["placement"][0]["device"] = "n\x1b[2J/c0/gpu0";
    j["placement"][1]["device"] = "n\x1b[2J/c0/gpu1";
    const std::string file = write(dir / "names.json", j.dump());
    auto r = run_cli({"simulate", file});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_FALSE(contains(r.out, "\x1b")) << r.out;
    EXPECT_FALSE(contains(r.out, "\nFAKE LINE")) << r.out;
    EXPECT_TRUE(contains(r.out, "evil\\x1b]0;title\\x07\\nFAKE LINE")) << r.out;
    EXPECT_TRUE(contains(r.out, "n\\x1b[2J/c0/gpu0")) << r.out;

    // In diagnostics too: a layer name used twice is quoted in the message.
    j["model"]["layers"][1]["name"] = "net0\x1b[31m";
    j["model"]["layers"][2]["name"] = "net0\x1b[31m";
    r = run_cli({"validate", write(dir / "twice.json", j.dump())});
    EXPECT_EQ(r.code, 1);
    EXPECT_FALSE(contains(r.err, "\x1b")) << r.err;
    EXPECT_TRUE(contains(r.err, "net0\\x1b[31m")) << r.err;
}

TEST(CliInput, ANonFiniteResultIsNeverPrintedAsAFigure) {
    // A bandwidth of 5e-324 printed "inf min" and "-nan %". The readers now
    // refuse such input; should a result still not be finite, it says so.
    SimulationReport r;
    r.schedule = "gpipe";
    r.iteration_time_s = std::numeric_limits<double>::infinity();
    r.bubble_fraction = std::numeric_limits<double>::quiet_NaN();
    DeviceMetrics d;
    d.name = "gpu0";
    d.end_s = r.iteration_time_s;
    r.devices.push_back(d);
    std::ostringstream out;
    cli::print_report(out, r, "p");
    EXPECT_TRUE(contains(out.str(), "Iteration   (infinite)")) << out.str();
    EXPECT_TRUE(contains(out.str(), "bubble (not a number)")) << out.str();
    EXPECT_TRUE(contains(out.str(), "Warning     some figures are not finite")) << out.str();
    EXPECT_FALSE(contains(out.str(), "inf ")) << out.str();
    EXPECT_FALSE(contains(out.str(), "nan")) << out.str();
}

}  // namespace
}  // namespace pipewright
