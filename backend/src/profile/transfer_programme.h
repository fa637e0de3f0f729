#pragma once
// What the profiler's two ranks do to time transfers as a run's CPU ranks
// see them. Rank 0 runs it in the profiler, rank 1 in a process of its own
// (transfer_peer.h): two processes on the loopback interface, as a run's
// ranks are. Their stamps are on CLOCK_MONOTONIC (steady_clock), one clock
// for every process of the machine.
#include <cstdint>
#include <vector>

#include "pipewright/backend/transport.h"

namespace pipewright::backend::profiling {

struct TransferStamps {
    // Per size, `repeats` each, in order.
    std::vector<double> posted;   // rank 0: each one-way send posted
    std::vector<double> arrived;  // rank 1: each one-way tensor in its hands
    // Rank 1: seconds each receive took whose message had already come in,
    // `repeats` per size after the one-way times.
    std::vector<double> ready;
};

// For every size in turn, `repeats` times after a few untimed: rank 1 has
// posted its receive and waits; rank 0 sends a tensor made just before (each
// micro-batch's activation is a new one: sending the same buffer again
// measured 56 µs for 256 KiB here, where runs take 100-150 µs). Rank 0 stamps
// the send's posting, rank 1 the tensor in its hands.
// Then, per size, the receives a run takes once their message is in: rank 1
// keeps one receive posted ahead, as a run's channel does; once rank 0's send
// has completed, rank 1 computes (spins) a while as the message lands, then
// posts the next receive, takes the one that came in, and times the two (a
// run's RECV whose data came while the rank computed: 15-28 µs in runs here,
// where a link's fit would say nothing). Fills this rank's part of `stamps`.
void run_transfer_programme(Transport& t, const std::vector<std::int64_t>& sizes, int repeats,
                            TransferStamps& stamps);

}  // namespace pipewright::backend::profiling
