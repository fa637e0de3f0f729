#include "pipewright/core/timeline.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include "pipewright/core/diagnostics.h"
#include "pipewright/core/json_parse.h"
#include "pipewright/core/json_reader.h"
#include "pipewright/core/project_io.h"

#include "timeline/json_text.h"

namespace pipewright {

namespace {

using OrderedJson = nlohmann::ordered_json;

// Whole numbers are written as JSON integers ("bytes": 81920), others as
// doubles in nlohmann's shortest round-trip form.
OrderedJson number_json(double v) {
    if (detail::is_exact_integer(v)) {
        return static_cast<std::int64_t>(v);
    }
    return v;
}

OrderedJson event_json(const TimelineEvent& e) {
    OrderedJson j;
    j["rank"] = e.rank;
    j["action"] = to_string(e.action);
    j["start_s"] = e.start_s;
    j["end_s"] = e.end_s;
    if (e.action.overlaps_next) {
        j["overlaps_next"] = true;  // OVERLAP_F_B with the rank's next computation
    }
    if (is_send(e.action.type) || is_recv(e.action.type)) {
        j["bytes"] = number_json(e.bytes);
        j["peer_rank"] = e.peer_rank;
    } else if (is_collective(e.action.type)) {
        j["bytes"] = number_json(e.bytes);  // what each replica contributes
    }
    return j;
}

OrderedJson ordered_timeline_json(const Timeline& t) {
    OrderedJson j;
    j["format"] = Timeline::kFormat;
    j["version"] = Timeline::kVersion;
    j["source"] = t.source;
    j["schedule"] = t.schedule;
    j["num_stages"] = t.num_stages;
    j["num_microbatches"] = t.num_microbatches;
    j["devices"] = t.devices;
    OrderedJson events = OrderedJson::array();
    for (const auto& e : t.events) {
        events.push_back(event_json(e));
    }
    j["events"] = std::move(events);
    if (!t.memory.empty()) {
        OrderedJson memory = OrderedJson::array();
        for (const auto& rank_samples : t.memory) {
            OrderedJson samples = OrderedJson::array();
            for (const auto& s : rank_samples) {
                samples.push_back(OrderedJson::array({s.time_s, s.bytes}));
            }
            memory.push_back(std::move(samples));
        }
        j["memory"] = std::move(memory);
    }
    return j;
}

constexpr Need kRequired = Need::required;
constexpr Need kOptional = Need::optional;
constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();
constexpr NumberRange kAnyNumber{-std::numeric_limits<double>::max(),
                                 std::numeric_limits<double>::max()};

std::string out_of_range(const char* what, int value, int count, const std::string& counted) {
    return std::string(what) + " " + std::to_string(value) + " out of range (" + counted + " " +
           std::to_string(count) + ")";
}

// A rank of the timeline: 0 to num_ranks - 1 (or -1, "none", where allowed).
std::optional<int> read_rank(const JsonObject& r, std::string_view key, Need need, int lowest,
                             int num_ranks) {
    auto v = r.field(key, need);
    if (!v) {
        return std::nullopt;
    }
    auto rank = v->integer(std::numeric_limits<int>::min(), kIntMax);
    if (rank && (*rank < lowest || *rank >= num_ranks)) {
        v->error("rank " + std::to_string(*rank) + " out of range (the timeline has " +
                 std::to_string(num_ranks) + " devices)");
        return std::nullopt;
    }
    return rank ? std::optional<int>(static_cast<int>(*rank)) : std::nullopt;
}

std::optional<Action> read_action(const JsonObject& r, const Timeline& t) {
    auto v = r.field("action", kRequired);
    if (!v) {
        return std::nullopt;
    }
    auto text = v->string();
    if (!text) {
        return std::nullopt;
    }
    auto action = parse_action(*text);
    if (!action) {
        v->error("\"" + *text +
                 "\" is not an action (expected e.g. \"0F1\", \"2B0\", \"1SEND_F3\")");
        return std::nullopt;
    }
    if (t.num_stages > 0 && (action->stage < 0 || action->stage >= t.num_stages)) {
        v->error(out_of_range("stage", action->stage, t.num_stages, "num_stages is"));
        return std::nullopt;
    }
    if (t.num_microbatches > 0 &&
        (action->microbatch < 0 || action->microbatch >= t.num_microbatches)) {
        v->error(out_of_range("micro-batch", action->microbatch, t.num_microbatches,
                              "num_microbatches is"));
        return std::nullopt;
    }
    return action;
}

void read_event(const JsonValue& v, const Timeline& t, std::vector<TimelineEvent>& out) {
    const JsonObject r(v);
    if (!r.ok()) {
        return;
    }
    TimelineEvent e;
    const auto rank = read_rank(r, "rank", kRequired, 0, t.num_ranks());
    const auto action = read_action(r, t);
    const auto start = r.number("start_s", kRequired, kAnyNumber);
    const auto end = r.number("end_s", kRequired, kAnyNumber);
    if (start && end && *end < *start) {
        r.error("end_s", "ends before it starts (start_s " + std::to_string(*start) + ")");
    }
    const auto bytes = r.number("bytes", kOptional, {0, 1e18}).value_or(0);
    const auto peer = read_rank(r, "peer_rank", kOptional, -1, t.num_ranks()).value_or(-1);
    const bool overlapped = r.boolean("overlaps_next", kOptional).value_or(false);
    if (rank && action && start && end) {
        e.rank = *rank;
        e.action = *action;
        e.action.overlaps_next = overlapped;
        e.start_s = *start;
        e.end_s = *end;
        e.bytes = bytes;
        e.peer_rank = peer;
        out.push_back(e);
    }
}

void read_memory(const JsonValue& v, Timeline& t) {
    if (!v.array()) {
        return;
    }
    if (v.size() != t.devices.size()) {
        v.error("has " + std::to_string(v.size()) + " entries, expected one per device (" +
                std::to_string(t.devices.size()) + ")");
        return;
    }
    t.memory.assign(v.size(), {});
    for (std::size_t rank = 0; rank < v.size() && !v.full(); ++rank) {
        const JsonValue samples = v.element(rank);
        if (!samples.array()) {
            continue;
        }
        for (std::size_t i = 0; i < samples.size() && !v.full(); ++i) {
            const JsonValue sample = samples.element(i);
            if (!sample.json().is_array() || sample.size() != 2) {
                sample.error("expected a [time_s, bytes] pair, got " +
                             describe_json(sample.json()));
                continue;
            }
            auto time = sample.element(0).number(kAnyNumber);
            auto bytes = sample.element(1).integer(0, std::numeric_limits<std::int64_t>::max());
            if (time && bytes) {
                t.memory[rank].push_back({*time, *bytes});
            }
        }
    }
}

// Whole arrays of events and samples on one line each keep large files
// readable and diffable.
void append_array(std::string& out, const OrderedJson& array) {
    if (array.empty()) {
        out += "[]";
        return;
    }
    out += "[\n";
    for (std::size_t i = 0; i < array.size(); ++i) {
        out += "    ";
        out += array[i].dump();
        out += i + 1 < array.size() ? ",\n" : "\n";
    }
    out += "  ]";
}

}  // namespace

double Timeline::makespan_s() const {
    if (events.empty()) {
        return 0;
    }
    double first = events.front().start_s;
    double last = events.front().end_s;
    for (const auto& e : events) {
        first = std::min(first, e.start_s);
        last = std::max(last, e.end_s);
    }
    return last - first;
}

nlohmann::json timeline_to_json(const Timeline& timeline) {
    return nlohmann::json(ordered_timeline_json(timeline));
}

Timeline timeline_from_json(const nlohmann::json& j) {
    Diagnostics diagnostics;
    const JsonObject r(j, diagnostics);
    if (!r.expect_format(Timeline::kFormat, Timeline::kVersion)) {
        throw InputError(std::move(diagnostics));
    }
    Timeline t;
    t.source = r.string("source", kOptional).value_or(t.source);
    t.schedule = r.string("schedule", kOptional).value_or("");
    t.num_stages = static_cast<int>(r.integer("num_stages", kRequired, 0, kIntMax).value_or(0));
    t.num_microbatches =
        static_cast<int>(r.integer("num_microbatches", kRequired, 0, kIntMax).value_or(0));
    if (auto devices = r.array("devices", kRequired)) {
        for (std::size_t i = 0; i < devices->size(); ++i) {
            t.devices.push_back(devices->element(i).string().value_or(""));
        }
    }
    if (auto events = r.array("events", kRequired)) {
        t.events.reserve(events->size());
        for (std::size_t i = 0; i < events->size() && !events->full(); ++i) {
            read_event(events->element(i), t, t.events);
        }
    }
    if (auto memory = r.field("memory", kOptional)) {
        read_memory(*memory, t);
    }
    if (!diagnostics.empty()) {
        throw InputError(std::move(diagnostics));
    }
    return t;
}

void save_timeline_file(const Timeline& timeline, const std::filesystem::path& path) {
    const OrderedJson j = ordered_timeline_json(timeline);
    std::string out = "{\n";
    bool first = true;
    for (const auto& [key, value] : j.items()) {
        if (!first) {
            out += ",\n";
        }
        first = false;
        out += "  ";
        out += OrderedJson(key).dump();
        out += ": ";
        if (value.is_array() && (key == "events" || key == "memory")) {
            append_array(out, value);
        } else {
            out += value.dump();
        }
    }
    out += "\n}\n";
    write_file_atomically(path, out);
}

Timeline load_timeline_file(const std::filesystem::path& path) {
    const nlohmann::json j = parse_json_file(path);
    try {
        return timeline_from_json(j);
    } catch (const InputError& e) {
        throw InputError(located_in(path, e.diagnostics()));
    }
}

}  // namespace pipewright
