#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "pipewright/core/inner_waits.h"
#include "pipewright/core/timeline.h"
#include "timeline/json_text.h"
#include "timeline/timeline_sizes.h"

namespace pipewright {

namespace {

using Json = nlohmann::json;
using detail::JsonTextWriter;

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
        case ActionType::unshard:
        case ActionType::reshard:
        case ActionType::reduce_grad:
            return "collective";
    }
    return "forward";
}

// Drawn on the device's communication thread, beside its compute.
bool is_comm(ActionType t) {
    return is_send(t) || is_recv(t) || is_collective(t);
}

// "rank 0 · node0/c0/gpu0" (U+00B7 middle dot in UTF-8)
std::string process_label(const Timeline& t, int rank) {
    const auto& device = t.devices[static_cast<std::size_t>(rank)];
    std::string label = "rank " + std::to_string(rank);
    if (!device.empty()) {
        label += " \xC2\xB7 " + device;
    }
    return label;
}

// Keys below are in the order nlohmann::json (a sorted map) writes them, so
// that the text is what timeline_to_chrome_trace(t).dump() gave before it was
// streamed.
void append_metadata(JsonTextWriter& w, const char* name, int pid, int tid,
                     const std::string& args) {
    w.raw("{\"args\":").raw(args).raw(",\"name\":\"").raw(name).raw("\",\"ph\":\"M\",\"pid\":");
    w.integer(pid);
    if (tid > 0) {
        w.raw(",\"tid\":").integer(tid);
    }
    w.raw("}");
}

void append_process(JsonTextWriter& w, const Timeline& t, int rank) {
    const int pid = pid_of(rank);
    const std::string sort_index = "{\"sort_index\":" + std::to_string(rank) + "}";
    append_metadata(w, "process_name", pid, 0,
                    "{\"name\":" + nlohmann::json(process_label(t, rank)).dump() + "}");
    w.raw(",");
    append_metadata(w, "process_sort_index", pid, 0, sort_index);
    w.raw(",");
    append_metadata(w, "thread_name", pid, kComputeTid, "{\"name\":\"compute\"}");
    w.raw(",");
    append_metadata(w, "thread_sort_index", pid, kComputeTid, "{\"sort_index\":0}");
    w.raw(",");
    append_metadata(w, "thread_name", pid, kCommTid, "{\"name\":\"communication\"}");
    w.raw(",");
    append_metadata(w, "thread_sort_index", pid, kCommTid, "{\"sort_index\":1}");
}

void append_action(JsonTextWriter& w, const TimelineEvent& e) {
    const bool comm = is_comm(e.action.type);
    w.raw("{\"args\":{");
    if (comm) {
        w.raw("\"bytes\":").number(e.bytes).raw(",");
    }
    w.raw("\"microbatch\":").integer(e.action.microbatch);
    if (comm && e.peer_rank >= 0) {
        w.raw(",\"peer_rank\":").integer(e.peer_rank);
    }
    w.raw(",\"stage\":").integer(e.action.stage);
    w.raw("},\"cat\":\"").raw(category(e.action.type)).raw("\",\"dur\":");
    w.number(to_us(e.end_s - e.start_s));
    w.raw(",\"name\":\"").raw(to_string(e.action)).raw("\",\"ph\":\"X\",\"pid\":");
    w.integer(pid_of(e.rank)).raw(",\"tid\":").integer(comm ? kCommTid : kComputeTid);
    w.raw(",\"ts\":").number(to_us(e.start_s)).raw("}");
}

// The inner waits of a compute action as slices nested at its end, kind
// after kind backwards (as the studio draws its sub-blocks), each clipped to
// the action.
void append_inner_waits(JsonTextWriter& w, const TimelineEvent& e, const InnerWaitSeconds& inner) {
    double before_end = 0;
    for (const InnerWait kind : kInnerWaits) {
        const double s = inner.seconds(kind, e.action);
        if (s <= 0) {
            continue;
        }
        const double end = std::max(e.start_s, e.end_s - before_end);
        const double start = std::max(e.start_s, end - s);
        before_end += s;
        if (end <= start) {
            continue;
        }
        w.raw(",{\"args\":{\"microbatch\":").integer(e.action.microbatch);
        w.raw(",\"stage\":").integer(e.action.stage);
        w.raw("},\"cat\":\"inner_wait\",\"dur\":").number(to_us(end - start));
        w.raw(",\"name\":\"").raw(trace_name(kind)).raw("\",\"ph\":\"X\",\"pid\":");
        w.integer(pid_of(e.rank)).raw(",\"tid\":").integer(kComputeTid);
        w.raw(",\"ts\":").number(to_us(start)).raw("}");
    }
}

// An arrow from a send (its start) to the receive that takes its data (its end).
void append_flow(JsonTextWriter& w, int id, const TimelineEvent& send, const TimelineEvent& recv) {
    w.raw("{\"cat\":\"transfer\",\"id\":").integer(id);
    w.raw(",\"name\":\"transfer\",\"ph\":\"s\",\"pid\":").integer(pid_of(send.rank));
    w.raw(",\"tid\":").integer(kCommTid).raw(",\"ts\":").number(to_us(send.start_s));
    w.raw("},{\"bp\":\"e\",\"cat\":\"transfer\",\"id\":").integer(id);
    w.raw(",\"name\":\"transfer\",\"ph\":\"f\",\"pid\":").integer(pid_of(recv.rank));
    w.raw(",\"tid\":").integer(kCommTid).raw(",\"ts\":").number(to_us(recv.end_s)).raw("}");
}

void append_head(JsonTextWriter& w, const Timeline& t) {
    w.raw("{\"displayTimeUnit\":\"ms\",\"otherData\":{\"num_microbatches\":");
    w.integer(t.num_microbatches).raw(",\"num_stages\":").integer(t.num_stages);
    w.raw(",\"schedule\":").string(t.schedule).raw(",\"source\":").string(t.source);
    w.raw("},\"traceEvents\":[");
}

// The receives of a timeline by what they receive, to pair every send with
// its receive: repeated transfers of the same data pair up first with first,
// in timeline order. One flat sorted array (24 bytes a receive) instead of a
// map of vectors, which took most of the memory of large traces.
class ReceiveIndex {
  public:
    explicit ReceiveIndex(const Timeline& t) {
        for (std::size_t i = 0; i < t.events.size(); ++i) {
            const Action& a = t.events[i].action;
            if (is_recv(a.type)) {
                receives_.push_back({a.type, a.stage, a.microbatch, i});
            }
        }
        std::stable_sort(receives_.begin(), receives_.end(),
                         [](const Receive& a, const Receive& b) { return a.key() < b.key(); });
        taken_.assign(receives_.size(), 0);
    }

    // The event index of the next unpaired receive of what `send` sends.
    std::optional<std::size_t> take(const Action& send) {
        const Action recv = matching_transfer(send);
        const Receive wanted{recv.type, recv.stage, recv.microbatch, 0};
        const auto first =
            std::lower_bound(receives_.begin(), receives_.end(), wanted,
                             [](const Receive& a, const Receive& b) { return a.key() < b.key(); });
        if (first == receives_.end() || first->key() != wanted.key()) {
            return std::nullopt;
        }
        const auto head = static_cast<std::size_t>(first - receives_.begin());
        const std::size_t at = head + taken_[head];
        if (at >= receives_.size() || receives_[at].key() != wanted.key()) {
            return std::nullopt;
        }
        ++taken_[head];
        return receives_[at].event;
    }

  private:
    struct Receive {
        ActionType type;
        int stage;
        int microbatch;
        std::size_t event;
        [[nodiscard]] std::tuple<ActionType, int, int> key() const {
            return {type, stage, microbatch};
        }
    };
    std::vector<Receive> receives_;
    std::vector<std::uint32_t> taken_;  // at the first receive of each key: how many are paired
};

}  // namespace

void write_chrome_trace(const Timeline& t, TextSink& out) {
    write_chrome_trace(t, InnerWaitSeconds{}, out);
}

void write_chrome_trace(const Timeline& t, const InnerWaitSeconds& inner, TextSink& out) {
    JsonTextWriter w(out);
    append_head(w, t);
    bool first = true;
    const auto separate = [&] {
        w.raw(first ? "" : ",");
        first = false;
    };
    for (int rank = 0; rank < t.num_ranks(); ++rank) {
        separate();
        append_process(w, t, rank);
        w.maybe_flush();
    }
    for (const auto& e : t.events) {
        separate();
        append_action(w, e);
        if (inner.any()) {
            append_inner_waits(w, e, inner);
        }
        w.maybe_flush();
    }
    // Flow arrows after every action, numbered in the order of their sends.
    ReceiveIndex receives(t);
    int next_flow_id = 1;
    for (const auto& e : t.events) {
        if (!is_send(e.action.type)) {
            continue;
        }
        if (const auto recv = receives.take(e.action)) {
            separate();
            append_flow(w, next_flow_id++, e, t.events[*recv]);
            w.maybe_flush();
        }
    }
    w.raw("]}");
    w.flush();
}

std::uint64_t estimate_chrome_trace_bytes(const Timeline& t) {
    return estimate_chrome_trace_bytes(t, InnerWaitSeconds{});
}

std::uint64_t estimate_chrome_trace_bytes(const Timeline& t, const InnerWaitSeconds& inner) {
    CountingSink counted;
    JsonTextWriter w(counted);
    append_head(w, t);
    w.flush();
    std::uint64_t bytes = counted.bytes() + 2;
    bytes += detail::sampled_bytes(static_cast<std::size_t>(t.num_ranks()),
                                   [&](JsonTextWriter& s, std::size_t r) {
                                       append_process(s, t, static_cast<int>(r));
                                       s.raw(",");
                                   });
    bytes += detail::sampled_bytes(t.events.size(), [&](JsonTextWriter& s, std::size_t i) {
        const TimelineEvent& e = t.events[i];
        append_action(s, e);
        append_inner_waits(s, e, inner);
        s.raw(",");
        // Every send gets an arrow to its receive, about this long.
        if (is_send(e.action.type)) {
            append_flow(s, static_cast<int>(i), e, e);
            s.raw(",");
        }
    });
    return bytes;
}

nlohmann::json timeline_to_chrome_trace(const Timeline& timeline) {
    // One writer for both: the streamed text, parsed.
    StringSink text;
    write_chrome_trace(timeline, text);
    return Json::parse(text.text());
}

}  // namespace pipewright
