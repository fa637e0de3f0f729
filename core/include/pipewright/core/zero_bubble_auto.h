#pragma once

// zb-auto: a zero-bubble schedule built for the project's own costs, in the
// spirit of the heuristic scheduler of Qi et al. ("Zero Bubble Pipeline
// Parallelism", section 3.1): every device runs the input gradient I as soon
// as its gradient has arrived (the previous stage waits for it), otherwise a
// forward while its activations fit the memory limit, and fills the gaps
// with the weight gradients W that nothing waits for.

#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "pipewright/core/schedule.h"

namespace pipewright {

// A transfer between neighbouring stages: the link is busy for
// `occupancy_s` (bytes / bandwidth) and the data arrives `latency_s` after
// that, as the simulator times a send on a link of its own.
struct AutoTransfer {
    double occupancy_s = 0;
    double latency_s = 0;
};

struct AutoStageCosts {
    double forward_s = 1;
    double input_s = 1;   // I
    double weight_s = 1;  // W
    // Activations held from the forward's start until I, and from I until
    // W (the simulator's memory model: stash, then weight stash).
    double stash_bytes = 1;
    double weight_stash_bytes = 0;
    // What the stage's activations may take at once.
    double memory_limit_bytes = std::numeric_limits<double>::infinity();
    AutoTransfer to_next;      // its output to stage s + 1
    AutoTransfer to_previous;  // the gradient of its input to stage s - 1
};

struct AutoScheduleCosts {
    std::vector<AutoStageCosts> stages;
};

// Unit costs (F = I = W = 1, free transfers), each stage allowed as many
// micro-batches' activations as 1F1B's first stage holds (one per stage):
// the costs zb-auto assumes when no cost model is at hand.
[[nodiscard]] AutoScheduleCosts unit_auto_costs(int stages);

// The zb-auto lists for stage s on device s, one stage per device, built for
// `costs` under each stage's memory limit: the fastest of the heuristic's
// variants and of ZB-H1 and ZB-H2 where they respect the limits, timed as
// the simulator times them on links of their own, so it is never slower
// than zb-h1; of equally fast ones, the one that holds the least. Throws ScheduleError for another
// placement, or when a stage cannot hold even one micro-batch's activations.
[[nodiscard]] Schedule generate_zb_auto(const std::vector<int>& stage_rank, int microbatches,
                                        const AutoScheduleCosts& costs);

// The costs as one line of text, for the processes of a real run (which
// have no cost model) to build the same lists: per stage "F,I,W,stash,
// weight stash,memory limit,to next occupancy,latency,to previous
// occupancy,latency", stages separated by ';', every number exact.
[[nodiscard]] std::string auto_costs_text(const AutoScheduleCosts& costs);
// Reads that text back; throws ScheduleError saying what is wrong with it.
[[nodiscard]] AutoScheduleCosts auto_costs_from_text(std::string_view text);

// The time one iteration of a compute-only, one-stage-per-device schedule
// takes under `costs` (each send on a link of its own), and whether every
// stage stays within its memory limit: what generate_zb_auto compares.
struct AutoTiming {
    double iteration_s = 0;
    bool within_memory = true;
    double peak_bytes = 0;  // the most activations any stage holds at once
};
[[nodiscard]] AutoTiming time_for_costs(const Schedule& compute_only,
                                        const AutoScheduleCosts& costs);

}  // namespace pipewright
