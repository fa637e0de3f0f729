#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipewright/core/output_file.h"
#include "pipewright/core/schedule.h"

namespace pipewright {

// One executed action. Compute actions occupy the rank's compute stream.
// A SEND spans the transfer on the link (from when it started moving to when
// it arrived); a RECV spans the time the rank waited for the data (zero when
// it had already arrived).
struct TimelineEvent {
    int rank = 0;
    Action action;
    double start_s = 0;
    double end_s = 0;
    double bytes = 0;    // bytes moved (sends and receives)
    int peer_rank = -1;  // other end of a send or receive

    [[nodiscard]] double duration_s() const { return end_s - start_s; }
    bool operator==(const TimelineEvent&) const = default;
};

// Memory held by one rank from `time_s` on.
struct MemorySample {
    double time_s = 0;
    std::int64_t bytes = 0;
    bool operator==(const MemorySample&) const = default;
};

// One iteration of a pipeline, simulated or measured: the same lanes and the
// same actions either way, so the two can be compared action by action.
struct Timeline {
    static constexpr const char* kFormat = "pipewright-timeline";
    static constexpr int kVersion = 1;

    std::string source = "simulated";  // or "measured"
    std::string schedule;
    int num_stages = 0;
    int num_microbatches = 0;
    std::vector<std::string> devices;  // rank -> device path
    std::vector<TimelineEvent> events;
    std::vector<std::vector<MemorySample>> memory;  // per rank, optional

    [[nodiscard]] int num_ranks() const { return static_cast<int>(devices.size()); }
    // From the earliest start to the latest end of any event.
    [[nodiscard]] double makespan_s() const;
    bool operator==(const Timeline&) const = default;
};

[[nodiscard]] nlohmann::json timeline_to_json(const Timeline& timeline);
// The text of timeline_to_json(timeline).dump(), written piece by piece: the
// document never exists whole in memory (large timelines are gigabytes).
void write_timeline_json(const Timeline& timeline, TextSink& out);
// About how many bytes write_timeline_json writes, from a sample of the
// events, without writing them.
[[nodiscard]] std::uint64_t estimate_timeline_json_bytes(const Timeline& timeline);
// Throws InputError naming the JSON path of the first problems found.
[[nodiscard]] Timeline timeline_from_json(const nlohmann::json& j);
void save_timeline_file(const Timeline& timeline, const std::filesystem::path& path);
// Throws InputError with every problem located in the file (parse_json_file).
[[nodiscard]] Timeline load_timeline_file(const std::filesystem::path& path);

// Chrome trace event JSON (chrome://tracing, Perfetto): one process per
// device, a compute and a communication thread in each, flow arrows from
// every send to its receive. Timestamps in microseconds.
[[nodiscard]] nlohmann::json timeline_to_chrome_trace(const Timeline& timeline);
// Its text (timeline_to_chrome_trace(timeline).dump()), written piece by piece.
void write_chrome_trace(const Timeline& timeline, TextSink& out);
// About how many bytes write_chrome_trace writes, from a sample of the events.
[[nodiscard]] std::uint64_t estimate_chrome_trace_bytes(const Timeline& timeline);

}  // namespace pipewright
