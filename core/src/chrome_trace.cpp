#include <cstddef>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "pipewright/core/timeline.h"

namespace pipewright {

namespace {

using Json = nlohmann::json;

constexpr int kComputeTid = 1;
constexpr int kCommTid = 2;
constexpr double kMicrosecondsPerSecond = 1e6;

int pid_of(int rank) {
    return rank + 1;
}

double to_us(double seconds) {
    return seconds * kMicrosecondsPerSecond;
}

const char* category(ActionType t) {
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
        case ActionType::recv_forward:
        case ActionType::recv_backward:
            return "recv";
    }
    return "forward";
}

bool is_comm(ActionType t) {
    return is_send(t) || is_recv(t);
}

Json metadata(const char* name, int pid, int tid, Json args) {
    Json j{{"ph", "M"}, {"name", name}, {"pid", pid}, {"args", std::move(args)}};
    if (tid > 0) {
        j["tid"] = tid;
    }
    return j;
}

// Key of a receive: (type, stage, micro-batch).
using RecvKey = std::tuple<ActionType, int, int>;

// The receive that takes what `send` sends: SEND_F(s, m) -> RECV_F(s+1, m),
// SEND_B(s, m) -> RECV_B(s-1, m).
RecvKey matching_recv(const Action& send) {
    if (send.type == ActionType::send_forward) {
        return {ActionType::recv_forward, send.stage + 1, send.microbatch};
    }
    return {ActionType::recv_backward, send.stage - 1, send.microbatch};
}

}  // namespace

nlohmann::json timeline_to_chrome_trace(const Timeline& timeline) {
    Json events = Json::array();

    for (int rank = 0; rank < timeline.num_ranks(); ++rank) {
        const int pid = pid_of(rank);
        const auto& device = timeline.devices[static_cast<std::size_t>(rank)];
        // "rank 0 · node0/c0/gpu0" (U+00B7 middle dot in UTF-8)
        std::string label = "rank " + std::to_string(rank);
        if (!device.empty()) {
            label += " \xC2\xB7 " + device;
        }
        events.push_back(metadata("process_name", pid, 0, {{"name", label}}));
        events.push_back(metadata("process_sort_index", pid, 0, {{"sort_index", rank}}));
        events.push_back(metadata("thread_name", pid, kComputeTid, {{"name", "compute"}}));
        events.push_back(metadata("thread_sort_index", pid, kComputeTid, {{"sort_index", 0}}));
        events.push_back(metadata("thread_name", pid, kCommTid, {{"name", "communication"}}));
        events.push_back(metadata("thread_sort_index", pid, kCommTid, {{"sort_index", 1}}));
    }

    // Receives by what they receive, in timeline order, so that repeated
    // transfers of the same data pair up first with first.
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
        const bool comm = is_comm(e.action.type);
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
                          {"tid", comm ? kCommTid : kComputeTid},
                          {"ts", to_us(e.start_s)},
                          {"dur", to_us(e.end_s - e.start_s)},
                          {"args", std::move(args)}});

        if (!is_send(e.action.type)) {
            continue;
        }
        const RecvKey key = matching_recv(e.action);
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
                         {"tid", kCommTid},
                         {"ts", to_us(e.start_s)}});
        flows.push_back({{"ph", "f"},
                         {"bp", "e"},
                         {"name", "transfer"},
                         {"cat", "transfer"},
                         {"id", id},
                         {"pid", pid_of(recv.rank)},
                         {"tid", kCommTid},
                         {"ts", to_us(recv.end_s)}});
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

}  // namespace pipewright
