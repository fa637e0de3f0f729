// Speed of the planner, and how much its plans gain over simple splits; see
// README.md ("Planner") for how to run it and the figures.

#include <benchmark/benchmark.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "pipewright/core/project_io.h"
#include "pipewright/sim/planner.h"

namespace {

using pipewright::PlanOptions;
using pipewright::PlanResult;
using pipewright::Project;

// A synthetic model: `layers` linear layers whose widths are drawn at random
// (fixed seed) between 128 and 2048, so that stages need real balancing; the
// cluster: `devices` A100-80GB in nodes of 8.
Project synthetic(int layers, int devices) {
    Project p;
    p.model.name = "synthetic-" + std::to_string(layers);
    std::mt19937 random(42);
    std::uniform_int_distribution<int> width(1, 16);
    std::int64_t in = 128 * width(random);
    p.model.input.shape = {in};
    for (int l = 0; l < layers; ++l) {
        const std::int64_t out = 128 * width(random);
        pipewright::LayerSpec layer;
        layer.name = "fc" + std::to_string(l);
        layer.type = "linear";
        layer.params = {{"in_features", in}, {"out_features", out}};
        p.model.layers.push_back(std::move(layer));
        in = out;
    }
    const int nodes = (devices + 7) / 8;
    for (int n = 0; n < nodes; ++n) {
        pipewright::Node node{"node" + std::to_string(n), {{"c0", {}}}};
        for (int d = 0; d < 8 && n * 8 + d < devices; ++d) {
            node.containers[0].devices.push_back({"gpu" + std::to_string(d), "A100-80GB", {}});
        }
        p.topology.nodes.push_back(std::move(node));
    }
    // The input placement: everything on the first device.
    pipewright::StageAssignment all{"node0/c0/gpu0", {}};
    for (const auto& layer : p.model.layers) {
        all.layers.push_back(layer.name);
    }
    p.placement = {all};
    p.training.batch_size = 512;
    p.training.microbatches = 8;
    p.training.schedule = {"gpipe", ""};
    p.training.dtype = pipewright::DType::bfloat16;
    p.training.optimizer.type = pipewright::OptimizerKind::adam;
    return p;
}

const Project& cached(int layers, int devices) {
    static std::map<std::pair<int, int>, std::unique_ptr<Project>> cache;
    auto& slot = cache[{layers, devices}];
    if (!slot) {
        slot = std::make_unique<Project>(synthetic(layers, devices));
    }
    return *slot;
}

void set_plan_counters(benchmark::State& state, const PlanResult& r) {
    state.counters["search_s"] = r.statistics.search_s;
    state.counters["splits"] = r.statistics.split_searches;
    state.counters["simulations"] = r.statistics.simulations;
    state.counters["stages"] = static_cast<double>(r.plan.stages.size());
    state.counters["microbatches"] = r.plan.microbatches;
    if (r.plan.report && r.uniform.report) {
        state.counters["gain_vs_uniform_pct"] =
            (r.uniform.report->iteration_time_s / r.plan.report->iteration_time_s - 1) * 100;
    }
}

// The whole plan: analysis, device orders, the DP search, and the
// simulations that judge the candidates, the input and the uniform split.
void BM_Plan(benchmark::State& state) {
    const Project& project =
        cached(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
    PlanResult result;
    for (auto _ : state) {
        result = pipewright::plan_pipeline(project, PlanOptions{});
        benchmark::DoNotOptimize(result);
    }
    if (!result.feasible) {
        state.SkipWithError(result.why_nothing_fits.c_str());
        return;
    }
    set_plan_counters(state, result);
}
BENCHMARK(BM_Plan)
    ->ArgNames({"layers", "devices"})
    ->ArgsProduct({{100, 1000}, {8, 64, 512}})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Plan)
    ->ArgNames({"layers", "devices"})
    ->ArgsProduct({{10000}, {8, 64, 512}})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

// --- gains on the shipped examples --------------------------------------------

Project example(const std::string& file) {
    auto loaded = pipewright::load_project_file(std::filesystem::path(PIPEWRIGHT_ASSETS_DIR) /
                                                "examples" / file);
    return *loaded.project;
}

// ResNet-50 of the 2-GPU example on 4 GPUs of the same kind.
Project resnet_4gpu() {
    Project p = example("resnet50-2gpu-pipelined.json");
    auto& devices = p.topology.nodes[0].containers[0].devices;
    devices.push_back({"gpu2", devices[0].spec, {}});
    devices.push_back({"gpu3", devices[0].spec, {}});
    p.placement = {};
    for (const auto& s : pipewright::uniform_split(p)) {
        pipewright::StageAssignment a{s.device, {}};
        for (int l = s.first_layer; l <= s.last_layer; ++l) {
            a.layers.push_back(p.model.layers[static_cast<std::size_t>(l)].name);
        }
        p.placement.push_back(std::move(a));
    }
    return p;
}

// Iteration time of a split under the plan's schedule and micro-batches, so
// that the comparison is about the split alone.
double simulate_split(const Project& project, const std::vector<pipewright::PlannedStage>& split,
                      const std::string& schedule, int microbatches, bool& fits) {
    const Project p = pipewright::with_placement(project, split, schedule, microbatches);
    pipewright::Diagnostics problems;
    auto analyzed = pipewright::analyze_project(p, {}, problems);
    if (!analyzed) {
        fits = false;
        return 0;
    }
    const auto report = pipewright::simulate_project(*analyzed);
    fits = report.all_fit;
    return report.iteration_time_s;
}

// Plans a shipped example and reports the plan's gain over a uniform split
// and over a parameter-balanced split (DeepSpeed's default), both run with
// the plan's schedule (1F1B for a looped plan) and micro-batch count, and
// over the input placement.
void gains(benchmark::State& state, const Project& project) {
    PlanResult r;
    for (auto _ : state) {
        r = pipewright::plan_pipeline(project, PlanOptions{});
        benchmark::DoNotOptimize(r);
    }
    if (!r.feasible) {
        state.SkipWithError(r.why_nothing_fits.c_str());
        return;
    }
    const double plan = r.plan.report->iteration_time_s;
    // One stage per device: a looped plan's flat counterparts run its flat form.
    const std::string flat = r.plan.schedule == "interleaved-1f1b" ? std::string("1f1b")
                             : r.plan.schedule == "interleaved-zb" || r.plan.schedule == "zbv"
                                 ? std::string("zb-h1")
                                 : r.plan.schedule;
    bool fits = true;
    const double uniform = simulate_split(project, pipewright::uniform_split(project), flat,
                                          r.plan.microbatches, fits);
    state.counters["uniform_fits"] = fits ? 1 : 0;
    const double balanced = simulate_split(project, pipewright::parameter_balanced_split(project),
                                           flat, r.plan.microbatches, fits);
    state.counters["params_fits"] = fits ? 1 : 0;
    state.counters["plan_ms"] = plan * 1e3;
    state.counters["stages"] = static_cast<double>(r.plan.stages.size());
    state.counters["microbatches"] = r.plan.microbatches;
    state.counters["gain_vs_uniform_pct"] = uniform > 0 ? (uniform / plan - 1) * 100 : 0;
    state.counters["gain_vs_params_pct"] = balanced > 0 ? (balanced / plan - 1) * 100 : 0;
    if (r.input.report) {
        state.counters["gain_vs_input_pct"] = (r.input.report->iteration_time_s / plan - 1) * 100;
    }
    state.SetLabel(r.plan.schedule);
}

void BM_GainResNet2(benchmark::State& state) {
    static const Project p = example("resnet50-2gpu-pipelined.json");
    gains(state, p);
}
void BM_GainResNet4(benchmark::State& state) {
    static const Project p = resnet_4gpu();
    gains(state, p);
}
void BM_GainGpt3(benchmark::State& state) {
    static const Project p = example("gpt3-175b-p4d.json");
    gains(state, p);
}
BENCHMARK(BM_GainResNet2)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GainResNet4)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GainGpt3)->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
