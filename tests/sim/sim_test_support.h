#pragma once

// Builds simulator inputs without a project, for exact analytic cases.

#include <algorithm>
#include <string>
#include <vector>

#include "pipewright/core/schedule_generators.h"
#include "pipewright/core/timeline_metrics.h"
#include "pipewright/sim/event_simulator.h"
#include "pipewright/sim/memory_model.h"

namespace pipewright::testing {

// What NCCL's model (docs/simulator.md) charges for one algorithm's `steps`
// and `wire_bytes` over `link`: the fastest protocol, each with its launch
// latency (a ring's or a tree's) and its scaling of the step latency and of
// the bandwidth the link reaches.
inline double nccl_seconds(bool tree, double steps, double wire_bytes, const LinkSpec& link) {
    struct Protocol {
        double ring_launch_us, tree_launch_us, latency, bandwidth;
    };
    const Protocol protocols[] = {{6.6, 6.8, 0.2, 0.5}, {14, 14, 0.4, 0.92}, {8.4, 8.4, 1, 1}};
    double best = 1e300;
    for (const Protocol& p : protocols) {
        const double launch = tree ? p.tree_launch_us : p.ring_launch_us;
        best = std::min(
            best, launch * 1e-6 + steps * link.latency_us * p.latency * 1e-6 +
                      wire_bytes / (link.bandwidth_GBps * link.efficiency * p.bandwidth * 1e9));
    }
    return best;
}

struct Pipeline {
    Schedule schedule;
    SimulationInput input;
};

// `stages` stages with stage s on rank s % ranks (for zbv and dualpipev, down the ranks
// and back: a V), every stage costing the same; transfers are free unless a
// link is given.
inline Pipeline make_pipeline(const std::string& name, int stages, int ranks, int microbatches,
                              StageCost cost, const LinkSpec* link = nullptr) {
    Pipeline p;
    std::vector<int> stage_rank;
    for (int s = 0; s < stages; ++s) {
        const bool v_shape = name == "zbv" || name == "dualpipev";
        stage_rank.push_back(!v_shape ? s % ranks : s < ranks ? s : 2 * ranks - 1 - s);
    }
    p.schedule = add_communication(generate_schedule(name, stage_rank, microbatches));
    p.input.stages.assign(static_cast<std::size_t>(stages), cost);
    const auto n = static_cast<std::size_t>(ranks);
    for (std::size_t r = 0; r < n; ++r) {
        p.input.rank_devices.push_back("dev" + std::to_string(r));
    }
    if (link != nullptr) {
        for (std::size_t a = 0; a < n; ++a) {
            for (std::size_t b = 0; b < n; ++b) {
                if (a != b) {
                    p.input.link_index.set(static_cast<int>(a), static_cast<int>(b),
                                           static_cast<int>(p.input.links.size()));
                    p.input.links.push_back(
                        {"dev" + std::to_string(a) + "->dev" + std::to_string(b), *link});
                }
            }
        }
    }
    p.input.schedule = &p.schedule;
    return p;
}

inline StageCost equal_cost(double forward, double backward_input, double backward_weight) {
    StageCost c;
    c.forward_s = forward;
    c.backward_input_s = backward_input;
    c.backward_weight_s = backward_weight;
    c.output_bytes = 1e6;
    c.input_bytes = 1e6;
    return c;
}

// The metrics of simulating `name` on make_pipeline's equal stages.
inline TimelineMetrics simulated_metrics(const std::string& name, int stages, int ranks,
                                         int microbatches, StageCost cost) {
    auto p = make_pipeline(name, stages, ranks, microbatches, cost);
    return timeline_metrics(simulate_schedule(p.input).timeline);
}

}  // namespace pipewright::testing
