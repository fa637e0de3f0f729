// Throughput of the event simulator and of the paths around it; see README.md
// for how to run it and how to read the figures.

#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pipewright/core/analysis.h"
#include "pipewright/core/project_io.h"
#include "pipewright/core/schedule_check.h"
#include "pipewright/core/schedule_generators.h"
#include "pipewright/sim/event_simulator.h"
#include "pipewright/sim/simulation.h"

namespace {

using pipewright::Schedule;
using pipewright::SimulationInput;

// Equal stages: 1 ms forward, 2 ms backward, 1 MB of activations each way.
constexpr double kForwardS = 1e-3;
constexpr double kBackwardS = 2e-3;
constexpr double kActivationBytes = 1e6;
constexpr pipewright::LinkSpec kNeighbourLink{25.0, 10.0};  // 25 GB/s, 10 us

std::vector<int> one_stage_per_rank(int ranks) {
    std::vector<int> stage_rank(static_cast<std::size_t>(ranks));
    for (std::size_t s = 0; s < stage_rank.size(); ++s) {
        stage_rank[s] = static_cast<int>(s);
    }
    return stage_rank;
}

Schedule lowered_1f1b(int ranks, int microbatches) {
    return pipewright::add_communication(
        pipewright::generate_schedule("1f1b", one_stage_per_rank(ranks), microbatches));
}

// A lowered 1F1B schedule of `ranks` equal stages, each rank on its own
// device with one link per direction to each neighbour (the only rank pairs
// that communicate). Held by pointer: `input.schedule` points into it.
struct SimCase {
    Schedule schedule;
    SimulationInput input;
};

std::unique_ptr<SimCase> make_case(int ranks, int microbatches) {
    auto c = std::make_unique<SimCase>();
    c->schedule = lowered_1f1b(ranks, microbatches);
    SimulationInput& in = c->input;
    in.schedule = &c->schedule;

    pipewright::StageCost cost;
    cost.forward_s = kForwardS;
    cost.backward_input_s = kBackwardS;  // a full B costs backward_input_s + backward_weight_s
    cost.output_bytes = kActivationBytes;
    cost.input_bytes = kActivationBytes;
    cost.stash_bytes = kActivationBytes;
    const auto n = static_cast<std::size_t>(ranks);
    in.stages.assign(n, cost);

    in.rank_devices.reserve(n);
    for (std::size_t r = 0; r < n; ++r) {
        in.rank_devices.push_back("gpu" + std::to_string(r));
    }
    const auto add_link = [&in](std::size_t from, std::size_t to) {
        in.link_index.set(static_cast<int>(from), static_cast<int>(to),
                          static_cast<int>(in.links.size()));
        in.links.push_back({in.rank_devices[from] + "->" + in.rank_devices[to], kNeighbourLink});
    };
    for (std::size_t r = 0; r + 1 < n; ++r) {
        add_link(r, r + 1);
        add_link(r + 1, r);
    }
    return c;
}

// Built once per process and kept, so repetitions time only the simulation.
const SimCase& cached_case(int ranks, int microbatches) {
    static std::map<std::pair<int, int>, std::unique_ptr<SimCase>> cache;
    auto& slot = cache[{ranks, microbatches}];
    if (!slot) {
        slot = make_case(ranks, microbatches);
    }
    return *slot;
}

// Peak resident set size of this process so far (Linux: ru_maxrss in KiB).
double peak_rss_mib() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

void set_action_counters(benchmark::State& state, std::size_t action_count) {
    const auto actions = static_cast<double>(action_count);
    state.counters["actions"] = actions;
    state.counters["actions_per_second"] =
        benchmark::Counter(actions, benchmark::Counter::kIsIterationInvariantRate);
    // Seconds per action (printed with an SI prefix, e.g. 80n = 80 ns).
    state.counters["time_per_action"] = benchmark::Counter(
        actions, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// --- peak memory ------------------------------------------------------------

// Runs the largest case once, building it from scratch, and reports how far
// the process's peak RSS grew. ru_maxrss only ever rises, so this benchmark is
// registered first: it must run before anything else has allocated much.
void BM_PeakRss_Simulate1F1B(benchmark::State& state) {
    const auto ranks = static_cast<int>(state.range(0));
    const auto microbatches = static_cast<int>(state.range(1));
    const double before = peak_rss_mib();
    double after_setup = before;
    double after_simulation = before;
    std::size_t actions = 0;
    for (auto _ : state) {
        const std::unique_ptr<SimCase> c = make_case(ranks, microbatches);
        after_setup = peak_rss_mib();
        pipewright::SimulationOutput out = pipewright::simulate_schedule(c->input);
        benchmark::DoNotOptimize(out);
        after_simulation = peak_rss_mib();
        actions = c->schedule.action_count();
    }
    state.counters["actions"] = static_cast<double>(actions);
    state.counters["rss_start_MiB"] = before;
    state.counters["setup_growth_MiB"] = after_setup - before;
    state.counters["sim_growth_MiB"] = after_simulation - after_setup;
    state.counters["peak_rss_MiB"] = after_simulation;
}
BENCHMARK(BM_PeakRss_Simulate1F1B)
    ->Args({128, 4096})
    ->Iterations(1)
    ->Repetitions(1)
    ->Unit(benchmark::kMillisecond);

// --- event simulator --------------------------------------------------------

void BM_Simulate1F1B(benchmark::State& state) {
    const SimCase& c =
        cached_case(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
    for (auto _ : state) {
        pipewright::SimulationOutput out = pipewright::simulate_schedule(c.input);
        benchmark::DoNotOptimize(out);
        benchmark::ClobberMemory();
    }
    set_action_counters(state, c.schedule.action_count());
}
BENCHMARK(BM_Simulate1F1B)
    ->ArgNames({"p", "m"})
    ->Args({8, 32})
    ->Args({64, 1024})
    ->Args({128, 4096})
    ->Unit(benchmark::kMillisecond);

// --- schedule generation, lowering and checking ----------------------------

void BM_GenerateLowerCheck1F1B(benchmark::State& state) {
    const auto ranks = static_cast<int>(state.range(0));
    const auto microbatches = static_cast<int>(state.range(1));
    std::size_t actions = 0;
    for (auto _ : state) {
        Schedule s = lowered_1f1b(ranks, microbatches);
        pipewright::Diagnostics problems = pipewright::check_schedule(s);
        if (!problems.empty()) {
            state.SkipWithError(problems.format().c_str());
            break;
        }
        actions = s.action_count();
        benchmark::DoNotOptimize(s);
        benchmark::DoNotOptimize(problems);
    }
    set_action_counters(state, actions);
}
BENCHMARK(BM_GenerateLowerCheck1F1B)
    ->ArgNames({"p", "m"})
    ->Args({128, 4096})
    ->Unit(benchmark::kMillisecond);

// The three steps of the line above, one at a time.
void BM_Generate1F1B(benchmark::State& state) {
    const std::vector<int> stage_rank = one_stage_per_rank(static_cast<int>(state.range(0)));
    const auto microbatches = static_cast<int>(state.range(1));
    std::size_t actions = 0;
    for (auto _ : state) {
        Schedule s = pipewright::generate_schedule("1f1b", stage_rank, microbatches);
        actions = s.action_count();
        benchmark::DoNotOptimize(s);
    }
    set_action_counters(state, actions);
}
BENCHMARK(BM_Generate1F1B)->ArgNames({"p", "m"})->Args({128, 4096})->Unit(benchmark::kMillisecond);

void BM_Lower1F1B(benchmark::State& state) {
    const Schedule compute =
        pipewright::generate_schedule("1f1b", one_stage_per_rank(static_cast<int>(state.range(0))),
                                      static_cast<int>(state.range(1)));
    std::size_t actions = 0;
    for (auto _ : state) {
        Schedule s = pipewright::add_communication(compute);
        actions = s.action_count();
        benchmark::DoNotOptimize(s);
    }
    set_action_counters(state, actions);
}
BENCHMARK(BM_Lower1F1B)->ArgNames({"p", "m"})->Args({128, 4096})->Unit(benchmark::kMillisecond);

void BM_Check1F1B(benchmark::State& state) {
    const SimCase& c =
        cached_case(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
    for (auto _ : state) {
        pipewright::Diagnostics problems = pipewright::check_schedule(c.schedule);
        benchmark::DoNotOptimize(problems);
    }
    set_action_counters(state, c.schedule.action_count());
}
BENCHMARK(BM_Check1F1B)->ArgNames({"p", "m"})->Args({128, 4096})->Unit(benchmark::kMillisecond);

// --- the whole project path on a shipped example ----------------------------

const char* const kExampleDir = PIPEWRIGHT_ASSETS_DIR "/examples";
const char* const kExampleFile = PIPEWRIGHT_ASSETS_DIR "/examples/gpt3-175b-p4d.json";

// The example parsed once; nullopt (with the reason) when it does not load.
const std::optional<pipewright::Project>& example_project(std::string& error) {
    static std::string load_error;
    static const std::optional<pipewright::Project> project = [] {
        pipewright::LoadedProject loaded = pipewright::load_project_file(kExampleFile);
        if (!loaded.project || !loaded.diagnostics.empty()) {
            load_error = std::string(kExampleFile) + ": " + loaded.diagnostics.format();
            return std::optional<pipewright::Project>();
        }
        return loaded.project;
    }();
    error = load_error;
    return project;
}

pipewright::AnalysisOptions example_options() {
    pipewright::AnalysisOptions options;
    options.base_dir = kExampleDir;
    return options;
}

void BM_ProjectAnalyzeSimulate(benchmark::State& state) {
    std::string error;
    const auto& project = example_project(error);
    if (!project) {
        state.SkipWithError(error.c_str());
        return;
    }
    const pipewright::AnalysisOptions options = example_options();
    std::size_t actions = 0;
    for (auto _ : state) {
        pipewright::Diagnostics problems;
        std::optional<pipewright::AnalyzedProject> analyzed =
            pipewright::analyze_project(*project, options, problems);
        if (!analyzed) {
            state.SkipWithError(problems.format().c_str());
            break;
        }
        pipewright::SimulationReport report = pipewright::simulate_project(*analyzed);
        actions = analyzed->schedule.action_count();
        benchmark::DoNotOptimize(report);
    }
    set_action_counters(state, actions);
}
BENCHMARK(BM_ProjectAnalyzeSimulate)->Unit(benchmark::kMillisecond);

void BM_ProjectAnalyze(benchmark::State& state) {
    std::string error;
    const auto& project = example_project(error);
    if (!project) {
        state.SkipWithError(error.c_str());
        return;
    }
    const pipewright::AnalysisOptions options = example_options();
    for (auto _ : state) {
        pipewright::Diagnostics problems;
        std::optional<pipewright::AnalyzedProject> analyzed =
            pipewright::analyze_project(*project, options, problems);
        benchmark::DoNotOptimize(analyzed);
    }
}
BENCHMARK(BM_ProjectAnalyze)->Unit(benchmark::kMillisecond);

void BM_ProjectSimulate(benchmark::State& state) {
    std::string error;
    const auto& project = example_project(error);
    if (!project) {
        state.SkipWithError(error.c_str());
        return;
    }
    pipewright::Diagnostics problems;
    const std::optional<pipewright::AnalyzedProject> analyzed =
        pipewright::analyze_project(*project, example_options(), problems);
    if (!analyzed) {
        state.SkipWithError(problems.format().c_str());
        return;
    }
    for (auto _ : state) {
        pipewright::SimulationReport report = pipewright::simulate_project(*analyzed);
        benchmark::DoNotOptimize(report);
    }
    set_action_counters(state, analyzed->schedule.action_count());
}
BENCHMARK(BM_ProjectSimulate)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
