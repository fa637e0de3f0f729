// The run folder's records as types: what the worker writes, the launcher
// and the studio read back the same, and a malformed record names its field.

#include "pipewright/core/run_records.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

namespace pipewright {
namespace {

RankRecord sample_record() {
    RankRecord r;
    r.rank = 1;
    r.threads = 2;
    r.clock = "boot-id";
    r.device = "cuda:1";
    r.device_name = "NVIDIA H200";
    r.memory_kind = "cuda_allocated";
    r.peak_memory_bytes = 123'456'789'012;
    r.runtime_memory_bytes = 4096;
    for (int k = 0; k < 2; ++k) {
        RecordedStep s;
        s.step = k;
        s.start_s = 10.5 + k;
        s.end_s = 10.75 + k;
        if (k == 1) {
            s.loss = 0.25;
        }
        s.events.push_back({1, *parse_action("1RECV_F0"), 10.5, 10.6, 2048, 0});
        s.events.push_back({1, *parse_action("1F0"), 10.6, 10.7, 0, -1});
        s.memory = {{10.5, 100}, {10.7, 300}};
        r.steps.push_back(s);
    }
    return r;
}

std::string error_of(const std::string& text) {
    try {
        (void)parse_rank_record(text, "rank-1.json");
    } catch (const InputError& e) {
        return e.what();
    }
    return "(no error)";
}

TEST(RunRecords, ARankRecordRoundTrips) {
    const RankRecord r = sample_record();
    EXPECT_EQ(parse_rank_record(to_json(r).dump(), "rank-1.json"), r);
}

// DualPipeV's overlapped pairs reach the measured timeline with their mark.
TEST(RunRecords, AnOverlappedPairKeepsItsMark) {
    RankRecord r = sample_record();
    Action f{1, ActionType::forward, 1, true};
    r.steps[0].events.push_back({1, f, 10.7, 10.8, 0, -1});
    r.steps[0].events.push_back({1, *parse_action("1B0"), 10.8, 10.9, 0, -1});
    const RankRecord back = parse_rank_record(to_json(r).dump(), "rank-1.json");
    const auto& events = back.steps[0].events;
    ASSERT_EQ(events.size(), 4U);
    EXPECT_TRUE(events[2].action.overlaps_next);
    EXPECT_FALSE(events[3].action.overlaps_next);
    EXPECT_FALSE(events[1].action.overlaps_next);
}

TEST(RunRecords, TheRankRecordKeepsItsFileFormat) {
    // Field names that earlier runs wrote, read by older studios.
    const nlohmann::json j = to_json(sample_record());
    EXPECT_EQ(j.at("peak_rss_bytes"), 123'456'789'012);
    EXPECT_EQ(j.at("runtime_rss_bytes"), 4096);
    EXPECT_EQ(j.at("steps")[0].at("events")[0].at("action"), "1RECV_F0");
    EXPECT_EQ(j.at("steps")[0].at("memory")[1], nlohmann::json::array({10.7, 300}));
    EXPECT_FALSE(j.at("steps")[0].contains("loss"));
    EXPECT_EQ(j.at("steps")[1].at("loss"), 0.25);
}

TEST(RunRecords, AnUnreadableActionIsAnErrorNotADefaultAction) {
    nlohmann::json j = to_json(sample_record());
    j["steps"][1]["events"][0]["action"] = "1F";
    const std::string e = error_of(j.dump());
    EXPECT_NE(e.find("rank-1.json: steps[1].events[0].action: \"1F\" is not an action"),
              std::string::npos)
        << e;
}

TEST(RunRecords, EveryProblemIsNamedWithItsPath) {
    nlohmann::json j = to_json(sample_record());
    j["threads"] = 0;
    j["steps"][0]["events"][1]["end_s"] = 10.0;
    j["steps"][0]["memory"][0] = "lots";
    j.erase("clock");
    j["colour"] = "blue";
    const std::string e = error_of(j.dump());
    for (const char* expected :
         {"rank-1.json: threads:", "rank-1.json: steps[0].events[1].end_s: ends before it starts",
          "rank-1.json: steps[0].memory[0]: expected [time in seconds, bytes]",
          "rank-1.json: clock: missing", "rank-1.json: colour"}) {
        EXPECT_NE(e.find(expected), std::string::npos) << expected << "\n" << e;
    }
}

TEST(RunRecords, TruncatedOrWrongFilesAreErrors) {
    const std::string text = to_json(sample_record()).dump();
    EXPECT_NE(error_of(text.substr(0, text.size() / 2)).find("rank-1.json: (document)"),
              std::string::npos);
    EXPECT_NE(error_of("[1, 2]").find("expected a JSON object"), std::string::npos);
    EXPECT_NE(error_of(R"({"format": "pipewright-timeline"})").find("rank-1.json: rank: missing"),
              std::string::npos);
}

RunMetrics sample_metrics() {
    RunMetrics m;
    m.iteration_time_s = 0.03;
    m.throughput_samples_per_s = 2000;
    m.timeline_step = 1;
    for (int k = 0; k < 2; ++k) {
        RunStepMetrics s;
        s.step = k;
        s.iteration_time_s = 0.03 + k * 0.001;
        s.loss = k == 0 ? std::nullopt : std::optional<double>(1.5);
        s.samples_per_s = 2000;
        s.peak_memory_bytes = {100, 200};
        s.warmup = k == 0;
        m.steps.push_back(s);
    }
    RunDeviceMetrics d;
    d.rank = 0;
    d.name = "localhost/proc/cpu0";
    d.busy_s = 0.01;
    d.end_s = 0.03;
    d.bubble_fraction = 0.6;
    d.peak_memory_bytes = 1 << 20;
    m.devices = {d};
    return m;
}

TEST(RunRecords, MetricsAndSummaryRoundTrip) {
    const RunMetrics m = sample_metrics();
    Diagnostics problems;
    EXPECT_EQ(read_run_metrics(to_json(m), problems), m) << problems.format();

    RunSummary s;
    s.schedule = "1f1b";
    s.batch_size = 64;
    s.microbatches = 4;
    s.microbatch_size = 16;
    s.steps = 2;
    s.warmup_steps = 1;
    s.iteration_time_s = 0.03;
    s.clock = "shared";
    s.losses = {std::nullopt, 1.5};
    s.devices = m.devices;
    s.out_dir = "runs/x";
    s.complete = false;
    s.nnodes = 2;
    s.node_rank = 1;
    EXPECT_EQ(parse_run_summary(to_json(s).dump(), "summary.json"), s);
}

TEST(RunRecords, AnyLossIsKeptNonFiniteOnesByName) {
    RankRecord r = sample_record();
    r.steps[0].loss = 3e300;  // a run that diverged is still a run
    EXPECT_EQ(parse_rank_record(to_json(r).dump(), "rank-1.json"), r);
    // NaN and infinities are training outcomes, not "no loss" (null):
    // written by name, read back as themselves.
    r.steps[0].loss = std::numeric_limits<double>::quiet_NaN();
    EXPECT_EQ(to_json(r)["steps"][0]["loss"], "NaN");
    RankRecord read = parse_rank_record(to_json(r).dump(), "rank-1.json");
    ASSERT_TRUE(read.steps[0].loss.has_value());
    EXPECT_TRUE(std::isnan(*read.steps[0].loss));
    for (const double inf :
         {std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()}) {
        r.steps[0].loss = inf;
        read = parse_rank_record(to_json(r).dump(), "rank-1.json");
        ASSERT_TRUE(read.steps[0].loss.has_value());
        EXPECT_EQ(*read.steps[0].loss, inf);
    }
    // Another string is a problem named with its path.
    auto j = to_json(r);
    j["steps"][0]["loss"] = "lots";
    EXPECT_THROW((void)parse_rank_record(j.dump(), "rank-1.json"), InputError);
    // The summary's losses too.
    RunSummary s;
    s.losses = {1.5, std::numeric_limits<double>::quiet_NaN(), std::nullopt};
    const auto losses = to_json(s)["losses"];
    EXPECT_EQ(losses, nlohmann::json::parse(R"([1.5, "NaN", null])"));
}

TEST(RunRecords, MetricsThatPointPastTheirStepsAreAnError) {
    nlohmann::json j = to_json(sample_metrics());
    j["timeline_step"] = 5;
    j["devices"][0]["bubble_fraction"] = 1.5;
    Diagnostics problems;
    EXPECT_FALSE(read_run_metrics(j, problems));
    EXPECT_TRUE(problems.mentions("timeline_step")) << problems.format();
    EXPECT_TRUE(problems.mentions("devices[0].bubble_fraction")) << problems.format();
}

}  // namespace
}  // namespace pipewright
