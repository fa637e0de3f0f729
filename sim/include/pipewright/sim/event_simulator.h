#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "pipewright/core/schedule.h"
#include "pipewright/core/timeline.h"
#include "pipewright/core/timeline_metrics.h"
#include "pipewright/core/topology.h"
#include "pipewright/sim/cost_model.h"

namespace pipewright {

// A schedule that cannot run to completion (ranks waiting on each other).
class SimulationError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// A directional connection between two ranks that carries one transfer at a
// time; several rank pairs may share one (all devices of a node share its
// network interface).
struct SimLink {
    std::string name;
    LinkSpec spec;
    // The sending rank moves the bytes itself and waits for them: CPU
    // workers on one machine, whose Gloo writes the message into a loopback
    // socket from the sending thread, the kernel carrying it to the
    // receiver's buffer in that same thread. Elsewhere a send leaves the
    // sender free to go on (NCCL's own stream; a network card's DMA).
    bool sender_copies = false;
    // It carries a tensor-parallel group's bytes at once, not one member's
    // (core/stage_boundary.h: group_shares_link).
    bool group_shares = false;
    // Seconds each receive of its transfers costs the receiving rank even
    // when the message has already come in: CPU workers' Gloo posts the
    // channel's next receive and hands over the tensor in the rank's own
    // thread (a profile's ready_receive_us). A receive that waits pays it
    // while it waits: the transfer's time already ends with the receiver
    // holding the tensor.
    double receive_s = 0;

    // The bytes a transfer puts on the link: a group's `group_bytes`, of
    // which each member sends `share`.
    [[nodiscard]] double carried_bytes(double group_bytes, double share) const {
        return group_shares ? group_bytes : group_bytes * share;
    }
};

// Which link carries the transfers from one rank to another. Only the pairs
// that communicate are listed (in a pipeline, neighbouring stages), so it
// grows with the stages, not with the square of the ranks (issue 18).
class LinkIndex {
  public:
    // Transfers from rank `from` to rank `to` go over links[link].
    void set(int from, int to, int link) { links_[key(from, to)] = link; }
    // -1 when the pair has no link (transfers between them are free).
    [[nodiscard]] int find(int from, int to) const {
        const auto it = links_.find(key(from, to));
        return it == links_.end() ? -1 : it->second;
    }
    // Pairs listed.
    [[nodiscard]] std::size_t size() const { return links_.size(); }

  private:
    static std::uint64_t key(int from, int to) {
        return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(from)) << 32) |
               static_cast<std::uint32_t>(to);
    }
    std::unordered_map<std::uint64_t, int> links_;
};

// A data-parallel collective of one stage among its replicas, on the rank's
// collective stream (one collective at a time, beside its compute).
struct SimCollective {
    double bytes = 0;    // what each replica contributes
    double seconds = 0;  // on free links
    // With buckets > 1 the reduction runs bucket by bucket as the stage's
    // last backward produces them (DDP's overlap); each takes bucket_seconds.
    int buckets = 1;
    double bucket_seconds = 0;
    std::vector<int> links;  // into SimulationInput::links, busy while it runs
    // The other replicas: it starts no earlier than they all reach it, and
    // ends no earlier than the last of them could finish it alone.
    double not_before_s = 0;
    double not_ended_before_s = 0;
};

// The collectives of one stage.
struct StageCollectives {
    SimCollective unshard;      // all-gather of the weights (ZeRO-3)
    SimCollective reduce_grad;  // all-reduce, or reduce-scatter from ZeRO-2 on
};

struct SimulationInput {
    const Schedule* schedule = nullptr;     // lowered (with sends and receives)
    std::vector<StageCost> stages;          // per stage, per micro-batch
    std::vector<std::string> rank_devices;  // names of the lanes
    std::vector<SimLink> links;
    LinkIndex link_index;  // (from rank, to rank) -> index into links
    // Bytes each rank holds throughout (weights, gradients, optimizer
    // state), where its memory peak starts; 0 for ranks not listed.
    std::vector<std::int64_t> static_bytes;
    // Per stage; empty without data parallelism (collectives then take no time).
    std::vector<StageCollectives> collectives;
    // false: no events in the output's timeline, only the totals. The events
    // take 48 bytes an action (1.2 GB for 25 M actions), and the summary of a
    // simulation needs none of them.
    bool record_timeline = true;
};

struct LinkUsage {
    std::string name;
    double bytes = 0;
    double busy_s = 0;
    int transfers = 0;
};

// When a stage's collectives ran (0, 0 for one that did not).
struct CollectiveTimes {
    double unshard_start_s = 0;
    double unshard_end_s = 0;
    double reduce_start_s = 0;
    double reduce_end_s = 0;
};

struct SimulationOutput {
    Timeline timeline;                         // events only when SimulationInput::record_timeline
    std::vector<CollectiveTimes> collectives;  // per stage, with SimulationInput::collectives
    std::vector<LinkUsage> links;
    MetricsAccumulator totals;                    // of every action, recorded or not
    std::vector<std::int64_t> peak_memory_bytes;  // per rank (memory_over_time's peak_bytes)
};

// Times every action of the schedule. Each rank runs its actions in order on
// one compute stream; a receive waits until the data has arrived; a send does
// not block its rank: the transfer starts when the link is free (transfers
// sharing a link go one after another, first come first served) and arrives
// latency + bytes / bandwidth later. The timeline lists the events rank by
// rank, each rank's in the order it runs them. Throws SimulationError on
// deadlock, or when a rank's list holds an action of a stage the schedule
// places on another rank (check_schedule reports both for a file).
[[nodiscard]] SimulationOutput simulate_schedule(const SimulationInput& input);

}  // namespace pipewright
