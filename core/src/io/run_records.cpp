#include "pipewright/core/run_records.h"

#include <climits>
#include <cmath>
#include <limits>

#include "pipewright/core/input_file.h"
#include "pipewright/core/json_parse.h"
#include "pipewright/core/json_reader.h"

namespace pipewright {
namespace {

constexpr Need kRequired = Need::required;
constexpr Need kOptional = Need::optional;
// Times on a monotonic clock, durations and rates: finite, within reason.
constexpr NumberRange kAnyTime{-1e15, 1e15};
constexpr NumberRange kNonNegative{0, 1e15};
constexpr NumberRange kFraction{0, 1};
// A loss can be anything finite (a diverging run's is huge); NaN and infinity
// are written as the strings loss_to_json gives.
constexpr NumberRange kAnyFinite{-std::numeric_limits<double>::max(),
                                 std::numeric_limits<double>::max()};

// null for a step without a loss.
nlohmann::json optional_loss(const std::optional<double>& v) {
    return v ? loss_to_json(*v) : nlohmann::json();
}

// A loss as loss_to_json wrote it: a number, or NaN and infinities by name.
std::optional<double> loss_value(const JsonValue& v) {
    if (v.json().is_string()) {
        if (const auto x = loss_from_json(v.json())) {
            return x;
        }
    }
    return v.number(kAnyFinite);
}

// Calls `read(element)` for each element of the array at `key`.
template <typename Read>
void for_each_element(const JsonObject& r, std::string_view key, Read read) {
    if (const auto list = r.array(key, kRequired)) {
        for (std::size_t i = 0; i < list->size() && !list->full(); ++i) {
            read(list->element(i));
        }
    }
}

int whole(const JsonObject& r, std::string_view key, std::int64_t min, int fallback) {
    return static_cast<int>(r.integer(key, kRequired, min, INT_MAX).value_or(fallback));
}

std::int64_t bytes(const JsonObject& r, std::string_view key) {
    return r.integer(key, kRequired, 0, std::numeric_limits<std::int64_t>::max()).value_or(0);
}

double seconds(const JsonObject& r, std::string_view key) {
    return r.number(key, kRequired, kAnyTime).value_or(0);
}

// A loss is a number, or null (or absent) when the step had none.
std::optional<double> loss(const JsonObject& r, std::string_view key) {
    const auto v = r.field(key, kOptional);
    if (!v || v->json().is_null()) {
        return std::nullopt;
    }
    return loss_value(*v);
}

nlohmann::json device_to_json(const RunDeviceMetrics& d) {
    return {{"rank", d.rank},
            {"name", d.name},
            {"spec", d.spec},
            {"device_name", d.device_name},
            {"memory_kind", d.memory_kind},
            {"threads", d.threads},
            {"peak_memory_bytes", d.peak_memory_bytes},
            {"runtime_memory_bytes", d.runtime_memory_bytes},
            {"peak_sampled_memory_bytes", d.peak_sampled_memory_bytes},
            {"model_peak_memory_bytes", d.model_peak_memory_bytes},
            {"busy_s", d.busy_s},
            {"start_s", d.start_s},
            {"end_s", d.end_s},
            {"bubble_fraction", d.bubble_fraction}};
}

std::vector<RunDeviceMetrics> read_devices(const JsonObject& parent) {
    std::vector<RunDeviceMetrics> devices;
    for_each_element(parent, "devices", [&](const JsonValue& element) {
        const JsonObject r(element);
        if (!r.ok()) {
            return;
        }
        RunDeviceMetrics d;
        d.rank = whole(r, "rank", 0, 0);
        d.name = r.string("name", kRequired).value_or("");
        d.spec = r.string("spec", kRequired).value_or("");
        d.device_name = r.string("device_name", kRequired).value_or("");
        d.memory_kind = r.string("memory_kind", kRequired).value_or("");
        d.threads = whole(r, "threads", 1, 1);
        d.peak_memory_bytes = bytes(r, "peak_memory_bytes");
        d.runtime_memory_bytes = bytes(r, "runtime_memory_bytes");
        d.peak_sampled_memory_bytes = bytes(r, "peak_sampled_memory_bytes");
        d.model_peak_memory_bytes = bytes(r, "model_peak_memory_bytes");
        d.busy_s = r.number("busy_s", kRequired, kNonNegative).value_or(0);
        d.start_s = r.number("start_s", kRequired, kNonNegative).value_or(0);
        d.end_s = r.number("end_s", kRequired, kNonNegative).value_or(0);
        d.bubble_fraction = r.number("bubble_fraction", kRequired, kFraction).value_or(0);
        r.reject_unknown({"rank", "name", "spec", "device_name", "memory_kind", "threads",
                          "peak_memory_bytes", "runtime_memory_bytes", "peak_sampled_memory_bytes",
                          "model_peak_memory_bytes", "busy_s", "start_s", "end_s",
                          "bubble_fraction"});
        devices.push_back(std::move(d));
    });
    return devices;
}

TimelineEvent read_event(const JsonObject& r, int rank) {
    TimelineEvent e;
    e.rank = rank;
    if (const auto text = r.string("action", kRequired)) {
        if (const auto action = parse_action(*text)) {
            e.action = *action;
        } else {
            r.error("action",
                    nlohmann::json(*text).dump() +
                        " is not an action (expected e.g. \"0F1\", \"2B0\", \"1SEND_F3\")");
        }
    }
    e.start_s = seconds(r, "start_s");
    e.end_s = seconds(r, "end_s");
    if (e.end_s < e.start_s) {
        r.error("end_s", "ends before it starts (start_s " + show_limit(e.start_s) + ")");
    }
    e.bytes = r.number("bytes", kRequired, kNonNegative).value_or(0);
    e.peer_rank = whole(r, "peer_rank", -1, -1);
    e.action.overlaps_next = r.boolean("overlaps_next", kOptional).value_or(false);
    r.reject_unknown({"action", "start_s", "end_s", "bytes", "peer_rank", "overlaps_next"});
    return e;
}

RecordedStep read_step(const JsonObject& r, int rank) {
    RecordedStep s;
    s.step = whole(r, "step", 0, 0);
    s.start_s = seconds(r, "start_s");
    s.end_s = seconds(r, "end_s");
    s.loss = loss(r, "loss");
    for_each_element(r, "events", [&](const JsonValue& element) {
        if (const JsonObject e(element); e.ok()) {
            s.events.push_back(read_event(e, rank));
        }
    });
    for_each_element(r, "memory", [&](const JsonValue& m) {
        const nlohmann::json& j = m.json();
        if (!j.is_array() || j.size() != 2 || !j[0].is_number() || !j[1].is_number_integer() ||
            j[1].get<std::int64_t>() < 0) {
            m.error("expected [time in seconds, bytes], got " + describe_json(j));
            return;
        }
        s.memory.push_back({j[0].get<double>(), j[1].get<std::int64_t>()});
    });
    r.reject_unknown({"step", "start_s", "end_s", "loss", "events", "memory"});
    return s;
}

template <typename T>
T parsed_or_throw(const std::string& text, const std::string& source,
                  std::optional<T> (*read)(const nlohmann::json&, Diagnostics&)) {
    ParsedJson parsed = parse_json(text);
    Diagnostics problems;
    std::optional<T> value;
    if (parsed.problems.empty()) {
        value = read(*parsed.value, problems);
    } else {
        problems = std::move(parsed.problems);
    }
    if (!value) {
        throw InputError(located_in(source, problems));
    }
    return std::move(*value);
}

}  // namespace
nlohmann::json to_json(const RankRecord& record) {
    nlohmann::json steps = nlohmann::json::array();
    for (const auto& s : record.steps) {
        nlohmann::json events = nlohmann::json::array();
        for (const auto& e : s.events) {
            nlohmann::json event{{"action", to_string(e.action)},
                                 {"start_s", e.start_s},
                                 {"end_s", e.end_s},
                                 {"bytes", e.bytes},
                                 {"peer_rank", e.peer_rank}};
            if (e.action.overlaps_next) {
                event["overlaps_next"] = true;
            }
            events.push_back(std::move(event));
        }
        // [time_s, bytes] pairs: one per action boundary, so kept compact.
        nlohmann::json memory = nlohmann::json::array();
        for (const auto& m : s.memory) {
            memory.push_back({m.time_s, m.bytes});
        }
        nlohmann::json step{{"step", s.step},
                            {"start_s", s.start_s},
                            {"end_s", s.end_s},
                            {"events", std::move(events)},
                            {"memory", std::move(memory)}};
        if (s.loss) {
            step["loss"] = loss_to_json(*s.loss);
        }
        steps.push_back(std::move(step));
    }
    return {{"rank", record.rank},
            {"threads", record.threads},
            {"clock", record.clock},
            {"device", record.device},
            {"device_name", record.device_name},
            {"memory_kind", record.memory_kind},
            {"peak_rss_bytes", record.peak_memory_bytes},
            {"runtime_rss_bytes", record.runtime_memory_bytes},
            {"steps", std::move(steps)}};
}

std::optional<RankRecord> read_rank_record(const nlohmann::json& j, Diagnostics& problems) {
    const std::size_t before = problems.size();
    const JsonObject r(j, problems);
    if (!r.ok()) {
        return std::nullopt;
    }
    RankRecord rec;
    rec.rank = whole(r, "rank", 0, 0);
    rec.threads = whole(r, "threads", 1, 1);
    rec.clock = r.string("clock", kRequired).value_or("");
    rec.device = r.string("device", kRequired).value_or("");
    rec.device_name = r.string("device_name", kRequired).value_or("");
    rec.memory_kind = r.one_of<std::string>("memory_kind", kRequired,
                                            {{"rss", "rss"}, {"cuda_allocated", "cuda_allocated"}})
                          .value_or("rss");
    rec.peak_memory_bytes = bytes(r, "peak_rss_bytes");
    rec.runtime_memory_bytes = bytes(r, "runtime_rss_bytes");
    for_each_element(r, "steps", [&](const JsonValue& element) {
        if (const JsonObject s(element); s.ok()) {
            rec.steps.push_back(read_step(s, rec.rank));
        }
    });
    r.reject_unknown({"rank", "threads", "clock", "device", "device_name", "memory_kind",
                      "peak_rss_bytes", "runtime_rss_bytes", "steps"});
    if (problems.size() != before) {
        return std::nullopt;
    }
    return rec;
}

nlohmann::json to_json(const RunMetrics& metrics) {
    nlohmann::json steps = nlohmann::json::array();
    for (const auto& s : metrics.steps) {
        steps.push_back({{"step", s.step},
                         {"iteration_time_s", s.iteration_time_s},
                         {"loss", optional_loss(s.loss)},
                         {"samples_per_s", s.samples_per_s},
                         {"peak_memory_bytes", s.peak_memory_bytes},
                         {"warmup", s.warmup}});
    }
    nlohmann::json devices = nlohmann::json::array();
    for (const auto& d : metrics.devices) {
        devices.push_back(device_to_json(d));
    }
    return {{"iteration_time_s", metrics.iteration_time_s},
            {"throughput_samples_per_s", metrics.throughput_samples_per_s},
            {"timeline_step", metrics.timeline_step},
            {"steps", std::move(steps)},
            {"devices", std::move(devices)}};
}

std::optional<RunMetrics> read_run_metrics(const nlohmann::json& j, Diagnostics& problems) {
    const std::size_t before = problems.size();
    const JsonObject r(j, problems);
    if (!r.ok()) {
        return std::nullopt;
    }
    RunMetrics m;
    m.iteration_time_s = r.number("iteration_time_s", kRequired, kNonNegative).value_or(0);
    m.throughput_samples_per_s =
        r.number("throughput_samples_per_s", kRequired, kNonNegative).value_or(0);
    m.timeline_step = whole(r, "timeline_step", 0, 0);
    for_each_element(r, "steps", [&](const JsonValue& element) {
        const JsonObject s(element);
        if (!s.ok()) {
            return;
        }
        RunStepMetrics step;
        step.step = whole(s, "step", 0, 0);
        step.iteration_time_s = s.number("iteration_time_s", kRequired, kNonNegative).value_or(0);
        step.loss = loss(s, "loss");
        step.samples_per_s = s.number("samples_per_s", kRequired, kNonNegative).value_or(0);
        for_each_element(s, "peak_memory_bytes", [&](const JsonValue& b) {
            if (const auto v = b.integer(0, std::numeric_limits<std::int64_t>::max())) {
                step.peak_memory_bytes.push_back(*v);
            }
        });
        step.warmup = s.boolean("warmup", kRequired).value_or(false);
        s.reject_unknown(
            {"step", "iteration_time_s", "loss", "samples_per_s", "peak_memory_bytes", "warmup"});
        m.steps.push_back(std::move(step));
    });
    m.devices = read_devices(r);
    r.reject_unknown(
        {"iteration_time_s", "throughput_samples_per_s", "timeline_step", "steps", "devices"});
    if (!m.steps.empty() && static_cast<std::size_t>(m.timeline_step) >= m.steps.size()) {
        r.error("timeline_step", "is " + std::to_string(m.timeline_step) + ", but there are " +
                                     std::to_string(m.steps.size()) + " steps");
    }
    if (problems.size() != before) {
        return std::nullopt;
    }
    return m;
}

nlohmann::json to_json(const RunSummary& s) {
    nlohmann::json losses = nlohmann::json::array();
    for (const auto& l : s.losses) {
        losses.push_back(optional_loss(l));
    }
    nlohmann::json devices = nlohmann::json::array();
    for (const auto& d : s.devices) {
        devices.push_back(device_to_json(d));
    }
    nlohmann::json j{{"schedule", s.schedule},
                     {"batch_size", s.batch_size},
                     {"microbatches", s.microbatches},
                     {"microbatch_size", s.microbatch_size},
                     {"data_parallel", s.data_parallel},
                     {"zero_stage", s.zero_stage},
                     {"steps", s.steps},
                     {"first_step", s.first_step},
                     {"warmup_steps", s.warmup_steps},
                     {"iteration_time_s", s.iteration_time_s},
                     {"throughput_samples_per_s", s.throughput_samples_per_s},
                     {"bubble_fraction", s.bubble_fraction},
                     {"clock", s.clock},
                     {"losses", std::move(losses)},
                     {"devices", std::move(devices)},
                     {"complete", s.complete}};
    if (!s.out_dir.empty()) {
        j["out_dir"] = s.out_dir;
    }
    if (s.nnodes) {
        j["nnodes"] = *s.nnodes;
    }
    if (s.node_rank) {
        j["node_rank"] = *s.node_rank;
    }
    return j;
}

std::optional<RunSummary> read_run_summary(const nlohmann::json& j, Diagnostics& problems) {
    const std::size_t before = problems.size();
    const JsonObject r(j, problems);
    if (!r.ok()) {
        return std::nullopt;
    }
    RunSummary s;
    s.schedule = r.string("schedule", kRequired).value_or("");
    s.batch_size = whole(r, "batch_size", 1, 1);
    s.microbatches = whole(r, "microbatches", 1, 1);
    s.microbatch_size = whole(r, "microbatch_size", 1, 1);
    s.data_parallel =
        static_cast<int>(r.integer("data_parallel", kOptional, 1, INT_MAX).value_or(1));
    s.zero_stage = static_cast<int>(r.integer("zero_stage", kOptional, 0, 3).value_or(0));
    s.steps = whole(r, "steps", 0, 0);
    s.first_step = static_cast<int>(r.integer("first_step", kOptional, 1, INT_MAX).value_or(1));
    s.warmup_steps = whole(r, "warmup_steps", 0, 0);
    s.iteration_time_s = r.number("iteration_time_s", kRequired, kNonNegative).value_or(0);
    s.throughput_samples_per_s =
        r.number("throughput_samples_per_s", kRequired, kNonNegative).value_or(0);
    s.bubble_fraction = r.number("bubble_fraction", kRequired, kFraction).value_or(0);
    s.clock = r.string("clock", kRequired).value_or("");
    for_each_element(r, "losses", [&](const JsonValue& l) {
        if (l.json().is_null()) {
            s.losses.emplace_back();
        } else if (const auto v = loss_value(l)) {
            s.losses.emplace_back(*v);
        }
    });
    s.devices = read_devices(r);
    s.out_dir = r.string("out_dir", kOptional).value_or("");
    s.complete = r.boolean("complete", kOptional).value_or(true);
    if (const auto n = r.integer("nnodes", kOptional, 1, INT_MAX)) {
        s.nnodes = static_cast<int>(*n);
    }
    if (const auto n = r.integer("node_rank", kOptional, 0, INT_MAX)) {
        s.node_rank = static_cast<int>(*n);
    }
    r.reject_unknown({"schedule", "batch_size", "microbatches", "microbatch_size", "data_parallel",
                      "zero_stage", "steps", "first_step", "warmup_steps", "iteration_time_s",
                      "throughput_samples_per_s", "bubble_fraction", "clock", "losses", "devices",
                      "out_dir", "complete", "nnodes", "node_rank"});
    if (problems.size() != before) {
        return std::nullopt;
    }
    return s;
}

RankRecord parse_rank_record(const std::string& text, const std::string& source) {
    return parsed_or_throw<RankRecord>(text, source, read_rank_record);
}

RunMetrics load_run_metrics_file(const std::filesystem::path& path) {
    const nlohmann::json j = parse_json_file(path);
    Diagnostics problems;
    auto metrics = read_run_metrics(j, problems);
    if (!metrics) {
        throw InputError(located_in(path, problems));
    }
    return std::move(*metrics);
}

RunSummary parse_run_summary(const std::string& text, const std::string& source) {
    return parsed_or_throw<RunSummary>(text, source, read_run_summary);
}

nlohmann::json loss_to_json(double loss) {
    if (std::isnan(loss)) {
        return "NaN";
    }
    if (std::isinf(loss)) {
        return loss > 0 ? "Infinity" : "-Infinity";
    }
    return loss;
}

std::optional<double> loss_from_json(const nlohmann::json& j) {
    if (j.is_number()) {
        return j.get<double>();
    }
    if (j.is_string()) {
        const auto& text = j.get_ref<const std::string&>();
        if (text == "NaN") {
            return std::numeric_limits<double>::quiet_NaN();
        }
        if (text == "Infinity" || text == "-Infinity") {
            return text[0] == '-' ? -std::numeric_limits<double>::infinity()
                                  : std::numeric_limits<double>::infinity();
        }
    }
    return std::nullopt;
}

}  // namespace pipewright
