// The files `simulate --profile` and `compare` read, broken in the ways files
// break: malformed, cut short, empty, of another kind, too large. Each ends
// in exit code 1 and a message that names the file and says what is wrong,
// in the words of every reader (json_reader.h). Every file is generated here.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_test_support.h"
#include "pipewright/core/input_file.h"
#include "pipewright/core/profile.h"

namespace pipewright {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::CliResult;
using testing::example;
using testing::run_cli;
using testing::TempDir;

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

std::string write(const fs::path& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
    return path.string();
}

std::string valid_profile() {
    Profile p;
    p.microbatch_size = 8;
    p.layers = {{"net0", 1.0, 0.5, 0.5, std::nullopt, std::nullopt, std::nullopt}};
    return profile_to_json(p).dump(2);
}

// A simulated timeline of the dummy example, as `simulate --timeline` writes it.
std::string valid_timeline(const TempDir& dir) {
    const fs::path file = dir / "simulated.json";
    const auto r = run_cli({"simulate", example("dummy-2gpu.json"), "--timeline", file.string()});
    EXPECT_EQ(r.code, 0) << r.err;
    return read_text_file(file);
}

CliResult simulate_with_profile(const std::string& profile) {
    return run_cli({"simulate", example("dummy-2gpu.json"), "--profile", profile});
}

// `compare` with the broken file as the measured timeline, then as the
// simulated one: both refuse it the same way.
void expect_compare_refuses(const std::string& good, const std::string& bad,
                            const std::string& message) {
    for (const auto& args : {std::vector<std::string>{"compare", good, bad},
                             std::vector<std::string>{"compare", bad, good}}) {
        const auto r = run_cli(args);
        EXPECT_EQ(r.code, 1) << r.out << r.err;
        EXPECT_TRUE(contains(r.err, message)) << r.err;
        EXPECT_TRUE(r.out.empty()) << r.out;
    }
}

TEST(CliFiles, AValidProfileAndTimelineAreRead) {
    TempDir dir;
    auto r = simulate_with_profile(write(dir / "profile.json", valid_profile()));
    EXPECT_EQ(r.code, 0) << r.err;
    const std::string timeline = write(dir / "t.json", valid_timeline(dir));
    r = run_cli({"compare", timeline, timeline});
    EXPECT_EQ(r.code, 0) << r.err;
}

// Timelines of other devices or another schedule do not correspond action
// by action: refused in words unless --force says the user means it.
TEST(CliFiles, CompareRefusesUnrelatedTimelinesUnlessForced) {
    TempDir dir;
    const std::string dummy = (dir / "dummy.json").string();
    const std::string mlp = (dir / "mlp.json").string();
    const std::string mlp_gpipe = (dir / "mlp-gpipe.json").string();
    ASSERT_EQ(run_cli({"simulate", example("dummy-2gpu.json"), "--timeline", dummy}).code, 0);
    ASSERT_EQ(run_cli({"simulate", example("mlp-cpu.json"), "--timeline", mlp}).code, 0);
    ASSERT_EQ(run_cli({"simulate", example("mlp-cpu.json"), "--schedule", "gpipe", "--timeline",
                       mlp_gpipe})
                  .code,
              0);
    // The dummy example's gpipe on GPUs against mlp's 1f1b on CPUs: the
    // schedules are named first; with the schedule matched, the devices.
    auto r = run_cli({"compare", dummy, mlp});
    EXPECT_EQ(r.code, 1) << r.out;
    EXPECT_TRUE(contains(r.err, "runs gpipe and the measured one 1f1b")) << r.err;
    r = run_cli({"compare", dummy, mlp_gpipe});
    EXPECT_EQ(r.code, 1) << r.out;
    EXPECT_TRUE(contains(r.err, "has no lane in the measured one")) << r.err;
    EXPECT_TRUE(contains(r.err, "--force")) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    r = run_cli({"compare", mlp_gpipe, mlp});
    EXPECT_EQ(r.code, 1) << r.out;
    EXPECT_TRUE(contains(r.err, "runs gpipe and the measured one 1f1b")) << r.err;
    r = run_cli({"compare", mlp, mlp});
    EXPECT_EQ(r.code, 0) << r.err;
    r = run_cli({"compare", mlp_gpipe, mlp, "--force"});
    EXPECT_EQ(r.code, 0) << r.err;
}

// Several runs: each figure's median, its spread, and whether the simulation
// lies within it (issue 30). Simulations at other efficiencies stand in for
// noisy runs of the same project.
TEST(CliFiles, CompareOfSeveralRunsGivesTheSpread) {
    TempDir dir;
    const std::string sim = (dir / "sim.json").string();
    ASSERT_EQ(
        run_cli({"simulate", example("mlp-cpu.json"), "--efficiency", "0.5", "--timeline", sim})
            .code,
        0);
    std::vector<std::string> runs;
    for (const char* e : {"0.45", "0.6", "0.55"}) {
        runs.push_back((dir / (std::string("run-") + e + ".json")).string());
        ASSERT_EQ(run_cli({"simulate", example("mlp-cpu.json"), "--efficiency", e, "--timeline",
                           runs.back()})
                      .code,
                  0);
    }
    auto r = run_cli({"compare", sim, runs[0], runs[1], runs[2], "--json"});
    ASSERT_EQ(r.code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["measured"].size(), 3U);
    const auto& iteration = j["rows"][0];
    EXPECT_EQ(iteration["what"], "iteration time");
    EXPECT_EQ(iteration["runs"], 3);
    const double lo = iteration["measured_min_s"], hi = iteration["measured_max_s"],
                 median = iteration["measured_s"], simulated = iteration["simulated_s"];
    EXPECT_LT(lo, median);
    EXPECT_LT(median, hi);
    // At 0.5 of peak the simulation lies between the runs at 0.45 and 0.6.
    EXPECT_TRUE(iteration["within_spread"].get<bool>());
    EXPECT_GE(simulated, lo);
    EXPECT_LE(simulated, hi);
    r = run_cli({"compare", sim, runs[0], runs[1]});
    ASSERT_EQ(r.code, 0) << r.err;
    for (const char* text : {"vs 2 measured runs", "run to run", "within"}) {
        EXPECT_TRUE(contains(r.out, text)) << text << "\n" << r.out;
    }
    // A run of another schedule among them is named.
    const std::string gpipe = (dir / "gpipe.json").string();
    ASSERT_EQ(
        run_cli({"simulate", example("mlp-cpu.json"), "--schedule", "gpipe", "--timeline", gpipe})
            .code,
        0);
    r = run_cli({"compare", sim, runs[0], gpipe});
    EXPECT_EQ(r.code, 1);
    EXPECT_TRUE(contains(r.err, "gpipe.json: the simulated timeline runs 1f1b")) << r.err;
}

// A profile of the same layer names at other sizes warns; --strict refuses
// it, and a profile that fits passes --strict.
TEST(CliFiles, AProfileOfOtherSizesWarnsAndStrictRefusesIt) {
    TempDir dir;
    Profile p;
    p.microbatch_size = 8;
    p.layers = {{"net0", 1.0, 0.5, 0.5, std::nullopt, std::nullopt, std::nullopt},
                {"relu", 0.1, 0.1, 0, std::nullopt, std::nullopt, std::nullopt},
                {"net1", 1.0, 0.5, 0.5, std::nullopt, std::nullopt, std::nullopt}};
    p.layers[0].parameters = 3;  // not the example's
    const std::string resized = write(dir / "resized.json", profile_to_json(p).dump());
    auto r = run_cli({"simulate", example("dummy-2gpu.json"), "--profile", resized});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_TRUE(contains(r.err,
                         "warning: the profile measured 1 layer of the same name at "
                         "other sizes: net0 (3 parameters when profiled"))
        << r.err;
    for (const char* command : {"simulate", "plan"}) {
        r = run_cli({command, example("dummy-2gpu.json"), "--profile", resized, "--strict"});
        EXPECT_EQ(r.code, 1) << command << ": " << r.out;
        EXPECT_TRUE(contains(r.err, "--strict: the profile does not fit the model")) << r.err;
    }
    p.layers[0].parameters.reset();
    const std::string fits = write(dir / "fits.json", profile_to_json(p).dump());
    r = run_cli({"simulate", example("dummy-2gpu.json"), "--profile", fits, "--strict"});
    EXPECT_EQ(r.code, 0) << r.err;
}

TEST(CliFiles, MalformedFilesNameTheLineAndColumn) {
    TempDir dir;
    const std::string text = "{\"format\": \"pipewright-profile\",\n  \"version\": 1,\n  oops\n}\n";
    auto r = simulate_with_profile(write(dir / "profile.json", text));
    EXPECT_EQ(r.code, 1);
    EXPECT_TRUE(contains(r.err, "profile.json: (document): not valid JSON at line 3, column 3"))
        << r.err;
    const std::string good = write(dir / "t.json", valid_timeline(dir));
    expect_compare_refuses(good, write(dir / "bad.json", text),
                           "not valid JSON at line 3, column 3");
}

TEST(CliFiles, TruncatedAndEmptyFilesAreNotJson) {
    TempDir dir;
    const std::string profile = valid_profile();
    const std::string timeline = valid_timeline(dir);
    auto r = simulate_with_profile(write(dir / "cut-profile.json", profile.substr(0, 40)));
    EXPECT_EQ(r.code, 1);
    EXPECT_TRUE(contains(r.err, "cut-profile.json: (document): not valid JSON")) << r.err;
    // An empty file is said to be empty, not "unexpected end of input".
    r = simulate_with_profile(write(dir / "cut-profile.json", ""));
    EXPECT_EQ(r.code, 1);
    EXPECT_TRUE(contains(r.err, "cut-profile.json: (document): the file is empty")) << r.err;
    r = simulate_with_profile(write(dir / "cut-profile.json", " \n\t\n"));
    EXPECT_TRUE(contains(r.err, "the file holds only white space")) << r.err;
    const std::string good = write(dir / "t.json", timeline);
    expect_compare_refuses(good, write(dir / "cut.json", timeline.substr(0, timeline.size() / 2)),
                           "not valid JSON");
    expect_compare_refuses(good, write(dir / "cut.json", ""), "the file is empty");
}

TEST(CliFiles, AFileOfAnotherKindIsNamedAsSuch) {
    TempDir dir;
    const std::string timeline = write(dir / "t.json", valid_timeline(dir));
    const std::string profile = write(dir / "p.json", valid_profile());
    auto r = simulate_with_profile(timeline);
    EXPECT_EQ(r.code, 1);
    EXPECT_TRUE(contains(
        r.err, "t.json: format: must be \"pipewright-profile\", got \"pipewright-timeline\""))
        << r.err;
    // One problem: the fields of a timeline are not reported one by one.
    EXPECT_TRUE(contains(r.err, ": 1 problem:")) << r.err;
    r = simulate_with_profile(example("dummy-2gpu.json"));
    EXPECT_EQ(r.code, 1);
    EXPECT_TRUE(contains(r.err, "got \"pipewright-project\"")) << r.err;

    expect_compare_refuses(timeline, profile,
                           "format: must be \"pipewright-timeline\", got \"pipewright-profile\"");
    expect_compare_refuses(timeline, example("dummy-2gpu.json"),
                           "format: must be \"pipewright-timeline\", got \"pipewright-project\"");
    expect_compare_refuses(timeline, write(dir / "list.json", "[1, 2]"),
                           "(document): expected a JSON object, got an array [1,2]");
    expect_compare_refuses(timeline, write(dir / "none.json", "{\"events\": []}"),
                           "format: missing: not a pipewright-timeline file");
}

TEST(CliFiles, HugeFilesAreRefusedBeforeTheyAreRead) {
    TempDir dir;
    const fs::path huge = dir / "huge.json";
    { std::ofstream out(huge); }
    fs::resize_file(huge, std::uintmax_t{3} << 30);  // sparse: no disk, no memory
    auto r = simulate_with_profile(huge.string());
    EXPECT_EQ(r.code, 1);
    EXPECT_TRUE(contains(r.err, "larger than 256 MiB (268435456 bytes)")) << r.err;
    const std::string good = write(dir / "t.json", valid_timeline(dir));
    expect_compare_refuses(good, huge.string(), "larger than 256 MiB (268435456 bytes)");
}

TEST(CliFiles, AFolderOrAMissingFileIsAMessage) {
    TempDir dir;
    const std::string good = write(dir / "t.json", valid_timeline(dir));
    fs::create_directories(dir / "run");
    expect_compare_refuses(good, (dir / "run").string(), "timeline.json");
    expect_compare_refuses(good, (dir / "absent.json").string(), "absent.json");
    const auto r = simulate_with_profile((dir / "absent.json").string());
    EXPECT_EQ(r.code, 1);
    EXPECT_TRUE(contains(r.err, "absent.json")) << r.err;
}

TEST(CliFiles, ProblemsInsideAFileNameTheirJsonPath) {
    TempDir dir;
    json profile = json::parse(valid_profile());
    profile["layers"][0]["forward_ms"] = -1;
    profile["layers"][0]["name"] = 7;
    auto r = simulate_with_profile(write(dir / "p.json", profile.dump()));
    EXPECT_EQ(r.code, 1);
    EXPECT_TRUE(contains(r.err, "p.json: layers[0].name: expected a string, got the number 7"))
        << r.err;
    EXPECT_TRUE(contains(r.err,
                         "p.json: layers[0].forward_ms: must be a number from 0 to "
                         "1000000000, got -1"))
        << r.err;

    json timeline = json::parse(valid_timeline(dir));
    timeline["events"][0]["rank"] = "zero";
    timeline["num_stages"] = -2;
    expect_compare_refuses(write(dir / "t.json", valid_timeline(dir)),
                           write(dir / "bad.json", timeline.dump()),
                           "num_stages: must be at least 0, got -2");
    expect_compare_refuses(write(dir / "t.json", valid_timeline(dir)),
                           write(dir / "bad.json", timeline.dump()),
                           "events[0].rank: expected a whole number, got the string \"zero\"");
}

}  // namespace
}  // namespace pipewright
