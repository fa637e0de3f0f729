#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <string>

#include "pipewright/core/diagnostics.h"
#include "pipewright/core/inner_waits.h"
#include "pipewright/core/output_file.h"
#include "pipewright/core/project_io.h"
#include "pipewright/core/timeline.h"
#include "pipewright/core/timeline_metrics.h"

namespace pipewright {
namespace {

Action act(const char* text) {
    auto a = parse_action(text);
    EXPECT_TRUE(a.has_value()) << text;
    return a.value_or(Action{});
}

TimelineEvent ev(int rank, const char* action, double start_s, double end_s, double bytes = 0,
                 int peer = -1) {
    TimelineEvent e;
    e.rank = rank;
    e.action = act(action);
    e.start_s = start_s;
    e.end_s = end_s;
    e.bytes = bytes;
    e.peer_rank = peer;
    return e;
}

// GPipe over two ranks and two micro-batches, with every transfer.
Timeline sample_timeline() {
    Timeline t;
    t.source = "simulated";
    t.schedule = "gpipe";
    t.num_stages = 2;
    t.num_microbatches = 2;
    t.devices = {"node0/c0/gpu0", "node0/c0/gpu1"};
    const double ms = 1e-3;
    t.events = {
        ev(0, "0F0", 0.0, 1 * ms),
        ev(0, "0SEND_F0", 1 * ms, 1.1 * ms, 81920, 1),
        ev(0, "0F1", 1 * ms, 2 * ms),
        ev(0, "0SEND_F1", 2 * ms, 2.1 * ms, 81920, 1),
        ev(1, "1RECV_F0", 0.0, 1.1 * ms, 81920, 0),
        ev(1, "1F0", 1.1 * ms, 2.1 * ms),
        ev(1, "1RECV_F1", 2.1 * ms, 2.1 * ms, 81920, 0),
        ev(1, "1F1", 2.1 * ms, 3.1 * ms),
        ev(1, "1B1", 3.1 * ms, 5.1 * ms),
        ev(1, "1SEND_B1", 5.1 * ms, 5.2 * ms, 40960.5, 0),
        ev(1, "1B0", 5.1 * ms, 7.1 * ms),
        ev(1, "1SEND_B0", 7.1 * ms, 7.2 * ms, 40960.5, 0),
        ev(0, "0RECV_B1", 2 * ms, 5.2 * ms, 40960.5, 1),
        ev(0, "0B1", 5.2 * ms, 7.2 * ms),
        ev(0, "0RECV_B0", 7.2 * ms, 7.2 * ms, 40960.5, 1),
        ev(0, "0B0", 7.2 * ms, 9.2 * ms),
    };
    t.memory = {{{0.0, 1048576}, {0.001, 2097152}, {9.2 * ms, 0}}, {{0.0, 524288}}};
    return t;
}

nlohmann::json sample_json() {
    return timeline_to_json(sample_timeline());
}

// Runs timeline_from_json and returns the diagnostics it threw.
Diagnostics problems_of(const nlohmann::json& j) {
    try {
        (void)timeline_from_json(j);
    } catch (const InputError& e) {
        return e.diagnostics();
    }
    ADD_FAILURE() << "expected InputError for " << j.dump();
    return {};
}

bool has_path(const Diagnostics& d, const std::string& path) {
    for (const auto& item : d.items()) {
        if (item.path == path) {
            return true;
        }
    }
    return false;
}

std::filesystem::path temp_dir() {
    auto dir = std::filesystem::temp_directory_path() /
               ("pipewright_timeline_test_" +
                std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    return dir;
}

TEST(Timeline, MakespanFromEarliestStartToLatestEnd) {
    Timeline t;
    EXPECT_EQ(t.makespan_s(), 0.0);
    t.devices = {"a"};
    t.events = {ev(0, "0F0", 0.5, 1.0), ev(0, "0B0", 1.0, 3.0), ev(0, "0F1", 0.25, 0.5)};
    EXPECT_DOUBLE_EQ(t.makespan_s(), 2.75);
    EXPECT_DOUBLE_EQ(sample_timeline().makespan_s(), 9.2e-3);
}

TEST(Timeline, JsonHasTheDocumentedFields) {
    const auto j = sample_json();
    EXPECT_EQ(j.at("format"), "pipewright-timeline");
    EXPECT_EQ(j.at("version"), 1);
    EXPECT_EQ(j.at("source"), "simulated");
    EXPECT_EQ(j.at("schedule"), "gpipe");
    EXPECT_EQ(j.at("num_stages"), 2);
    EXPECT_EQ(j.at("num_microbatches"), 2);
    EXPECT_EQ(j.at("devices").size(), 2u);
    ASSERT_EQ(j.at("events").size(), 16u);

    const auto& compute = j.at("events")[0];
    EXPECT_EQ(compute.at("rank"), 0);
    EXPECT_EQ(compute.at("action"), "0F0");
    EXPECT_EQ(compute.at("start_s"), 0.0);
    EXPECT_EQ(compute.at("end_s"), 1e-3);
    EXPECT_FALSE(compute.contains("bytes"));
    EXPECT_FALSE(compute.contains("peer_rank"));

    const auto& send = j.at("events")[1];
    EXPECT_EQ(send.at("action"), "0SEND_F0");
    EXPECT_TRUE(send.at("bytes").is_number_integer()) << "whole byte counts stay integers";
    EXPECT_EQ(send.at("bytes"), 81920);
    EXPECT_EQ(send.at("peer_rank"), 1);

    ASSERT_EQ(j.at("memory").size(), 2u);
    EXPECT_EQ(j.at("memory")[0][1], nlohmann::json::array({0.001, 2097152}));
}

TEST(Timeline, MemoryIsOmittedWhenEmpty) {
    auto t = sample_timeline();
    t.memory.clear();
    const auto j = timeline_to_json(t);
    EXPECT_FALSE(j.contains("memory"));
    EXPECT_EQ(timeline_from_json(j), t);
}

TEST(Timeline, RoundTripsThroughJsonText) {
    const auto t = sample_timeline();
    const auto text = timeline_to_json(t).dump();
    const auto back = timeline_from_json(nlohmann::json::parse(text));
    EXPECT_EQ(back, t);
}

// DualPipeV's overlapped pairs keep their mark, so that a measured timeline
// frames them as the simulated one does.
TEST(Timeline, RoundTripsOverlappedPairs) {
    Timeline t;
    t.devices = {"gpu0"};
    t.num_stages = 2;
    t.num_microbatches = 2;
    Action f{0, ActionType::forward, 1, true};
    t.events = {{0, f, 0, 1}, {0, Action{1, ActionType::backward, 0}, 1, 3}};
    const auto json = timeline_to_json(t);
    EXPECT_TRUE(json["events"][0]["overlaps_next"].get<bool>());
    EXPECT_FALSE(json["events"][1].contains("overlaps_next"));
    const auto back = timeline_from_json(nlohmann::json::parse(json.dump()));
    ASSERT_EQ(back.events.size(), 2U);
    EXPECT_TRUE(back.events[0].action.overlaps_next);
    EXPECT_FALSE(back.events[1].action.overlaps_next);
}

TEST(Timeline, RoundTripsAwkwardDoubles) {
    Timeline t;
    t.source = "measured";
    t.schedule = "1f1b";
    t.num_stages = 1;
    t.num_microbatches = 1;
    t.devices = {"localhost/proc/cpu0"};
    t.events = {ev(0, "0F0", 0.1 + 0.2, 1.0 / 3.0), ev(0, "0B0", 1.0 / 3.0, 2.0 / 3.0 + 1e-17)};
    const auto back = timeline_from_json(nlohmann::json::parse(timeline_to_json(t).dump()));
    EXPECT_EQ(back, t);
}

TEST(Timeline, RoundTripsThroughAFile) {
    const auto dir = temp_dir();
    const auto path = dir / "run.timeline.json";
    const auto t = sample_timeline();
    save_timeline_file(t, path);
    EXPECT_EQ(load_timeline_file(path), t);

    // One event per line keeps big files readable; the text is plain JSON.
    const std::string text = read_text_file(path);
    EXPECT_EQ(text.rfind("{\n  \"format\": \"pipewright-timeline\",", 0), 0u) << text;
    EXPECT_NE(text.find("\n    {\"rank\":0,\"action\":\"0F0\""), std::string::npos) << text;
    EXPECT_EQ(nlohmann::json::parse(text), timeline_to_json(t));
    std::filesystem::remove_all(dir);
}

TEST(Timeline, LoadRejectsTextThatIsNotJson) {
    const auto dir = temp_dir();
    const auto path = dir / "broken.json";
    {
        std::ofstream out(path);
        out << "{\"format\": \"pipewright-timeline\",";
    }
    EXPECT_THROW((void)load_timeline_file(path), InputError);
    std::filesystem::remove_all(dir);
}

TEST(Timeline, RejectsWrongFormatAndVersion) {
    auto j = sample_json();
    j["format"] = "pipewright-project";
    EXPECT_TRUE(has_path(problems_of(j), "format"));

    j = sample_json();
    j["version"] = 2;
    EXPECT_TRUE(has_path(problems_of(j), "version"));

    j = sample_json();
    j.erase("format");
    EXPECT_TRUE(has_path(problems_of(j), "format"));

    EXPECT_THROW((void)timeline_from_json(nlohmann::json::array()), InputError);
}

TEST(Timeline, RejectsBadEventsWithTheirPaths) {
    auto j = sample_json();
    j["events"][3]["rank"] = 2;
    j["events"][5]["action"] = "1X0";
    j["events"][7]["end_s"] = 0.0;
    j["events"][8]["start_s"] = "soon";
    j["events"][9]["peer_rank"] = 7;
    j["events"][10].erase("end_s");
    j["events"][11]["bytes"] = -1;
    j["events"][12]["action"] = "5F0";  // stage out of range
    j["events"][13]["action"] = "0F9";  // micro-batch out of range
    j["events"][14]["rank"] = -1;

    const auto d = problems_of(j);
    EXPECT_TRUE(has_path(d, "events[3].rank")) << d.format();
    EXPECT_TRUE(has_path(d, "events[5].action")) << d.format();
    EXPECT_TRUE(has_path(d, "events[7].end_s")) << d.format();
    EXPECT_TRUE(has_path(d, "events[8].start_s")) << d.format();
    EXPECT_TRUE(has_path(d, "events[9].peer_rank")) << d.format();
    EXPECT_TRUE(has_path(d, "events[10].end_s")) << d.format();
    EXPECT_TRUE(has_path(d, "events[11].bytes")) << d.format();
    EXPECT_TRUE(has_path(d, "events[12].action")) << d.format();
    EXPECT_TRUE(has_path(d, "events[13].action")) << d.format();
    EXPECT_TRUE(has_path(d, "events[14].rank")) << d.format();
    EXPECT_EQ(d.size(), 10u) << d.format();
}

TEST(Timeline, RejectsNonFiniteNumbers) {
    auto j = sample_json();
    j["events"][0]["end_s"] = std::numeric_limits<double>::infinity();
    j["events"][1]["bytes"] = std::nan("");
    j["memory"][0][0][0] = std::numeric_limits<double>::infinity();
    const auto d = problems_of(j);
    EXPECT_TRUE(has_path(d, "events[0].end_s")) << d.format();
    EXPECT_TRUE(has_path(d, "events[1].bytes")) << d.format();
    EXPECT_TRUE(has_path(d, "memory[0][0][0]")) << d.format();
}

TEST(Timeline, RejectsBadMemory) {
    auto j = sample_json();
    j["memory"] = nlohmann::json::array({nlohmann::json::array()});
    EXPECT_TRUE(has_path(problems_of(j), "memory"));

    j = sample_json();
    j["memory"][1][0] = nlohmann::json::array({0.0});
    j["memory"][0][2][1] = 1.5;
    j["memory"][0][1][1] = -4;
    const auto d = problems_of(j);
    EXPECT_TRUE(has_path(d, "memory[1][0]")) << d.format();
    EXPECT_TRUE(has_path(d, "memory[0][2][1]")) << d.format();
    EXPECT_TRUE(has_path(d, "memory[0][1][1]")) << d.format();
}

TEST(Timeline, RejectsMissingAndMistypedTopLevelFields) {
    auto j = sample_json();
    j.erase("devices");
    j.erase("num_stages");
    j["events"] = "none";
    j["num_microbatches"] = -1;
    const auto d = problems_of(j);
    EXPECT_TRUE(has_path(d, "devices")) << d.format();
    EXPECT_TRUE(has_path(d, "num_stages")) << d.format();
    EXPECT_TRUE(has_path(d, "events")) << d.format();
    EXPECT_TRUE(has_path(d, "num_microbatches")) << d.format();
}

// ---------------------------------------------------------------------------

const nlohmann::json& trace_events(const nlohmann::json& trace) {
    return trace.at("traceEvents");
}

TEST(ChromeTrace, HasTopLevelShape) {
    const auto trace = timeline_to_chrome_trace(sample_timeline());
    ASSERT_TRUE(trace.at("traceEvents").is_array());
    EXPECT_EQ(trace.at("displayTimeUnit"), "ms");
}

TEST(ChromeTrace, NamesOneProcessPerRankWithTwoThreads) {
    const auto t = sample_timeline();
    const auto trace = timeline_to_chrome_trace(t);
    std::map<int, std::string> process_names;
    std::map<int, int> sort_index;
    std::map<std::pair<int, int>, std::string> thread_names;
    for (const auto& e : trace_events(trace)) {
        if (e.at("ph") != "M") {
            continue;
        }
        const int pid = e.at("pid").get<int>();
        if (e.at("name") == "process_name") {
            process_names[pid] = e.at("args").at("name").get<std::string>();
        } else if (e.at("name") == "process_sort_index") {
            sort_index[pid] = e.at("args").at("sort_index").get<int>();
        } else if (e.at("name") == "thread_name") {
            thread_names[{pid, e.at("tid").get<int>()}] =
                e.at("args").at("name").get<std::string>();
        }
    }
    ASSERT_EQ(process_names.size(), 2u);
    EXPECT_EQ(process_names[1], "rank 0 \u00b7 node0/c0/gpu0");
    EXPECT_EQ(process_names[2], "rank 1 \u00b7 node0/c0/gpu1");
    EXPECT_EQ(sort_index[1], 0);
    EXPECT_EQ(sort_index[2], 1);
    EXPECT_EQ(thread_names.size(), 4u);
    for (int pid : {1, 2}) {
        EXPECT_EQ((thread_names[{pid, 1}]), "compute");
        EXPECT_EQ((thread_names[{pid, 2}]), "communication");
    }
}

TEST(ChromeTrace, OneCompleteEventPerActionOnTheRightLane) {
    const auto t = sample_timeline();
    const auto trace = timeline_to_chrome_trace(t);
    std::map<std::string, int> per_category;
    int complete = 0;
    for (const auto& e : trace_events(trace)) {
        if (e.at("ph") != "X") {
            continue;
        }
        ++complete;
        const auto cat = e.at("cat").get<std::string>();
        ++per_category[cat];
        const auto action = parse_action(e.at("name").get<std::string>());
        ASSERT_TRUE(action.has_value()) << e.dump();
        const bool comm = cat == "send" || cat == "recv";
        EXPECT_EQ(e.at("tid"), comm ? 2 : 1) << e.dump();
        EXPECT_EQ(e.at("args").at("stage"), action->stage);
        EXPECT_EQ(e.at("args").at("microbatch"), action->microbatch);
        EXPECT_EQ(e.at("args").contains("bytes"), comm) << e.dump();
        // Stage s runs on rank s here, so pid = stage + 1.
        EXPECT_EQ(e.at("pid"), action->stage + 1) << e.dump();
    }
    EXPECT_EQ(complete, static_cast<int>(t.events.size()));
    EXPECT_EQ(per_category["forward"], 4);
    EXPECT_EQ(per_category["backward"], 4);
    EXPECT_EQ(per_category["send"], 4);
    EXPECT_EQ(per_category["recv"], 4);
    EXPECT_EQ(per_category.count("backward_input"), 0u);
}

TEST(ChromeTrace, CategoriesOfSplitBackward) {
    Timeline t;
    t.num_stages = 1;
    t.num_microbatches = 1;
    t.devices = {"d"};
    t.events = {ev(0, "0F0", 0, 1), ev(0, "0I0", 1, 2), ev(0, "0W0", 2, 3)};
    const auto trace = timeline_to_chrome_trace(t);
    std::vector<std::string> cats;
    for (const auto& e : trace_events(trace)) {
        if (e.at("ph") == "X") {
            cats.push_back(e.at("cat").get<std::string>());
        }
    }
    EXPECT_EQ(cats, (std::vector<std::string>{"forward", "backward_input", "backward_weight"}));
}

TEST(ChromeTrace, TimestampsAreMicroseconds) {
    const auto trace = timeline_to_chrome_trace(sample_timeline());
    bool found = false;
    for (const auto& e : trace_events(trace)) {
        if (e.at("ph") == "X" && e.at("name") == "1B1") {
            EXPECT_NEAR(e.at("ts").get<double>(), 3100.0, 1e-9);
            EXPECT_NEAR(e.at("dur").get<double>(), 2000.0, 1e-9);
            found = true;
        }
        if (e.at("ph") == "X" && e.at("name") == "0SEND_F0") {
            EXPECT_NEAR(e.at("ts").get<double>(), 1000.0, 1e-9);
            EXPECT_NEAR(e.at("dur").get<double>(), 100.0, 1e-9);
            EXPECT_EQ(e.at("args").at("bytes"), 81920.0);
        }
    }
    EXPECT_TRUE(found);
}

TEST(ChromeTrace, EveryFlowStartHasItsFinish) {
    const auto t = sample_timeline();
    const auto trace = timeline_to_chrome_trace(t);
    std::map<int, nlohmann::json> starts;
    std::map<int, nlohmann::json> finishes;
    for (const auto& e : trace_events(trace)) {
        if (e.at("ph") == "s") {
            EXPECT_TRUE(starts.emplace(e.at("id").get<int>(), e).second) << "duplicate id";
        } else if (e.at("ph") == "f") {
            EXPECT_TRUE(finishes.emplace(e.at("id").get<int>(), e).second) << "duplicate id";
        }
    }
    ASSERT_EQ(starts.size(), 4u);  // one per send
    ASSERT_EQ(finishes.size(), starts.size());
    for (const auto& [id, s] : starts) {
        ASSERT_TRUE(finishes.count(id)) << id;
        const auto& f = finishes.at(id);
        EXPECT_EQ(s.at("cat"), "transfer");
        EXPECT_EQ(s.at("name"), "transfer");
        EXPECT_EQ(f.at("cat"), "transfer");
        EXPECT_EQ(f.at("name"), "transfer");
        EXPECT_EQ(f.at("bp"), "e");
        EXPECT_EQ(s.at("tid"), 2);
        EXPECT_EQ(f.at("tid"), 2);
        EXPECT_NE(s.at("pid"), f.at("pid"));
        EXPECT_LE(s.at("ts").get<double>(), f.at("ts").get<double>());
    }
}

TEST(ChromeTrace, FlowsJoinSendStartToReceiveEnd) {
    const auto trace = timeline_to_chrome_trace(sample_timeline());
    std::set<std::pair<double, double>> pairs;  // (start ts, finish ts) in µs
    std::map<int, double> start_ts;
    for (const auto& e : trace_events(trace)) {
        if (e.at("ph") == "s") {
            start_ts[e.at("id").get<int>()] = e.at("ts").get<double>();
        }
    }
    for (const auto& e : trace_events(trace)) {
        if (e.at("ph") == "f") {
            pairs.emplace(std::round(start_ts.at(e.at("id").get<int>())),
                          std::round(e.at("ts").get<double>()));
        }
    }
    // 0SEND_F0 @1000 -> 1RECV_F0 ends 1100; 0SEND_F1 @2000 -> 1RECV_F1 ends 2100;
    // 1SEND_B1 @5100 -> 0RECV_B1 ends 5200; 1SEND_B0 @7100 -> 0RECV_B0 ends 7200.
    const std::set<std::pair<double, double>> expected{
        {1000, 1100}, {2000, 2100}, {5100, 5200}, {7100, 7200}};
    EXPECT_EQ(pairs, expected);
}

TEST(ChromeTrace, UnmatchedSendsHaveNoFlow) {
    Timeline t;
    t.num_stages = 2;
    t.num_microbatches = 1;
    t.devices = {"a", "b"};
    t.events = {ev(0, "0F0", 0, 1), ev(0, "0SEND_F0", 1, 2, 10, 1)};
    const auto trace = timeline_to_chrome_trace(t);
    for (const auto& e : trace_events(trace)) {
        EXPECT_NE(e.at("ph"), "s");
        EXPECT_NE(e.at("ph"), "f");
    }
}

TEST(ChromeTrace, EmptyTimelineStillNamesItsProcesses) {
    Timeline t;
    t.devices = {"a"};
    const auto trace = timeline_to_chrome_trace(t);
    EXPECT_EQ(trace_events(trace).size(), 6u);  // metadata only
}

// The waits priced inside forwards and backwards: slices nested at the end
// of their action on its compute thread, tensor-parallel all-reduces last,
// the experts' all-to-alls before them; none in a weight gradient, and none
// without a table.
TEST(ChromeTrace, InnerWaitsAreSlicesNestedAtTheEndOfTheirAction) {
    Timeline t;
    t.devices = {"n/c/a"};
    const double ms = 1e-3;
    t.events = {ev(0, "0F0", 0, 10 * ms), ev(0, "0I0", 10 * ms, 30 * ms),
                ev(0, "0W0", 30 * ms, 40 * ms)};
    InnerWaitSeconds inner;
    inner[InnerWait::tensor] = {{1 * ms, 1.5 * ms}};
    inner[InnerWait::experts] = {{2 * ms, 3 * ms}};
    StringSink text;
    write_chrome_trace(t, inner, text);
    const auto trace = nlohmann::json::parse(text.text());
    std::map<std::pair<std::string, double>, double> slices;  // (name, ts) -> dur, in µs
    for (const auto& e : trace_events(trace)) {
        if (!e.contains("cat") || e.at("cat") != "inner_wait") {
            continue;
        }
        EXPECT_EQ(e.at("tid"), 1) << "on the compute thread";
        for (const char* name : {"TP_ALL_REDUCE", "EP_ALL_TO_ALL", "CP_KV_EXCHANGE"}) {
            if (e.at("name") == name) {
                slices[{name, std::round(e.at("ts").get<double>())}] =
                    std::round(e.at("dur").get<double>());
            }
        }
    }
    const std::map<std::pair<std::string, double>, double> want{{{"TP_ALL_REDUCE", 9000}, 1000},
                                                                {{"EP_ALL_TO_ALL", 7000}, 2000},
                                                                {{"TP_ALL_REDUCE", 28500}, 1500},
                                                                {{"EP_ALL_TO_ALL", 25500}, 3000}};
    EXPECT_EQ(slices, want);
    CountingSink counted;
    write_chrome_trace(t, inner, counted);
    EXPECT_NEAR(static_cast<double>(estimate_chrome_trace_bytes(t, inner)),
                static_cast<double>(counted.bytes()), 0.25 * static_cast<double>(counted.bytes()));
    // Without a table the trace is the plain one.
    StringSink plain;
    write_chrome_trace(t, InnerWaitSeconds{}, plain);
    EXPECT_EQ(nlohmann::json::parse(plain.text()), timeline_to_chrome_trace(t));
}

TEST(ActionKindMedians, TheMiddleDurationOfEachKindAndTheMeanOfTheTwoMiddlesForAnEvenCount) {
    Timeline t;
    t.devices = {"n/c/a", "n/c/b"};
    // Forward: 1, 7, 3 ms (odd count: 3 ms). Backward: 2, 10, 4, 6 ms (even: 5 ms).
    t.events = {ev(0, "0F0", 0, 0.001),    ev(0, "0F1", 0.001, 0.008),
                ev(1, "1F0", 0, 0.003),    ev(0, "0B0", 0.01, 0.012),
                ev(0, "0B1", 0.02, 0.030), ev(1, "1B0", 0, 0.004),
                ev(1, "1B1", 0.01, 0.016), ev(0, "0SEND_F0", 0, 0.0005, 64, 1)};
    const auto medians = action_kind_medians(t);
    ASSERT_EQ(medians.size(), 3u);
    EXPECT_NEAR(medians.at(ActionType::forward), 0.003, 1e-12);
    EXPECT_NEAR(medians.at(ActionType::backward), 0.005, 1e-12);
    EXPECT_NEAR(medians.at(ActionType::send_forward), 0.0005, 1e-12);
    EXPECT_FALSE(medians.contains(ActionType::recv_forward));
    EXPECT_TRUE(action_kind_medians(Timeline{}).empty());
}

}  // namespace
}  // namespace pipewright
