#include "pipewright/core/timeline.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include "pipewright/core/diagnostics.h"
#include "pipewright/core/json_parse.h"
#include "pipewright/core/project_io.h"

#include "json_text.h"

namespace pipewright {

namespace {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;

// Past this many problems the rest of a broken file adds nothing useful.
constexpr std::size_t kMaxDiagnostics = 50;

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
    if (is_send(e.action.type) || is_recv(e.action.type)) {
        j["bytes"] = number_json(e.bytes);
        j["peer_rank"] = e.peer_rank;
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

// Reads JSON values into C++ ones, recording every problem with its path.
class Reader {
  public:
    explicit Reader(Diagnostics& diagnostics) : diagnostics_(diagnostics) {}

    void problem(const std::string& path, std::string message) {
        if (diagnostics_.size() < kMaxDiagnostics) {
            diagnostics_.add(path, std::move(message));
        }
    }

    [[nodiscard]] bool full() const { return diagnostics_.size() >= kMaxDiagnostics; }

    // nullptr (and a problem when required) if the key is absent.
    const Json* member(const Json& object, const std::string& key, const std::string& path,
                       bool required) {
        auto it = object.find(key);
        if (it == object.end()) {
            if (required) {
                problem(join(path, key), "missing");
            }
            return nullptr;
        }
        return &*it;
    }

    std::optional<double> number(const Json& v, const std::string& path) {
        if (!v.is_number()) {
            problem(path, "expected a number, got " + describe(v));
            return std::nullopt;
        }
        const auto d = v.get<double>();
        if (!std::isfinite(d)) {
            problem(path, "must be a finite number");
            return std::nullopt;
        }
        return d;
    }

    std::optional<std::int64_t> integer(const Json& v, const std::string& path) {
        if (v.is_number_integer()) {
            if (v.is_number_unsigned() &&
                v.get<std::uint64_t>() >
                    static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
                problem(path, "integer out of range");
                return std::nullopt;
            }
            return v.get<std::int64_t>();
        }
        if (v.is_number_float()) {
            const auto d = v.get<double>();
            if (detail::is_exact_integer(d)) {
                return static_cast<std::int64_t>(d);
            }
        }
        problem(path, "expected an integer, got " + describe(v));
        return std::nullopt;
    }

    // An int that fits in `int`.
    std::optional<int> small_integer(const Json& v, const std::string& path) {
        auto i = integer(v, path);
        if (!i) {
            return std::nullopt;
        }
        if (*i < std::numeric_limits<int>::min() || *i > std::numeric_limits<int>::max()) {
            problem(path, "integer out of range");
            return std::nullopt;
        }
        return static_cast<int>(*i);
    }

    std::optional<std::string> string(const Json& v, const std::string& path) {
        if (!v.is_string()) {
            problem(path, "expected a string, got " + describe(v));
            return std::nullopt;
        }
        return v.get<std::string>();
    }

    bool expect_array(const Json& v, const std::string& path) {
        if (!v.is_array()) {
            problem(path, "expected an array, got " + describe(v));
            return false;
        }
        return true;
    }

    bool expect_object(const Json& v, const std::string& path) {
        if (!v.is_object()) {
            problem(path, "expected an object, got " + describe(v));
            return false;
        }
        return true;
    }

    static std::string join(const std::string& path, const std::string& key) {
        return path.empty() ? key : path + "." + key;
    }

    static std::string index(const std::string& path, std::size_t i) {
        return path + "[" + std::to_string(i) + "]";
    }

  private:
    static std::string describe(const Json& v) {
        if (v.is_string()) {
            return "a string";
        }
        if (v.is_boolean()) {
            return "a boolean";
        }
        if (v.is_number()) {
            return "a number";
        }
        return std::string(v.is_null() ? "null" : (v.is_array() ? "an array" : "an object"));
    }

    Diagnostics& diagnostics_;
};

void read_event(Reader& r, const Json& j, const std::string& path, const Timeline& t,
                std::vector<TimelineEvent>& out) {
    if (!r.expect_object(j, path)) {
        return;
    }
    TimelineEvent e;
    bool ok = true;
    const int num_ranks = t.num_ranks();

    if (const auto* v = r.member(j, "rank", path, true)) {
        const std::string p = Reader::join(path, "rank");
        if (auto rank = r.small_integer(*v, p)) {
            if (*rank < 0 || *rank >= num_ranks) {
                r.problem(p, "rank " + std::to_string(*rank) + " out of range (the timeline has " +
                                 std::to_string(num_ranks) + " devices)");
                ok = false;
            } else {
                e.rank = *rank;
            }
        } else {
            ok = false;
        }
    } else {
        ok = false;
    }

    if (const auto* v = r.member(j, "action", path, true)) {
        const std::string p = Reader::join(path, "action");
        if (auto text = r.string(*v, p)) {
            if (auto action = parse_action(*text)) {
                e.action = *action;
                if (t.num_stages > 0 && (action->stage < 0 || action->stage >= t.num_stages)) {
                    r.problem(p, "stage " + std::to_string(action->stage) +
                                     " out of range (num_stages is " +
                                     std::to_string(t.num_stages) + ")");
                    ok = false;
                }
                if (t.num_microbatches > 0 &&
                    (action->microbatch < 0 || action->microbatch >= t.num_microbatches)) {
                    r.problem(p, "micro-batch " + std::to_string(action->microbatch) +
                                     " out of range (num_microbatches is " +
                                     std::to_string(t.num_microbatches) + ")");
                    ok = false;
                }
            } else {
                r.problem(p, "'" + *text + "' is not an action (expected e.g. \"0F1\", \"2B0\", " +
                                 "\"1SEND_F3\")");
                ok = false;
            }
        } else {
            ok = false;
        }
    } else {
        ok = false;
    }

    std::optional<double> start;
    std::optional<double> end;
    if (const auto* v = r.member(j, "start_s", path, true)) {
        start = r.number(*v, Reader::join(path, "start_s"));
    }
    if (const auto* v = r.member(j, "end_s", path, true)) {
        end = r.number(*v, Reader::join(path, "end_s"));
    }
    if (start && end) {
        if (*end < *start) {
            r.problem(Reader::join(path, "end_s"),
                      "ends before it starts (start_s " + std::to_string(*start) + ")");
            ok = false;
        }
        e.start_s = *start;
        e.end_s = *end;
    } else {
        ok = false;
    }

    if (const auto* v = r.member(j, "bytes", path, false)) {
        const std::string p = Reader::join(path, "bytes");
        if (auto bytes = r.number(*v, p)) {
            if (*bytes < 0) {
                r.problem(p, "must not be negative");
                ok = false;
            } else {
                e.bytes = *bytes;
            }
        } else {
            ok = false;
        }
    }
    if (const auto* v = r.member(j, "peer_rank", path, false)) {
        const std::string p = Reader::join(path, "peer_rank");
        if (auto peer = r.small_integer(*v, p)) {
            if (*peer < -1 || *peer >= num_ranks) {
                r.problem(p, "rank " + std::to_string(*peer) + " out of range (the timeline has " +
                                 std::to_string(num_ranks) + " devices)");
                ok = false;
            } else {
                e.peer_rank = *peer;
            }
        } else {
            ok = false;
        }
    }
    if (ok) {
        out.push_back(e);
    }
}

void read_memory(Reader& r, const Json& j, const std::string& path, Timeline& t) {
    if (!r.expect_array(j, path)) {
        return;
    }
    if (j.size() != t.devices.size()) {
        r.problem(path, "has " + std::to_string(j.size()) + " entries, expected one per device (" +
                            std::to_string(t.devices.size()) + ")");
        return;
    }
    t.memory.assign(j.size(), {});
    for (std::size_t rank = 0; rank < j.size() && !r.full(); ++rank) {
        const std::string rank_path = Reader::index(path, rank);
        if (!r.expect_array(j[rank], rank_path)) {
            continue;
        }
        for (std::size_t i = 0; i < j[rank].size() && !r.full(); ++i) {
            const std::string p = Reader::index(rank_path, i);
            const Json& sample = j[rank][i];
            if (!sample.is_array() || sample.size() != 2) {
                r.problem(p, "expected a [time_s, bytes] pair");
                continue;
            }
            auto time = r.number(sample[0], Reader::index(p, 0));
            auto bytes = r.integer(sample[1], Reader::index(p, 1));
            if (bytes && *bytes < 0) {
                r.problem(Reader::index(p, 1), "must not be negative");
                bytes.reset();
            }
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
    Reader r(diagnostics);
    if (!j.is_object()) {
        throw InputError("", "a timeline must be a JSON object");
    }

    if (const auto* v = r.member(j, "format", "", true)) {
        auto format = r.string(*v, "format");
        if (format && *format != Timeline::kFormat) {
            r.problem("format", "expected \"" + std::string(Timeline::kFormat) + "\", got \"" +
                                    *format + "\"");
        }
    }
    if (const auto* v = r.member(j, "version", "", true)) {
        auto version = r.integer(*v, "version");
        if (version && *version != Timeline::kVersion) {
            r.problem("version", "unsupported version " + std::to_string(*version) +
                                     " (this program reads version " +
                                     std::to_string(Timeline::kVersion) + ")");
        }
    }
    if (!diagnostics.empty()) {
        // Not a timeline this program understands: the rest would only add noise.
        throw InputError(std::move(diagnostics));
    }

    Timeline t;
    if (const auto* v = r.member(j, "source", "", false)) {
        if (auto s = r.string(*v, "source")) {
            t.source = *s;
        }
    }
    if (const auto* v = r.member(j, "schedule", "", false)) {
        if (auto s = r.string(*v, "schedule")) {
            t.schedule = *s;
        }
    }
    for (auto [key, field] : {std::pair{"num_stages", &t.num_stages},
                              std::pair{"num_microbatches", &t.num_microbatches}}) {
        if (const auto* v = r.member(j, key, "", true)) {
            if (auto n = r.small_integer(*v, key)) {
                if (*n < 0) {
                    r.problem(key, "must not be negative");
                } else {
                    *field = *n;
                }
            }
        }
    }
    if (const auto* v = r.member(j, "devices", "", true)) {
        if (r.expect_array(*v, "devices")) {
            for (std::size_t i = 0; i < v->size(); ++i) {
                if (auto s = r.string((*v)[i], Reader::index("devices", i))) {
                    t.devices.push_back(*s);
                } else {
                    t.devices.emplace_back();
                }
            }
        }
    }
    if (const auto* v = r.member(j, "events", "", true)) {
        if (r.expect_array(*v, "events")) {
            t.events.reserve(v->size());
            for (std::size_t i = 0; i < v->size() && !r.full(); ++i) {
                read_event(r, (*v)[i], Reader::index("events", i), t, t.events);
            }
        }
    }
    if (const auto* v = r.member(j, "memory", "", false)) {
        read_memory(r, *v, "memory", t);
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
    const std::string text = read_text_file(path);
    ParsedJson parsed = parse_json(text);
    if (!parsed.problems.empty()) {
        Diagnostics located;
        for (const auto& d : parsed.problems.items()) {
            located.add(path.string() + ": " + d.path, d.message);
        }
        throw InputError(std::move(located));
    }
    return timeline_from_json(*parsed.value);
}

}  // namespace pipewright
