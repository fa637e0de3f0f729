#pragma once

// The files a real run leaves in its folder, as types: each rank's record
// (rank-R.json, written by the worker and merged by the launcher), the run's
// metrics (metrics.json) and its summary (what `run --json` prints and
// summary.json holds). The backend writes them and the command line and the
// studio read them through these functions only, so a field means the same
// thing everywhere and a malformed file is an error naming the field.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipewright/core/diagnostics.h"
#include "pipewright/core/timeline.h"

namespace pipewright {

// One training step as one rank measured it, on its own monotonic clock.
struct RecordedStep {
    int step = 0;
    double start_s = 0;
    double end_s = 0;
    std::optional<double> loss;  // on the rank with the last stage
    // This rank's actions; TimelineEvent::rank is the record's rank.
    std::vector<TimelineEvent> events;
    std::vector<MemorySample> memory;  // one per action boundary

    bool operator==(const RecordedStep&) const = default;
};

// rank-R.json.
struct RankRecord {
    int rank = 0;
    int threads = 1;
    // Records with the same clock id (the boot id) share a monotonic clock.
    std::string clock;
    std::string device = "cpu";  // "cpu", "cuda:0", ...
    std::string device_name = "CPU";
    // "rss": the process's resident set; "cuda_allocated": the caching
    // allocator's tensors on the GPU.
    std::string memory_kind = "rss";
    std::int64_t peak_memory_bytes = 0;
    std::int64_t runtime_memory_bytes = 0;  // held before the model existed
    std::vector<RecordedStep> steps;

    bool operator==(const RankRecord&) const = default;
};

// One rank's figures in the summary and in metrics.json.
struct RunDeviceMetrics {
    int rank = 0;
    std::string name;  // device path in the project
    std::string spec = "cpu";
    std::string device_name = "CPU";
    std::string memory_kind = "rss";
    int threads = 1;
    std::int64_t peak_memory_bytes = 0;
    std::int64_t runtime_memory_bytes = 0;
    std::int64_t peak_sampled_memory_bytes = 0;
    std::int64_t model_peak_memory_bytes = 0;  // above the runtime
    double busy_s = 0;
    double start_s = 0;
    double end_s = 0;
    double bubble_fraction = 0;

    bool operator==(const RunDeviceMetrics&) const = default;
};

struct RunStepMetrics {
    int step = 0;
    double iteration_time_s = 0;
    std::optional<double> loss;
    double samples_per_s = 0;
    std::vector<std::int64_t> peak_memory_bytes;  // per record, in record order
    bool warmup = false;

    bool operator==(const RunStepMetrics&) const = default;
};

// metrics.json.
struct RunMetrics {
    double iteration_time_s = 0;  // median of the measured steps
    double throughput_samples_per_s = 0;
    int timeline_step = 0;  // the step timeline.json shows
    std::vector<RunStepMetrics> steps;
    std::vector<RunDeviceMetrics> devices;

    bool operator==(const RunMetrics&) const = default;
};

// What `run --json` prints; summary.json of a node other than node 0.
struct RunSummary {
    std::string schedule;
    int batch_size = 0;
    int microbatches = 0;
    int microbatch_size = 0;
    // Replicas of the pipeline (batch_size is the global batch, microbatches
    // and microbatch_size are per replica) and the ZeRO stage they ran.
    int data_parallel = 1;
    int zero_stage = 0;
    int steps = 0;
    // The first of them, counted from 1: after the checkpoint's steps when
    // the run resumed one.
    int first_step = 1;
    int warmup_steps = 0;
    double iteration_time_s = 0;
    double throughput_samples_per_s = 0;
    double bubble_fraction = 0;
    std::string clock;
    std::vector<std::optional<double>> losses;  // per step
    std::vector<RunDeviceMetrics> devices;
    // Set by the launcher once the outputs are written.
    std::string out_dir;
    bool complete = true;  // false: this node's ranks only
    std::optional<int> nnodes;
    std::optional<int> node_rank;

    bool operator==(const RunSummary&) const = default;
};

// A loss in JSON: a number, or "NaN", "Infinity" and "-Infinity" (JSON has
// no numbers for them, and null means that a step had no loss), and back
// (nullopt for anything else).
[[nodiscard]] nlohmann::json loss_to_json(double loss);
[[nodiscard]] std::optional<double> loss_from_json(const nlohmann::json& j);

[[nodiscard]] nlohmann::json to_json(const RankRecord& record);
[[nodiscard]] nlohmann::json to_json(const RunMetrics& metrics);
[[nodiscard]] nlohmann::json to_json(const RunSummary& summary);

// Each reports every problem with its JSON path to `problems` and returns
// nullopt when there was any.
[[nodiscard]] std::optional<RankRecord> read_rank_record(const nlohmann::json& j,
                                                         Diagnostics& problems);
[[nodiscard]] std::optional<RunMetrics> read_run_metrics(const nlohmann::json& j,
                                                         Diagnostics& problems);
[[nodiscard]] std::optional<RunSummary> read_run_summary(const nlohmann::json& j,
                                                         Diagnostics& problems);

// From text (a file's or the store's); throw InputError whose message names
// `source` (the file, or "rank 3's record"), the field and the problem.
[[nodiscard]] RankRecord parse_rank_record(const std::string& text, const std::string& source);
[[nodiscard]] RunMetrics load_run_metrics_file(const std::filesystem::path& path);
[[nodiscard]] RunSummary parse_run_summary(const std::string& text, const std::string& source);

}  // namespace pipewright
