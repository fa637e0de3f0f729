#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "pipewright/core/schedule.h"
#include "pipewright/core/timeline.h"
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
};

struct SimulationInput {
    const Schedule* schedule = nullptr;     // lowered (with sends and receives)
    std::vector<StageCost> stages;          // per stage, per micro-batch
    std::vector<std::string> rank_devices;  // names of the lanes
    std::vector<SimLink> links;
    // link_index[from_rank][to_rank] -> index into links (-1 on the diagonal)
    std::vector<std::vector<int>> link_index;
};

struct LinkUsage {
    std::string name;
    double bytes = 0;
    double busy_s = 0;
    int transfers = 0;
};

struct SimulationOutput {
    Timeline timeline;
    std::vector<LinkUsage> links;
};

// Times every action of the schedule. Each rank runs its actions in order on
// one compute stream; a receive waits until the data has arrived; a send does
// not block its rank: the transfer starts when the link is free (transfers
// sharing a link go one after another, first come first served) and arrives
// latency + bytes / bandwidth later. Throws SimulationError on deadlock.
[[nodiscard]] SimulationOutput simulate_schedule(const SimulationInput& input);

}  // namespace pipewright
