// The streamed trace and timeline (issue 18) must be the very text that
// building one nlohmann::json document and dumping it gave before.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "pipewright/core/timeline.h"

namespace pipewright {
namespace {

using Json = nlohmann::json;

// Awkward numbers on purpose: thirds, tiny and huge values, bytes that are
// whole, fractional and beyond 2^53, and a device name that needs escaping.
Timeline awkward_timeline(int microbatches) {
    Timeline t;
    t.source = "simulated";
    t.schedule = "gpipe";
    t.num_stages = 2;
    t.num_microbatches = microbatches;
    t.devices = {"node0/c0/gpu0", "node\"1\"/c0/gpu\xC3\xA9"};
    double now = 0;
    const double bytes[] = {81920, 40960.5, 1e20, 3.0 / 7.0};
    for (int m = 0; m < microbatches; ++m) {
        const double b = bytes[m % 4];
        const auto ev = [&](int rank, std::string text, double start, double end, double moved,
                            int peer) {
            TimelineEvent e;
            e.rank = rank;
            e.action = *parse_action(text);
            e.start_s = start;
            e.end_s = end;
            e.bytes = moved;
            e.peer_rank = peer;
            t.events.push_back(e);
        };
        const std::string mb = std::to_string(m);
        ev(0, "0F" + mb, now, now + 1.0 / 3.0, 0, -1);
        ev(0, "0SEND_F" + mb, now + 1.0 / 3.0, now + 0.5, b, 1);
        ev(1, "1RECV_F" + mb, now, now + 0.5, b, 0);
        ev(1, "1F" + mb, now + 0.5, now + 0.5 + 1e-9, 0, -1);
        ev(1, "1B" + mb, now + 1, now + 2e-7 + 1, 0, -1);
        ev(1, "1SEND_B" + mb, now + 1.5, now + 1.75, b, m % 3 == 0 ? -1 : 0);
        ev(0, "0RECV_B" + mb, now + 1, now + 1.75, b, 1);
        ev(0, "0B" + mb, now + 2, now + 3, 0, -1);
        now += 0.1 + 1e-12 * m;
    }
    // A receive without a send and a send without a receive pair with nothing.
    t.events.push_back({0, *parse_action("0RECV_B0"), now, now, 12, 1});
    t.events.push_back({1, *parse_action("1SEND_F0"), now, now, 12, 0});
    // DualPipeV's OVERLAP_F_B: a forward overlapped with the next computation.
    Action overlapped = *parse_action("1F0");
    overlapped.overlaps_next = true;
    t.events.push_back({1, overlapped, now, now + 0.25, 0, -1});
    t.memory = {{{0.0, 1048576}, {1.0 / 3.0, 2097152}, {9.2e-3, 0}}, {{0.0, 524288}}};
    return t;
}

// The trace as it was built before streaming (core/src/timeline/chrome_trace.cpp at
// commit 9c1fa1e), kept here as the reference for the streamed text.
Json reference_trace(const Timeline& timeline) {
    const auto pid_of = [](int rank) { return rank + 1; };
    const auto category = [](ActionType t) -> const char* {
        switch (t) {
            case ActionType::forward:
                return "forward";
            case ActionType::backward:
                return "backward";
            case ActionType::backward_input:
                return "backward_input";
            case ActionType::backward_weight:
                return "backward_weight";
            case ActionType::send_forward:
            case ActionType::send_backward:
                return "send";
            default:
                return "recv";
        }
    };
    const auto metadata = [](const char* name, int pid, int tid, Json args) {
        Json j{{"ph", "M"}, {"name", name}, {"pid", pid}, {"args", std::move(args)}};
        if (tid > 0) {
            j["tid"] = tid;
        }
        return j;
    };
    Json events = Json::array();
    for (int rank = 0; rank < timeline.num_ranks(); ++rank) {
        const int pid = pid_of(rank);
        const auto& device = timeline.devices[static_cast<std::size_t>(rank)];
        std::string label = "rank " + std::to_string(rank);
        if (!device.empty()) {
            label += " \xC2\xB7 " + device;
        }
        events.push_back(metadata("process_name", pid, 0, {{"name", label}}));
        events.push_back(metadata("process_sort_index", pid, 0, {{"sort_index", rank}}));
        events.push_back(metadata("thread_name", pid, 1, {{"name", "compute"}}));
        events.push_back(metadata("thread_sort_index", pid, 1, {{"sort_index", 0}}));
        events.push_back(metadata("thread_name", pid, 2, {{"name", "communication"}}));
        events.push_back(metadata("thread_sort_index", pid, 2, {{"sort_index", 1}}));
    }
    using RecvKey = std::tuple<ActionType, int, int>;
    std::map<RecvKey, std::vector<std::size_t>> receives;
    for (std::size_t i = 0; i < timeline.events.size(); ++i) {
        const auto& a = timeline.events[i].action;
        if (is_recv(a.type)) {
            receives[{a.type, a.stage, a.microbatch}].push_back(i);
        }
    }
    std::map<RecvKey, std::size_t> used;
    Json flows = Json::array();
    int next_flow_id = 1;
    for (const auto& e : timeline.events) {
        const bool comm = is_send(e.action.type) || is_recv(e.action.type);
        Json args{{"stage", e.action.stage}, {"microbatch", e.action.microbatch}};
        if (comm) {
            args["bytes"] = e.bytes;
            if (e.peer_rank >= 0) {
                args["peer_rank"] = e.peer_rank;
            }
        }
        events.push_back({{"ph", "X"},
                          {"name", to_string(e.action)},
                          {"cat", category(e.action.type)},
                          {"pid", pid_of(e.rank)},
                          {"tid", comm ? 2 : 1},
                          {"ts", e.start_s * 1e6},
                          {"dur", (e.end_s - e.start_s) * 1e6},
                          {"args", std::move(args)}});
        if (!is_send(e.action.type)) {
            continue;
        }
        const Action wanted = matching_transfer(e.action);
        const RecvKey key{wanted.type, wanted.stage, wanted.microbatch};
        auto it = receives.find(key);
        if (it == receives.end()) {
            continue;
        }
        auto& next = used[key];
        if (next >= it->second.size()) {
            continue;
        }
        const auto& recv = timeline.events[it->second[next++]];
        const int id = next_flow_id++;
        flows.push_back({{"ph", "s"},
                         {"name", "transfer"},
                         {"cat", "transfer"},
                         {"id", id},
                         {"pid", pid_of(e.rank)},
                         {"tid", 2},
                         {"ts", e.start_s * 1e6}});
        flows.push_back({{"ph", "f"},
                         {"bp", "e"},
                         {"name", "transfer"},
                         {"cat", "transfer"},
                         {"id", id},
                         {"pid", pid_of(recv.rank)},
                         {"tid", 2},
                         {"ts", recv.end_s * 1e6}});
    }
    for (auto& f : flows) {
        events.push_back(std::move(f));
    }
    return Json{{"traceEvents", std::move(events)},
                {"displayTimeUnit", "ms"},
                {"otherData",
                 {{"source", timeline.source},
                  {"schedule", timeline.schedule},
                  {"num_stages", timeline.num_stages},
                  {"num_microbatches", timeline.num_microbatches}}}};
}

TEST(TimelineWriter, StreamedTimelineIsTheDumpedDocument) {
    for (const int m : {0, 1, 5}) {
        Timeline t = awkward_timeline(m);
        StringSink text;
        write_timeline_json(t, text);
        EXPECT_EQ(text.text(), timeline_to_json(t).dump()) << m;
        t.memory.clear();  // no "memory" key then
        StringSink without_memory;
        write_timeline_json(t, without_memory);
        EXPECT_EQ(without_memory.text(), timeline_to_json(t).dump()) << m;
    }
    StringSink empty;
    write_timeline_json(Timeline{}, empty);
    EXPECT_EQ(empty.text(), timeline_to_json(Timeline{}).dump());
}

TEST(TimelineWriter, NonFiniteNumbersAreWrittenAsNullAsBefore) {
    Timeline t = awkward_timeline(1);
    t.events[0].end_s = std::numeric_limits<double>::infinity();
    t.events[1].bytes = std::numeric_limits<double>::quiet_NaN();
    StringSink text;
    write_timeline_json(t, text);
    EXPECT_EQ(text.text(), timeline_to_json(t).dump());
    StringSink trace;
    write_chrome_trace(t, trace);
    EXPECT_EQ(trace.text(), reference_trace(t).dump());
}

TEST(TimelineWriter, StreamedTraceIsTheTraceBuiltBefore) {
    for (const int m : {0, 1, 7}) {
        const Timeline t = awkward_timeline(m);
        StringSink text;
        write_chrome_trace(t, text);
        EXPECT_EQ(text.text(), reference_trace(t).dump()) << m;
        EXPECT_EQ(timeline_to_chrome_trace(t), reference_trace(t)) << m;
    }
}

TEST(TimelineWriter, EstimatesAreCloseToTheSizeWritten) {
    // 8 events per micro-batch, 262,146 in all: sampled, not all formatted.
    // Every 64th event would always be the same kind of action (and 8
    // events a micro-batch, sends with their flow arrows among them).
    const Timeline t = awkward_timeline(32'768);
    CountingSink timeline_bytes;
    write_timeline_json(t, timeline_bytes);
    CountingSink trace_bytes;
    write_chrome_trace(t, trace_bytes);
    const auto within = [](std::uint64_t estimate, std::uint64_t actual) {
        return std::fabs(static_cast<double>(estimate) - static_cast<double>(actual)) <
               0.1 * static_cast<double>(actual);
    };
    EXPECT_TRUE(within(estimate_timeline_json_bytes(t), timeline_bytes.bytes()))
        << estimate_timeline_json_bytes(t) << " vs " << timeline_bytes.bytes();
    EXPECT_TRUE(within(estimate_chrome_trace_bytes(t), trace_bytes.bytes()))
        << estimate_chrome_trace_bytes(t) << " vs " << trace_bytes.bytes();
}

}  // namespace
}  // namespace pipewright
