#pragma once

// Collectives measured among the devices of one machine by `pipewright
// calibrate` (NCCL between GPUs, Gloo between CPU workers), which price the
// collectives of any group that lies inside one such machine, in place of
// the NCCL model's link figures (docs/simulator.md). A group larger than the
// largest measured one, or one that leaves the machine, keeps the model.

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace pipewright {

// An all-to-all is a mixture of experts' dispatch and combine of tokens.
enum class CollectiveKind { all_reduce, reduce_scatter, all_gather, all_to_all };

// "all-reduce", "reduce-scatter", "all-gather", "all-to-all".
[[nodiscard]] std::string_view to_string(CollectiveKind k);
// The share of a member's buffer that its links carry in a ring of
// `members`: (d − 1)/d, twice that for an all-reduce (a reduce-scatter, then
// an all-gather). Bytes times it over the time is the bus bandwidth
// nccl-tests reports.
[[nodiscard]] double bus_traffic_share(CollectiveKind kind, int members);

// One collective among `members` devices, timed back to back. `bytes` as the
// simulator counts them (collective_cost.h): each member's whole buffer (an
// all-gather's output, a reduce-scatter's input, what a member of an
// all-to-all sends in all).
struct CollectiveSample {
    CollectiveKind kind = CollectiveKind::all_reduce;
    int members = 2;
    std::int64_t bytes = 0;
    double seconds = 0;
    bool operator==(const CollectiveSample&) const = default;
};

class MeasuredCollectives {
  public:
    explicit MeasuredCollectives(std::vector<CollectiveSample> samples);

    // Seconds of one `kind` over `bytes` among `members` devices of the
    // machine, from the samples of the smallest measured group at least that
    // large, its time scaled by the ratio of their bus_traffic_share. Between measured sizes the
    // time is interpolated log-log; below the smallest it stays at the smallest's time
    // (latency-bound), above the largest it grows with the bytes at the largest's rate. nullopt
    // when the kind was not measured, or no measured group is as large.
    [[nodiscard]] std::optional<double> seconds(CollectiveKind kind, int members,
                                                double bytes) const;
    // The largest group measured of any kind (0: none).
    [[nodiscard]] int largest_group() const { return largest_; }

  private:
    std::vector<CollectiveSample> samples_;  // by kind, members, bytes
    int largest_ = 0;
};

}  // namespace pipewright
