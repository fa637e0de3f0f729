// Merges the ranks' records into the measured timeline and the metrics.
#include "run/run_report.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "pipewright/backend/backend_error.h"
#include "pipewright/core/context_parallel.h"
#include "pipewright/core/timeline_metrics.h"

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
bool shared_clock(const std::vector<RankRecord>& ranks) {
    return std::all_of(ranks.begin(), ranks.end(), [&](const RankRecord& r) {
        return !r.clock.empty() && r.clock == ranks.front().clock;
    });
}

// Records that cannot be merged: the message names the rank and what is off.
void check_records(const AnalyzedProject& project, const std::vector<RankRecord>& ranks) {
    const auto world = static_cast<std::size_t>(project.world_size());
    std::vector<bool> seen(world, false);
    for (const auto& r : ranks) {
        const auto rank = static_cast<std::size_t>(r.rank);
        if (rank >= world) {
            throw BackendError("a record is of rank " + std::to_string(r.rank) +
                               ", but the run has " + std::to_string(world) + " ranks");
        }
        if (seen[rank]) {
            throw BackendError("rank " + std::to_string(r.rank) + " has two records");
        }
        seen[rank] = true;
        if (r.steps.size() != ranks.front().steps.size()) {
            throw BackendError("rank " + std::to_string(r.rank) + " recorded " +
                               std::to_string(r.steps.size()) + " steps, rank " +
                               std::to_string(ranks.front().rank) + " " +
                               std::to_string(ranks.front().steps.size()));
        }
        // Every replica runs the one schedule: a world rank's actions are
        // those of its rank in the pipeline.
        const int in_pipeline = project.pipeline_rank_of(r.rank);
        for (const auto& step : r.steps) {
            for (const auto& e : step.events) {
                if (e.action.stage < 0 || e.action.stage >= project.schedule.num_stages ||
                    project.schedule.stage_rank[static_cast<std::size_t>(e.action.stage)] !=
                        in_pipeline) {
                    throw BackendError("rank " + std::to_string(r.rank) + " recorded " +
                                       to_string(e.action) + " in step " +
                                       std::to_string(step.step) +
                                       ", which is not an action of that rank");
                }
            }
        }
    }
}

}  // namespace

RunReport build_run_report(const AnalyzedProject& project, const std::vector<RankRecord>& ranks,
                           int warmup, int steps_before) {
    check_records(project, ranks);
    const std::size_t steps = ranks.empty() ? 0 : ranks.front().steps.size();
    const bool shared = shared_clock(ranks);
    // The global batch: every replica trains on its share of it (a context
    // group's replicas on the same share).
    const int batch = project.microbatches * project.microbatch_size *
                      batch_shares(project.data_parallel(), project.project.context_parallel.size);
    // origin[k][i]: the time rank i's step k counts from.
    std::vector<std::vector<double>> origin(steps, std::vector<double>(ranks.size(), 0));
    std::vector<double> times(steps, 0);
    std::vector<std::optional<double>> losses(steps);
    for (std::size_t k = 0; k < steps; ++k) {
        double earliest = std::numeric_limits<double>::max();
        for (const auto& r : ranks) {
            earliest = std::min(earliest, r.steps[k].start_s);
        }
        for (std::size_t i = 0; i < ranks.size(); ++i) {
            const RecordedStep& s = ranks[i].steps[k];
            origin[k][i] = shared ? earliest : s.start_s;
            times[k] = std::max(times[k], s.end_s - origin[k][i]);
            if (s.loss) {
                losses[k] = s.loss;
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
    // One lane per rank of the run: replica 0's devices first, then replica
    // 1's, ... (compare matches a simulation's lanes to these by device).
    for (int r = 0; r < project.world_size(); ++r) {
        t.devices.push_back(project.world_device(r).path);
    }
    // Memory: what the rank holds above its runtime (LibTorch, Gloo), the
    // quantity the simulator's memory model predicts.
    t.memory.assign(static_cast<std::size_t>(project.world_size()), {});
    std::vector<std::int64_t> model_peak(ranks.size(), 0), sampled_peak(ranks.size(), 0);
    std::vector<std::vector<std::int64_t>> step_peaks(steps);
    for (std::size_t i = 0; i < ranks.size(); ++i) {
        const RankRecord& r = ranks[i];
        const auto rank = static_cast<std::size_t>(r.rank);
        for (std::size_t k = 0; k < steps; ++k) {
            std::int64_t peak = 0;
            for (const MemorySample& m : r.steps[k].memory) {
                peak = std::max(peak, m.bytes);
                if (k == shown) {
                    t.memory[rank].push_back(
                        {m.time_s - origin[k][i],
                         std::max<std::int64_t>(0, m.bytes - r.runtime_memory_bytes)});
                }
            }
            step_peaks[k].push_back(peak);
            if (k >= first) {
                sampled_peak[i] = std::max(sampled_peak[i], peak);
                model_peak[i] = std::max(model_peak[i],
                                         std::max<std::int64_t>(0, peak - r.runtime_memory_bytes));
            }
        }
        if (steps == 0) {
            continue;
        }
        // A worker names its peers by their rank in its replica's pipeline;
        // the timeline's lanes are the run's ranks.
        const int replica_offset = project.replica_of(r.rank) * project.num_ranks();
        for (TimelineEvent e : r.steps[shown].events) {
            e.rank = r.rank;
            if (e.peer_rank >= 0) {
                e.peer_rank += replica_offset;
            }
            e.start_s -= origin[shown][i];
            e.end_s -= origin[shown][i];
            t.events.push_back(e);
        }
    }
    if (std::all_of(t.memory.begin(), t.memory.end(), [](const auto& m) { return m.empty(); })) {
        t.memory.clear();
    }
    const TimelineMetrics tm = timeline_metrics(t);

    std::vector<RunDeviceMetrics> devices;
    for (std::size_t i = 0; i < ranks.size(); ++i) {
        const RankRecord& r = ranks[i];
        RunDeviceMetrics d;
        d.rank = r.rank;
        d.name = project.world_device(r.rank).path;
        d.spec = r.device;
        d.device_name = r.device_name;
        d.memory_kind = r.memory_kind;
        d.threads = r.threads;
        // The kernel updates getrusage's high-water mark lazily; a sample
        // can lie above it.
        d.peak_memory_bytes = std::max(r.peak_memory_bytes, sampled_peak[i]);
        d.runtime_memory_bytes = r.runtime_memory_bytes;
        d.peak_sampled_memory_bytes = sampled_peak[i];
        d.model_peak_memory_bytes = model_peak[i];
        const DeviceMetrics& m = tm.devices.at(static_cast<std::size_t>(r.rank));
        d.busy_s = m.busy_s;
        d.start_s = m.start_s;
        d.end_s = m.end_s;
        // A fraction, also where rounding puts a fully busy rank at -1e-16.
        d.bubble_fraction = std::clamp(m.bubble_fraction, 0.0, 1.0);
        devices.push_back(std::move(d));
    }
    RunMetrics& metrics = report.metrics;
    for (std::size_t k = 0; k < steps; ++k) {
        RunStepMetrics step;
        step.step = steps_before + static_cast<int>(k);
        step.iteration_time_s = times[k];
        step.loss = losses[k];
        step.samples_per_s = times[k] > 0 ? batch / times[k] : 0.0;
        step.peak_memory_bytes = step_peaks[k];
        step.warmup = k < first;
        metrics.steps.push_back(std::move(step));
    }
    const double throughput = iteration > 0 ? batch / iteration : 0;
    metrics.iteration_time_s = iteration;
    metrics.throughput_samples_per_s = throughput;
    metrics.timeline_step = static_cast<int>(shown);
    metrics.devices = devices;

    RunSummary& summary = report.summary;
    summary.schedule = project.schedule.name;
    summary.batch_size = batch;
    summary.microbatches = project.microbatches;
    summary.microbatch_size = project.microbatch_size;
    summary.data_parallel = project.data_parallel();
    summary.zero_stage = project.data_parallel() > 1 ? project.project.data_parallel.zero_stage : 0;
    summary.steps = static_cast<int>(steps);
    summary.first_step = steps_before + 1;
    summary.warmup_steps = static_cast<int>(first);
    summary.iteration_time_s = iteration;
    summary.throughput_samples_per_s = throughput;
    summary.bubble_fraction = std::clamp(tm.bubble_fraction, 0.0, 1.0);
    summary.clock = shared ? "shared" : "aligned at each iteration's barrier";
    summary.losses = losses;
    summary.devices = std::move(devices);
    return report;
}

}  // namespace pipewright::backend
