#include <cmath>
#include <cstdint>

#include "pipewright/core/timeline.h"
#include "timeline/json_text.h"
#include "timeline/timeline_sizes.h"

namespace pipewright {

namespace {

using detail::JsonTextWriter;

// As number_json in timeline.cpp: whole numbers as JSON integers.
void whole_or_double(JsonTextWriter& w, double v) {
    if (detail::is_exact_integer(v)) {
        w.integer(static_cast<std::int64_t>(v));
    } else {
        w.number(v);
    }
}

// Keys in the order nlohmann::json (a sorted map) writes them.
void append_event(JsonTextWriter& w, const TimelineEvent& e) {
    const bool comm = is_send(e.action.type) || is_recv(e.action.type);
    w.raw("{\"action\":\"").raw(to_string(e.action)).raw("\"");
    if (comm || is_collective(e.action.type)) {
        w.raw(",\"bytes\":");
        whole_or_double(w, e.bytes);
    }
    w.raw(",\"end_s\":").number(e.end_s);
    if (e.action.overlaps_next) {
        w.raw(",\"overlaps_next\":true");
    }
    if (comm) {
        w.raw(",\"peer_rank\":").integer(e.peer_rank);
    }
    w.raw(",\"rank\":").integer(e.rank).raw(",\"start_s\":").number(e.start_s).raw("}");
}

void append_sample(JsonTextWriter& w, const MemorySample& s) {
    w.raw("[").number(s.time_s).raw(",").integer(s.bytes).raw("]");
}

void append_devices(JsonTextWriter& w, const Timeline& t) {
    w.raw("{\"devices\":[");
    for (std::size_t i = 0; i < t.devices.size(); ++i) {
        w.raw(i == 0 ? "" : ",").string(t.devices[i]);
        w.maybe_flush();
    }
    w.raw("],\"events\":[");
}

void append_tail(JsonTextWriter& w, const Timeline& t) {
    w.raw(",\"num_microbatches\":")
        .integer(t.num_microbatches)
        .raw(",\"num_stages\":")
        .integer(t.num_stages)
        .raw(",\"schedule\":")
        .string(t.schedule)
        .raw(",\"source\":")
        .string(t.source)
        .raw(",\"version\":")
        .integer(Timeline::kVersion)
        .raw("}");
}

}  // namespace

void write_timeline_json(const Timeline& t, TextSink& out) {
    JsonTextWriter w(out);
    append_devices(w, t);
    for (std::size_t i = 0; i < t.events.size(); ++i) {
        w.raw(i == 0 ? "" : ",");
        append_event(w, t.events[i]);
        w.maybe_flush();
    }
    w.raw("],\"format\":\"").raw(Timeline::kFormat).raw("\"");
    if (!t.memory.empty()) {
        w.raw(",\"memory\":[");
        for (std::size_t r = 0; r < t.memory.size(); ++r) {
            w.raw(r == 0 ? "[" : ",[");
            const auto& samples = t.memory[r];
            for (std::size_t i = 0; i < samples.size(); ++i) {
                w.raw(i == 0 ? "" : ",");
                append_sample(w, samples[i]);
                w.maybe_flush();
            }
            w.raw("]");
        }
        w.raw("]");
    }
    append_tail(w, t);
    w.flush();
}

std::uint64_t estimate_timeline_json_bytes(const Timeline& t) {
    CountingSink counted;
    JsonTextWriter w(counted);
    append_devices(w, t);
    append_tail(w, t);
    w.flush();
    std::uint64_t bytes = counted.bytes() + 64;
    bytes += detail::sampled_bytes(t.events.size(), [&](JsonTextWriter& s, std::size_t i) {
        append_event(s, t.events[i]);
        s.raw(",");
    });
    for (const auto& samples : t.memory) {
        bytes += 3 + detail::sampled_bytes(samples.size(), [&](JsonTextWriter& s, std::size_t i) {
                     append_sample(s, samples[i]);
                     s.raw(",");
                 });
    }
    return bytes;
}

}  // namespace pipewright
