// Merges the ranks' records into the measured timeline and the metrics.
#include "run_report.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "pipewright/sim/metrics.h"

namespace pipewright::backend {
namespace {

double median(std::vector<double> v) {
    if (v.empty()) {
        return 0;
    }
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Ranks whose records carry the same clock id (the boot id) share
// CLOCK_MONOTONIC: on one machine the ranks' events line up as recorded.
// Across machines the clocks are unrelated, so each rank's events are placed
// relative to its own exit from the barrier that opens the iteration (the
// barrier releases all ranks within a network latency of each other).
bool shared_clock(const std::vector<nlohmann::json>& ranks) {
    for (const auto& r : ranks) {
        if (r.value("clock", "").empty() ||
            r.value("clock", "") != ranks.front().value("clock", "")) {
            return false;
        }
    }
    return true;
}

}  // namespace

RunReport build_run_report(const AnalyzedProject& project, const std::vector<nlohmann::json>& ranks,
                           int warmup) {
    const std::size_t steps = ranks.empty() ? 0 : ranks.front().at("steps").size();
    for (const auto& r : ranks) {
        if (r.at("steps").size() != steps) {
            throw std::runtime_error("rank " + r.at("rank").dump() + " recorded " +
                                     std::to_string(r.at("steps").size()) + " steps, rank " +
                                     ranks.front().at("rank").dump() + " " + std::to_string(steps));
        }
    }
    const bool shared = shared_clock(ranks);
    const int batch = project.microbatches * project.microbatch_size;
    // origin[k][i]: the time rank i's step k counts from.
    std::vector<std::vector<double>> origin(steps, std::vector<double>(ranks.size(), 0));
    std::vector<double> times(steps, 0);
    std::vector<std::optional<double>> losses(steps);
    for (std::size_t k = 0; k < steps; ++k) {
        double earliest = std::numeric_limits<double>::max();
        for (const auto& r : ranks) {
            earliest = std::min(earliest, r.at("steps").at(k).at("start_s").get<double>());
        }
        for (std::size_t i = 0; i < ranks.size(); ++i) {
            const auto& s = ranks[i].at("steps").at(k);
            origin[k][i] = shared ? earliest : s.at("start_s").get<double>();
            times[k] = std::max(times[k], s.at("end_s").get<double>() - origin[k][i]);
            if (s.contains("loss")) {
                losses[k] = s.at("loss").get<double>();
            }
        }
    }
    const std::size_t first = warmup >= 0 && static_cast<std::size_t>(warmup) < steps
                                  ? static_cast<std::size_t>(warmup)
                                  : 0;
    const std::vector<double> measured(times.begin() + static_cast<std::ptrdiff_t>(first),
                                       times.end());
    const double iteration = median(measured);

    // The timeline shows the measured step closest to the median, so that
    // it is typical rather than the first (cold) or an unlucky one.
    std::size_t shown = first;
    for (std::size_t k = first; k < steps; ++k) {
        if (std::abs(times[k] - iteration) < std::abs(times[shown] - iteration)) {
            shown = k;
        }
    }
    RunReport report;
    Timeline& t = report.timeline;
    t.source = "measured";
    t.schedule = project.schedule.name;
    t.num_stages = project.schedule.num_stages;
    t.num_microbatches = project.schedule.num_microbatches;
    for (const auto& loc : project.ranks) {
        t.devices.push_back(loc.path);
    }
    // Memory: what the rank holds above its runtime (LibTorch, Gloo), the
    // quantity the simulator's memory model predicts.
    t.memory.assign(project.ranks.size(), {});
    std::vector<std::int64_t> model_peak(ranks.size(), 0), sampled_peak(ranks.size(), 0);
    nlohmann::json step_peaks(steps, nlohmann::json::array());
    for (std::size_t i = 0; i < ranks.size(); ++i) {
        const auto& r = ranks[i];
        const auto rank = r.at("rank").get<std::size_t>();
        const std::int64_t runtime = r.value("runtime_rss_bytes", std::int64_t{0});
        for (std::size_t k = 0; k < steps; ++k) {
            const auto& s = r.at("steps").at(k);
            std::int64_t peak = 0;
            for (const auto& m : s.value("memory", nlohmann::json::array())) {
                const auto bytes = m.at(1).get<std::int64_t>();
                peak = std::max(peak, bytes);
                if (k == shown) {
                    t.memory.at(rank).push_back({m.at(0).get<double>() - origin[k][i],
                                                 std::max<std::int64_t>(0, bytes - runtime)});
                }
            }
            step_peaks[k].push_back(peak);
            if (k >= first) {
                sampled_peak[i] = std::max(sampled_peak[i], peak);
                model_peak[i] = std::max(model_peak[i], std::max<std::int64_t>(0, peak - runtime));
            }
        }
        if (steps == 0) {
            continue;
        }
        for (const auto& e : r.at("steps").at(shown).at("events")) {
            TimelineEvent ev;
            ev.rank = static_cast<int>(rank);
            ev.action = parse_action(e.at("action").get<std::string>()).value_or(Action{});
            ev.start_s = e.at("start_s").get<double>() - origin[shown][i];
            ev.end_s = e.at("end_s").get<double>() - origin[shown][i];
            ev.bytes = e.at("bytes").get<double>();
            ev.peer_rank = e.at("peer_rank").get<int>();
            t.events.push_back(ev);
        }
    }
    if (std::all_of(t.memory.begin(), t.memory.end(), [](const auto& m) { return m.empty(); })) {
        t.memory.clear();
    }
    const TimelineMetrics tm = timeline_metrics(t);

    nlohmann::json devices = nlohmann::json::array();
    for (std::size_t i = 0; i < ranks.size(); ++i) {
        const auto& r = ranks[i];
        const int rank = r.at("rank").get<int>();
        const auto ri = static_cast<std::size_t>(rank);
        nlohmann::json d{{"rank", rank},
                         {"name", project.ranks.at(ri).path},
                         {"spec", r.value("device", std::string("cpu"))},
                         {"device_name", r.value("device_name", std::string("CPU"))},
                         // rss: the process's resident set; cuda_allocated:
                         // bytes of tensors on the GPU (caching allocator)
                         {"memory_kind", r.value("memory_kind", std::string("rss"))},
                         {"threads", r.at("threads")},
                         // The kernel updates getrusage's high-water mark
                         // lazily; a sample can lie above it.
                         {"peak_memory_bytes",
                          std::max(r.at("peak_rss_bytes").get<std::int64_t>(), sampled_peak[i])},
                         {"runtime_memory_bytes", r.value("runtime_rss_bytes", 0)},
                         {"peak_sampled_memory_bytes", sampled_peak[i]},
                         {"model_peak_memory_bytes", model_peak[i]}};
        for (const auto& m : tm.devices) {
            if (m.rank == rank) {
                d["busy_s"] = m.busy_s;
                d["start_s"] = m.start_s;
                d["end_s"] = m.end_s;
                d["bubble_fraction"] = m.bubble_fraction;
            }
        }
        devices.push_back(d);
    }
    nlohmann::json loss_list = nlohmann::json::array();
    nlohmann::json step_list = nlohmann::json::array();
    for (std::size_t k = 0; k < steps; ++k) {
        loss_list.push_back(losses[k] ? nlohmann::json(*losses[k]) : nlohmann::json());
        step_list.push_back({{"step", k},
                             {"iteration_time_s", times[k]},
                             {"loss", loss_list.back()},
                             {"samples_per_s", times[k] > 0 ? batch / times[k] : 0.0},
                             {"peak_memory_bytes", step_peaks[k]},
                             {"warmup", k < first}});
    }
    const double throughput = iteration > 0 ? batch / iteration : 0;
    report.summary = {{"schedule", project.schedule.name},
                      {"batch_size", batch},
                      {"microbatches", project.microbatches},
                      {"microbatch_size", project.microbatch_size},
                      {"steps", steps},
                      {"warmup_steps", first},
                      {"iteration_time_s", iteration},
                      {"throughput_samples_per_s", throughput},
                      {"bubble_fraction", tm.bubble_fraction},
                      {"clock", shared ? "shared" : "aligned at each iteration's barrier"},
                      {"losses", loss_list},
                      {"devices", devices}};
    report.metrics = {{"iteration_time_s", iteration},
                      {"throughput_samples_per_s", throughput},
                      {"timeline_step", shown},
                      {"steps", step_list},
                      {"devices", devices}};
    return report;
}

}  // namespace pipewright::backend
