// Merges the ranks' records into the measured timeline and the metrics.
// Worker clocks are steady_clock, which Linux shares between processes, so
// events of different ranks need no offset correction on one machine.
#include "run_report.h"

#include <algorithm>
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

}  // namespace

RunReport build_run_report(const AnalyzedProject& project, const std::vector<nlohmann::json>& ranks,
                           int warmup) {
    const std::size_t steps = ranks.empty() ? 0 : ranks.front().at("steps").size();
    const int batch = project.microbatches * project.microbatch_size;
    std::vector<double> times(steps, 0), starts(steps, std::numeric_limits<double>::max());
    std::vector<std::optional<double>> losses(steps);
    for (std::size_t k = 0; k < steps; ++k) {
        double end = std::numeric_limits<double>::lowest();
        for (const auto& r : ranks) {
            const auto& s = r.at("steps").at(k);
            starts[k] = std::min(starts[k], s.at("start_s").get<double>());
            end = std::max(end, s.at("end_s").get<double>());
            if (s.contains("loss")) {
                losses[k] = s.at("loss").get<double>();
            }
        }
        times[k] = end - starts[k];
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
    if (steps > 0) {
        for (const auto& r : ranks) {
            const int rank = r.at("rank").get<int>();
            for (const auto& e : r.at("steps").at(shown).at("events")) {
                TimelineEvent ev;
                ev.rank = rank;
                ev.action = parse_action(e.at("action").get<std::string>()).value_or(Action{});
                ev.start_s = e.at("start_s").get<double>() - starts[shown];
                ev.end_s = e.at("end_s").get<double>() - starts[shown];
                ev.bytes = e.at("bytes").get<double>();
                ev.peer_rank = e.at("peer_rank").get<int>();
                t.events.push_back(ev);
            }
        }
    }
    const TimelineMetrics tm = timeline_metrics(t);

    nlohmann::json devices = nlohmann::json::array();
    for (const auto& r : ranks) {
        const int rank = r.at("rank").get<int>();
        const auto ri = static_cast<std::size_t>(rank);
        nlohmann::json d{{"rank", rank},
                         {"name", project.ranks.at(ri).path},
                         {"spec", "cpu"},
                         {"threads", r.at("threads")},
                         {"peak_memory_bytes", r.at("peak_rss_bytes")}};
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
