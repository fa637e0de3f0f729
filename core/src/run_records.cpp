#include "pipewright/core/run_records.h"

#include <climits>
#include <limits>

#include "json_reader.h"
#include "pipewright/core/input_file.h"
#include "pipewright/core/json_parse.h"

namespace pipewright {

using detail::describe;
using detail::ObjectReader;

namespace {

nlohmann::json optional_number(const std::optional<double>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json();
}

std::string element_path(const std::string& array_path, std::size_t i) {
    return array_path + "[" + std::to_string(i) + "]";
}

// Calls `read(element, path)` for each element of the array at `key`.
template <typename Read>
void for_each_element(ObjectReader& r, const std::string& key, bool required, Read read) {
    const nlohmann::json* list = r.array(key, required);
    if (list == nullptr) {
        return;
    }
    const std::string path = r.field_path(key);
    for (std::size_t i = 0; i < list->size(); ++i) {
        read((*list)[i], element_path(path, i));
    }
}

int whole(ObjectReader& r, const std::string& key, bool required, std::int64_t min, int fallback) {
    return static_cast<int>(r.integer(key, required, min, INT_MAX).value_or(fallback));
}

std::int64_t bytes(ObjectReader& r, const std::string& key, bool required) {
    return r.integer(key, required, 0, std::numeric_limits<std::int64_t>::max()).value_or(0);
}

// A time on a monotonic clock: any finite number of seconds.
double seconds(ObjectReader& r, const std::string& key) {
    return r.number(key, true, -ObjectReader::kMaxNumber).value_or(0);
}

// A loss is a number, or null when the step had none; NaN is written as null.
std::optional<double> loss(ObjectReader& r, const std::string& key) {
    const nlohmann::json* v = r.get(key);
    if (v == nullptr || v->is_null()) {
        return std::nullopt;
    }
    return r.number(key, false, -ObjectReader::kMaxNumber);
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

std::vector<RunDeviceMetrics> read_devices(ObjectReader& parent, Diagnostics& problems) {
    std::vector<RunDeviceMetrics> devices;
    for_each_element(parent, "devices", true, [&](const nlohmann::json& j, const std::string& p) {
        ObjectReader r(j, p, problems);
        RunDeviceMetrics d;
        d.rank = whole(r, "rank", true, 0, 0);
        d.name = r.string("name", true).value_or("");
        d.spec = r.string("spec", true).value_or("");
        d.device_name = r.string("device_name", true).value_or("");
        d.memory_kind = r.string("memory_kind", true).value_or("");
        d.threads = whole(r, "threads", true, 1, 1);
        d.peak_memory_bytes = bytes(r, "peak_memory_bytes", true);
        d.runtime_memory_bytes = bytes(r, "runtime_memory_bytes", true);
        d.peak_sampled_memory_bytes = bytes(r, "peak_sampled_memory_bytes", true);
        d.model_peak_memory_bytes = bytes(r, "model_peak_memory_bytes", true);
        d.busy_s = r.non_negative("busy_s", true).value_or(0);
        d.start_s = r.non_negative("start_s", true).value_or(0);
        d.end_s = r.non_negative("end_s", true).value_or(0);
        d.bubble_fraction = r.in_range("bubble_fraction", true, 0, 1).value_or(0);
        r.reject_unknown({"rank", "name", "spec", "device_name", "memory_kind", "threads",
                          "peak_memory_bytes", "runtime_memory_bytes", "peak_sampled_memory_bytes",
                          "model_peak_memory_bytes", "busy_s", "start_s", "end_s",
                          "bubble_fraction"});
        devices.push_back(std::move(d));
    });
    return devices;
}

TimelineEvent read_event(const nlohmann::json& j, const std::string& path, int rank,
                         Diagnostics& problems) {
    ObjectReader r(j, path, problems);
    TimelineEvent e;
    e.rank = rank;
    if (const auto text = r.string("action", true)) {
        if (const auto action = parse_action(*text)) {
            e.action = *action;
        } else {
            r.error("action", describe(nlohmann::json(*text)) +
                                  " is not an action (such as 1F0, 0SEND_F3 or 2RECV_B1)");
        }
    }
    e.start_s = seconds(r, "start_s");
    e.end_s = seconds(r, "end_s");
    if (r.is_object() && e.end_s < e.start_s) {
        r.error("end_s", "ends before it starts (start_s " + detail::show_limit(e.start_s) + ")");
    }
    e.bytes = r.non_negative("bytes", true).value_or(0);
    e.peer_rank = whole(r, "peer_rank", true, -1, -1);
    r.reject_unknown({"action", "start_s", "end_s", "bytes", "peer_rank"});
    return e;
}

RecordedStep read_step(const nlohmann::json& j, const std::string& path, int rank,
                       Diagnostics& problems) {
    ObjectReader r(j, path, problems);
    RecordedStep s;
    s.step = whole(r, "step", true, 0, 0);
    s.start_s = seconds(r, "start_s");
    s.end_s = seconds(r, "end_s");
    s.loss = loss(r, "loss");
    for_each_element(r, "events", true, [&](const nlohmann::json& e, const std::string& p) {
        s.events.push_back(read_event(e, p, rank, problems));
    });
    for_each_element(r, "memory", true, [&](const nlohmann::json& m, const std::string& p) {
        if (!m.is_array() || m.size() != 2 || !m[0].is_number() || !m[1].is_number_integer() ||
            m[1].get<std::int64_t>() < 0) {
            problems.add(p, "must be [time in seconds, bytes], got " + describe(m));
            return;
        }
        s.memory.push_back({m[0].get<double>(), m[1].get<std::int64_t>()});
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
        Diagnostics located;
        for (const auto& d : problems.items()) {
            located.add(source + ": " + d.path, d.message);
        }
        throw InputError(std::move(located));
    }
    return std::move(*value);
}

}  // namespace

nlohmann::json to_json(const RankRecord& record) {
    nlohmann::json steps = nlohmann::json::array();
    for (const auto& s : record.steps) {
        nlohmann::json events = nlohmann::json::array();
        for (const auto& e : s.events) {
            events.push_back({{"action", to_string(e.action)},
                              {"start_s", e.start_s},
                              {"end_s", e.end_s},
                              {"bytes", e.bytes},
                              {"peer_rank", e.peer_rank}});
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
            step["loss"] = *s.loss;
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
    ObjectReader r(j, "", problems);
    RankRecord rec;
    rec.rank = whole(r, "rank", true, 0, 0);
    rec.threads = whole(r, "threads", true, 1, 1);
    rec.clock = r.string("clock", true).value_or("");
    rec.device = r.string("device", true).value_or("");
    rec.device_name = r.string("device_name", true).value_or("");
    rec.memory_kind = r.string("memory_kind", true).value_or("");
    if (rec.memory_kind != "rss" && rec.memory_kind != "cuda_allocated" && r.has("memory_kind") &&
        r.get("memory_kind")->is_string()) {
        r.error("memory_kind", "must be \"rss\" or \"cuda_allocated\", got " +
                                   describe(nlohmann::json(rec.memory_kind)));
    }
    rec.peak_memory_bytes = bytes(r, "peak_rss_bytes", true);
    rec.runtime_memory_bytes = bytes(r, "runtime_rss_bytes", true);
    for_each_element(r, "steps", true, [&](const nlohmann::json& s, const std::string& p) {
        rec.steps.push_back(read_step(s, p, rec.rank, problems));
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
                         {"loss", optional_number(s.loss)},
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
    ObjectReader r(j, "", problems);
    RunMetrics m;
    m.iteration_time_s = r.non_negative("iteration_time_s", true).value_or(0);
    m.throughput_samples_per_s = r.non_negative("throughput_samples_per_s", true).value_or(0);
    m.timeline_step = whole(r, "timeline_step", true, 0, 0);
    for_each_element(r, "steps", true, [&](const nlohmann::json& j2, const std::string& p) {
        ObjectReader s(j2, p, problems);
        RunStepMetrics step;
        step.step = whole(s, "step", true, 0, 0);
        step.iteration_time_s = s.non_negative("iteration_time_s", true).value_or(0);
        step.loss = loss(s, "loss");
        step.samples_per_s = s.non_negative("samples_per_s", true).value_or(0);
        for_each_element(
            s, "peak_memory_bytes", true, [&](const nlohmann::json& b, const std::string& bp) {
                if (!b.is_number_integer() || b.get<std::int64_t>() < 0) {
                    problems.add(bp, "must be a whole number of bytes, got " + describe(b));
                    return;
                }
                step.peak_memory_bytes.push_back(b.get<std::int64_t>());
            });
        step.warmup = s.boolean("warmup").value_or(false);
        s.reject_unknown(
            {"step", "iteration_time_s", "loss", "samples_per_s", "peak_memory_bytes", "warmup"});
        m.steps.push_back(std::move(step));
    });
    m.devices = read_devices(r, problems);
    r.reject_unknown(
        {"iteration_time_s", "throughput_samples_per_s", "timeline_step", "steps", "devices"});
    if (r.is_object() && !m.steps.empty() &&
        static_cast<std::size_t>(m.timeline_step) >= m.steps.size()) {
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
        losses.push_back(optional_number(l));
    }
    nlohmann::json devices = nlohmann::json::array();
    for (const auto& d : s.devices) {
        devices.push_back(device_to_json(d));
    }
    nlohmann::json j{{"schedule", s.schedule},
                     {"batch_size", s.batch_size},
                     {"microbatches", s.microbatches},
                     {"microbatch_size", s.microbatch_size},
                     {"steps", s.steps},
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
    ObjectReader r(j, "", problems);
    RunSummary s;
    s.schedule = r.string("schedule", true).value_or("");
    s.batch_size = whole(r, "batch_size", true, 1, 1);
    s.microbatches = whole(r, "microbatches", true, 1, 1);
    s.microbatch_size = whole(r, "microbatch_size", true, 1, 1);
    s.steps = whole(r, "steps", true, 0, 0);
    s.warmup_steps = whole(r, "warmup_steps", true, 0, 0);
    s.iteration_time_s = r.non_negative("iteration_time_s", true).value_or(0);
    s.throughput_samples_per_s = r.non_negative("throughput_samples_per_s", true).value_or(0);
    s.bubble_fraction = r.in_range("bubble_fraction", true, 0, 1).value_or(0);
    s.clock = r.string("clock", true).value_or("");
    for_each_element(r, "losses", true, [&](const nlohmann::json& l, const std::string& p) {
        if (l.is_null()) {
            s.losses.emplace_back();
        } else if (l.is_number()) {
            s.losses.emplace_back(l.get<double>());
        } else {
            problems.add(p, "must be a number or null, got " + describe(l));
        }
    });
    s.devices = read_devices(r, problems);
    s.out_dir = r.string("out_dir", false).value_or("");
    s.complete = r.boolean("complete").value_or(true);
    if (r.has("nnodes")) {
        s.nnodes = whole(r, "nnodes", true, 1, 1);
    }
    if (r.has("node_rank")) {
        s.node_rank = whole(r, "node_rank", true, 0, 0);
    }
    r.reject_unknown({"schedule", "batch_size", "microbatches", "microbatch_size", "steps",
                      "warmup_steps", "iteration_time_s", "throughput_samples_per_s",
                      "bubble_fraction", "clock", "losses", "devices", "out_dir", "complete",
                      "nnodes", "node_rank"});
    if (problems.size() != before) {
        return std::nullopt;
    }
    return s;
}

RankRecord parse_rank_record(const std::string& text, const std::string& source) {
    return parsed_or_throw<RankRecord>(text, source, read_rank_record);
}

RunMetrics load_run_metrics_file(const std::filesystem::path& path) {
    return parsed_or_throw<RunMetrics>(read_text_file(path), path.string(), read_run_metrics);
}

RunSummary parse_run_summary(const std::string& text, const std::string& source) {
    return parsed_or_throw<RunSummary>(text, source, read_run_summary);
}

}  // namespace pipewright
