// Every generator at cluster scale: p = 128 devices, m = 4096 micro-batches
// (looped schedules, ZB-V and DualPipeV with two stages per device), timed for generation,
// lowering and checking, and for the event simulation of the result; see
// README.md, "Schedule library".

#include <benchmark/benchmark.h>

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "pipewright/core/schedule_check.h"
#include "pipewright/core/schedule_generators.h"
#include "pipewright/sim/event_simulator.h"

namespace {

using pipewright::Schedule;
using pipewright::ScheduleInfo;

constexpr int kDevices = 128;
constexpr int kMicrobatches = 4096;

// Stage s on device s mod p: one stage per device for the flat schedules,
// two for those that loop; for zbv and dualpipev, two in a V (down the
// devices and back). zb-auto is built for unit costs, as without a project.
std::vector<int> placement(const ScheduleInfo& info) {
    const bool looped = info.multiple_stages_per_rank && info.microbatching &&
                        info.kind != pipewright::ScheduleKind::gpipe;
    const bool v_shape = info.kind == pipewright::ScheduleKind::zbv ||
                         info.kind == pipewright::ScheduleKind::dualpipev;
    const int stages = kDevices * (looped ? 2 : 1);
    std::vector<int> stage_rank(static_cast<std::size_t>(stages));
    for (int s = 0; s < stages; ++s) {
        stage_rank[static_cast<std::size_t>(s)] =
            v_shape ? (s < kDevices ? s : 2 * kDevices - 1 - s) : s % kDevices;
    }
    return stage_rank;
}

Schedule lowered(const ScheduleInfo& info) {
    return pipewright::add_communication(
        pipewright::generate_schedule(info.kind, placement(info), kMicrobatches));
}

// The schedule and a simulator input on equal stages (1 ms forward, 1 ms
// input gradient, 1 ms weight gradient, 1 MB each way) and one link per
// direction between every pair of devices that talk (25 GB/s, 10 us).
struct SimCase {
    Schedule schedule;
    pipewright::SimulationInput input;
};

std::unique_ptr<SimCase> make_case(const ScheduleInfo& info) {
    auto c = std::make_unique<SimCase>();
    c->schedule = lowered(info);
    auto& in = c->input;
    in.schedule = &c->schedule;
    pipewright::StageCost cost;
    cost.forward_s = 1e-3;
    cost.backward_input_s = 1e-3;
    cost.backward_weight_s = 1e-3;
    cost.output_bytes = 1e6;
    cost.input_bytes = 1e6;
    cost.stash_bytes = 1e6;
    in.stages.assign(static_cast<std::size_t>(c->schedule.num_stages), cost);
    for (int r = 0; r < kDevices; ++r) {
        in.rank_devices.push_back("gpu" + std::to_string(r));
    }
    const auto add_link = [&in](int from, int to) {
        in.link_index.set(from, to, static_cast<int>(in.links.size()));
        in.links.push_back({in.rank_devices[static_cast<std::size_t>(from)] + "->" +
                                in.rank_devices[static_cast<std::size_t>(to)],
                            pipewright::LinkSpec{25.0, 10.0}});
    };
    for (int r = 0; r < kDevices; ++r) {
        const int next = (r + 1) % kDevices;  // the looped schedules wrap around
        add_link(r, next);
        add_link(next, r);
    }
    return c;
}

void set_action_counters(benchmark::State& state, std::size_t action_count) {
    const auto actions = static_cast<double>(action_count);
    state.counters["actions"] = actions;
    state.counters["time_per_action"] = benchmark::Counter(
        actions, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void generate_lower_check(benchmark::State& state, const ScheduleInfo* info) {
    std::size_t actions = 0;
    for (auto _ : state) {
        Schedule s = lowered(*info);
        const pipewright::Diagnostics problems = pipewright::check_schedule(s);
        if (!problems.empty()) {
            state.SkipWithError(problems.format().c_str());
            break;
        }
        actions = s.action_count();
        benchmark::DoNotOptimize(s);
    }
    set_action_counters(state, actions);
}

void simulate(benchmark::State& state, const ScheduleInfo* info) {
    static std::map<const ScheduleInfo*, std::unique_ptr<SimCase>> cache;
    auto& c = cache[info];
    if (!c) {
        c = make_case(*info);
    }
    for (auto _ : state) {
        pipewright::SimulationOutput out = pipewright::simulate_schedule(c->input);
        benchmark::DoNotOptimize(out);
        benchmark::ClobberMemory();
    }
    set_action_counters(state, c->schedule.action_count());
}

// One pair of benchmarks per generator that micro-batches (naive runs one).
const bool registered = [] {
    for (const ScheduleInfo& info : pipewright::schedule_catalog()) {
        if (!info.microbatching) {
            continue;
        }
        benchmark::RegisterBenchmark(("BM_GenerateLowerCheck/" + info.name).c_str(),
                                     generate_lower_check, &info)
            ->Unit(benchmark::kMillisecond);
        benchmark::RegisterBenchmark(("BM_Simulate/" + info.name).c_str(), simulate, &info)
            ->Unit(benchmark::kMillisecond);
    }
    return true;
}();

}  // namespace

BENCHMARK_MAIN();
