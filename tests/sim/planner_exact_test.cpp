// The planner's split against an independent brute force written from the
// definitions (docs/planner.md), on random cases, and its memory rule against
// what the simulator measures.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <random>

#include "pipewright/core/project_io.h"
#include "pipewright/core/recomputation_units.h"
#include "pipewright/sim/kernel_cost.h"
#include "pipewright/sim/planner.h"
#include "pipewright/sim/stage_memory.h"
#include "planner_test_support.h"

namespace pipewright {
namespace {

using testing::layer_names;
using testing::simulate;

// ---- an independent brute force ---------------------------------------------

// Written from the definitions (docs/planner.md), not from the planner's code.
struct Evaluator {
    AnalyzedProject analyzed;  // the layers, on one device
    std::vector<DeviceLocation> devices;
    std::vector<DeviceSpec> specs;
    std::string schedule;
    int microbatches = 1;

    Evaluator(const Project& project, const std::string& s, int m) : schedule(s), microbatches(m) {
        Project single = project;
        devices = project.topology.devices();
        single.placement = {{devices.front().path, layer_names(project)}};
        Diagnostics d;
        AnalysisOptions options;
        options.schedule = "naive";
        analyzed = *analyze_project(single, options, d);
        analyzed.microbatch_size = project.training.batch_size / m;
        for (const auto& loc : devices) {
            specs.push_back(effective_device(project.topology, loc, DeviceCatalog::builtin()).spec);
        }
    }

    [[nodiscard]] int layers() const { return static_cast<int>(analyzed.layers.size()); }

    // Activations held at the peak by stage k of p: {full, weight-gradient only}.
    [[nodiscard]] std::pair<double, double> in_flight(int k, int p) const {
        const int m = microbatches;
        if (schedule == "naive") {
            return {1, 0};
        }
        if (schedule == "gpipe") {
            return {m, 0};
        }
        if (schedule == "zb-h2") {
            // Twice the warm-up: F(x), I(x - 2(p-1-k)), W(x - 2(p-1)).
            const int full = std::min(2 * (p - 1 - k) + 1, m);
            return {full, std::max(0, std::min(2 * k, m - full))};
        }
        const int full = std::min(p - k, m);
        return {full, schedule == "zb-h1" ? std::max(0, std::min(k, m - full)) : 0};
    }

    [[nodiscard]] bool splits_backward() const {
        return schedule == "zb-h1" || schedule == "zb-h2";
    }

    // Under full recomputation: the inputs that the units of layers [a, b)
    // keep per micro-batch (the model input, or the output of the layer
    // before), and the largest stash of one unit.
    [[nodiscard]] std::pair<double, double> units(int a, int b, const DeviceSpec& spec) const {
        const auto& layers = analyzed.project.model.layers;
        const std::vector<int> starts = recomputation_units(layers, a, b - 1);
        double kept = 0;
        double largest = 0;
        for (std::size_t u = 0; u < starts.size(); ++u) {
            const int l = starts[u];
            kept += l == 0 ? static_cast<double>(numel(analyzed.project.model.input.shape)) *
                                 analyzed.microbatch_size *
                                 dtype_bytes(analyzed.project.model.input.dtype)
                           : layer_cost(analyzed, l - 1, spec, {}).output_bytes;
            const int end = u + 1 < starts.size() ? starts[u + 1] : b;
            double stash = 0;
            for (int k = l; k < end; ++k) {
                stash += layer_cost(analyzed, k, spec, {}).stash_bytes;
            }
            largest = std::max(largest, stash);
        }
        return {kept, largest};
    }

    // Bottleneck of a split, or +inf when a stage does not fit.
    [[nodiscard]] double bottleneck(const std::vector<int>& order, const std::vector<int>& cuts,
                                    double* worst_memory_ratio = nullptr) const {
        const Training& t = analyzed.project.training;
        const auto p = static_cast<int>(order.size());
        double worst = 0;
        double ratio = 0;
        bool fits = true;
        for (int k = 0; k < p; ++k) {
            const auto& spec = specs[static_cast<std::size_t>(order[static_cast<std::size_t>(k)])];
            const int a = cuts[static_cast<std::size_t>(k)];
            const int b = cuts[static_cast<std::size_t>(k) + 1];
            double time = 0;
            double stash = 0;
            double weight_stash = 0;
            std::int64_t params = 0;
            double output = 0;
            for (int l = a; l < b; ++l) {
                const LayerCost c = layer_cost(analyzed, l, spec, {});
                time += c.forward_s + c.backward_input_s + c.backward_weight_s +
                        (t.full_recompute() ? c.forward_s : 0);
                stash += c.stash_bytes;
                weight_stash += c.weight_stash_bytes;
                params += analyzed.layers[static_cast<std::size_t>(l)].parameters;
                output = c.output_bytes;
            }
            const auto [full, weight_only] = in_flight(k, p);
            // Recomputation keeps each unit's input per micro-batch; a whole
            // backward holds one unit's stash again, an I the stage's.
            double recomputed = 0;
            if (t.full_recompute()) {
                const auto [kept, largest] = units(a, b, spec);
                recomputed = full > 0 ? (splits_backward() ? stash : largest) : 0;
                stash = kept;
            }
            if (b == layers()) {
                // The loss after the last layer: its time, and its kept softmax.
                const LossKernels loss = project_loss_kernels(analyzed, {});
                time += kernels_seconds(loss.kernels.forward, spec, t.dtype) +
                        kernels_seconds(loss.kernels.backward_input, spec, t.dtype);
                stash += loss.stash_bytes;
            }
            if (k + 1 < p) {
                const auto link = analyzed.project.topology.link_between(
                    devices[static_cast<std::size_t>(order[static_cast<std::size_t>(k)])],
                    devices[static_cast<std::size_t>(order[static_cast<std::size_t>(k) + 1])]);
                time += link.spec.transfer_seconds(output);
            }
            const double memory = static_cast<double>(static_memory_bytes(params, t)) +
                                  full * stash + recomputed + weight_only * weight_stash;
            ratio = std::max(ratio, memory / static_cast<double>(spec.memory_bytes));
            fits = fits && memory <= static_cast<double>(spec.memory_bytes);
            worst = std::max(worst, time);
        }
        if (worst_memory_ratio != nullptr) {
            *worst_memory_ratio = ratio;
        }
        return fits ? worst : std::numeric_limits<double>::infinity();
    }

    // Every ordered subset of devices, every contiguous split.
    [[nodiscard]] double best() const {
        double best = std::numeric_limits<double>::infinity();
        const auto n = static_cast<int>(devices.size());
        std::vector<int> all(static_cast<std::size_t>(n));
        std::iota(all.begin(), all.end(), 0);
        do {
            for (int p = 1; p <= std::min(n, layers()); ++p) {
                if ((schedule == "1f1b" || schedule == "zb-h1" || schedule == "zb-h2") &&
                    microbatches < p) {
                    continue;
                }
                const std::vector<int> order(all.begin(), all.begin() + p);
                // Choose p - 1 cut points among layers() - 1 with a bit mask.
                for (unsigned mask = 0; mask < (1u << (layers() - 1)); ++mask) {
                    if (std::popcount(mask) != p - 1) {
                        continue;
                    }
                    std::vector<int> cuts{0};
                    for (int l = 1; l < layers(); ++l) {
                        if ((mask >> (l - 1)) & 1u) {
                            cuts.push_back(l);
                        }
                    }
                    cuts.push_back(layers());
                    best = std::min(best, bottleneck(order, cuts));
                }
            }
        } while (std::next_permutation(all.begin(), all.end()));
        return best;
    }
};

struct RandomCase {
    Project project;
    std::string schedule;
    int microbatches = 1;
};

RandomCase random_case(std::mt19937& rng) {
    const auto pick = [&](int lo, int hi) {
        return std::uniform_int_distribution<int>(lo, hi)(rng);
    };
    const auto uniform = [&](double lo, double hi) {
        return std::uniform_real_distribution<double>(lo, hi)(rng);
    };
    RandomCase c;
    Project& p = c.project;
    p.model.name = "random";
    std::int64_t width = 16 * pick(1, 64);
    p.model.input.shape = {width};
    const int layers = pick(3, 9);
    for (int l = 0; l < layers; ++l) {
        LayerSpec layer;
        layer.name = "l" + std::to_string(l);
        if (l > 0 && pick(0, 5) == 0) {
            layer.type = "relu";
        } else {
            const std::int64_t out = 16 * pick(1, 256);
            layer.type = "linear";
            layer.params = {{"in_features", width}, {"out_features", out}};
            width = out;
        }
        if (pick(0, 2) == 0) {
            layer.cost = CostOverride{uniform(0.01, 5), uniform(0.01, 5), uniform(0, 5)};
        }
        if (pick(0, 3) == 0) {
            layer.activation_bytes = pick(0, 1 << 28);
        }
        p.model.layers.push_back(std::move(layer));
    }
    // Devices scattered over up to two nodes of up to two containers.
    const int devices = pick(1, 4);
    p.topology.links.intra_container = {uniform(1, 300), uniform(1, 50)};
    p.topology.links.intra_node = {uniform(1, 100), uniform(1, 50)};
    p.topology.links.inter_node = {uniform(0.5, 50), uniform(1, 100)};
    for (int d = 0; d < devices; ++d) {
        const auto n = static_cast<std::size_t>(pick(0, 1));
        const auto k = static_cast<std::size_t>(pick(0, 1));
        while (p.topology.nodes.size() <= n) {
            p.topology.nodes.push_back({"n" + std::to_string(p.topology.nodes.size()), {}});
        }
        auto& containers = p.topology.nodes[n].containers;
        while (containers.size() <= k) {
            containers.push_back({"c" + std::to_string(containers.size()), {}});
        }
        Device device{"d" + std::to_string(d), pick(0, 1) == 0 ? "A100-40GB" : "V100-32GB", {}};
        if (pick(0, 1) == 0) {
            device.overrides.peak_tflops = uniform(0.5, 100);
        }
        // From far too small to roomy: memory binds in many cases.
        device.overrides.memory_GiB = uniform(0.02, 3);
        containers[k].devices.push_back(device);
    }
    // Empty nodes or containers are not allowed.
    for (auto& node : p.topology.nodes) {
        std::erase_if(node.containers, [](const Container& x) { return x.devices.empty(); });
    }
    std::erase_if(p.topology.nodes, [](const Node& x) { return x.containers.empty(); });
    const auto locations = p.topology.devices();
    if (locations.size() > 1 && pick(0, 1) == 0) {
        p.topology.link_overrides.push_back(
            {locations[0].path, locations[1].path, {uniform(0.1, 10), uniform(1, 500)}});
    }
    p.placement = {{locations.front().path, layer_names(p)}};

    const int batches[] = {1, 2, 4, 6, 8, 12, 16};
    p.training.batch_size = batches[pick(0, 6)];
    p.training.dtype = pick(0, 1) == 0 ? DType::float32 : DType::bfloat16;
    p.training.optimizer.type = pick(0, 1) == 0 ? OptimizerKind::sgd : OptimizerKind::adam;
    p.training.optimizer.momentum = 0.9;
    p.training.recompute = pick(0, 3) == 0 ? Recompute::full : Recompute::none;
    const char* schedules[] = {"naive", "gpipe", "1f1b", "zb-h1", "zb-h2"};
    c.schedule = schedules[pick(0, 4)];
    std::vector<int> divisors;
    for (int k = 1; k <= p.training.batch_size; ++k) {
        if (p.training.batch_size % k == 0) {
            divisors.push_back(k);
        }
    }
    c.microbatches =
        c.schedule == "naive"
            ? 1
            : divisors[static_cast<std::size_t>(pick(0, static_cast<int>(divisors.size()) - 1))];
    return c;
}

TEST(Planner, SplitEqualsTheExhaustiveOptimumOnRandomCases) {
    std::mt19937 rng(20260501);
    int feasible = 0;
    int infeasible = 0;
    int memory_binds = 0;  // the optimum differs from the one ignoring memory
    for (int trial = 0; trial < 400; ++trial) {
        const RandomCase c = random_case(rng);
        SCOPED_TRACE("trial " + std::to_string(trial) + ": " + c.schedule + ", m=" +
                     std::to_string(c.microbatches) + "\n" + project_to_json(c.project).dump());
        const Evaluator brute(c.project, c.schedule, c.microbatches);
        const double expected = brute.best();
        const SplitResult found = best_split(c.project, {}, c.microbatches, c.schedule);
        ASSERT_EQ(found.feasible, expected < std::numeric_limits<double>::infinity());
        if (!found.feasible) {
            ++infeasible;
            continue;
        }
        ++feasible;
        EXPECT_NEAR(found.bottleneck_s, expected, 1e-7 * expected);
        // The split returned is the one claimed, and it fits.
        std::vector<int> cuts = found.first_layer;
        cuts.push_back(brute.layers());
        EXPECT_NEAR(brute.bottleneck(found.devices, cuts), found.bottleneck_s,
                    1e-9 * found.bottleneck_s);

        Project roomy = c.project;
        for (auto& node : roomy.topology.nodes) {
            for (auto& container : node.containers) {
                for (auto& device : container.devices) {
                    device.overrides.memory_GiB = 1e6;
                }
            }
        }
        const SplitResult unconstrained = best_split(roomy, {}, c.microbatches, c.schedule);
        if (unconstrained.bottleneck_s < found.bottleneck_s * (1 - 1e-9)) {
            ++memory_binds;
        }
    }
    // The cases must exercise what they test.
    EXPECT_GT(feasible, 150);
    EXPECT_GT(infeasible, 20);
    EXPECT_GT(memory_binds, 20);
}

// Under full recomputation a whole backward rebuilds one unit at a time (a
// block, or the layers between blocks): the split DP's memory then has a
// term that depends on both ends of a stage. The devices differ in speed,
// which once made the DP's lower bounds refuse a bound that a split met
// (a layer too slow alone on one device, which a faster one could take).
TEST(Planner, SplitOfCheckpointedBlocksEqualsTheExhaustiveOptimum) {
    std::mt19937 rng(20261207);
    const auto pick = [&](int lo, int hi) {
        return std::uniform_int_distribution<int>(lo, hi)(rng);
    };
    int feasible = 0;
    int memory_binds = 0;
    for (int trial = 0; trial < 300; ++trial) {
        RandomCase c = random_case(rng);
        Project& p = c.project;
        const std::int64_t hidden = 32 * pick(1, 4);
        const std::int64_t vocabulary = 64 * pick(1, 8);
        p.model.input = {{16 * pick(1, 8)}, DType::int64};
        p.model.loss = LossKind::cross_entropy;
        const auto layer = [](std::string name, std::string type, nlohmann::json params) {
            LayerSpec spec;
            spec.name = std::move(name);
            spec.type = std::move(type);
            spec.params = std::move(params);
            return spec;
        };
        p.model.layers = {layer("embed", "embedding",
                                {{"num_embeddings", vocabulary}, {"embedding_dim", hidden}})};
        for (int l = pick(2, 7); l > 0; --l) {
            const std::string name = "l" + std::to_string(p.model.layers.size());
            switch (pick(0, 3)) {
                case 1:
                    p.model.layers.push_back(layer(name, "layernorm", {{"features", hidden}}));
                    break;
                case 2:
                    p.model.layers.push_back(
                        layer(name, "linear", {{"in_features", hidden}, {"out_features", hidden}}));
                    break;
                default:
                    p.model.layers.push_back(
                        layer(name, "transformer_block", {{"hidden", hidden}, {"heads", 2}}));
            }
        }
        p.model.layers.push_back(
            layer("head", "linear",
                  {{"in_features", hidden}, {"out_features", vocabulary}, {"bias", false}}));
        p.training.recompute = Recompute::full;
        for (auto& node : p.topology.nodes) {
            for (auto& container : node.containers) {
                for (auto& device : container.devices) {
                    device.overrides.memory_GiB = 2e-5 * pick(1, 500);
                }
            }
        }
        p.placement = {{p.topology.devices().front().path, layer_names(p)}};
        if (c.schedule == "naive") {
            c.schedule = "gpipe";
        }
        SCOPED_TRACE("trial " + std::to_string(trial) + ": " + c.schedule +
                     ", m=" + std::to_string(c.microbatches) + "\n" + project_to_json(p).dump());
        const Evaluator brute(p, c.schedule, c.microbatches);
        const double expected = brute.best();
        const SplitResult found = best_split(p, {}, c.microbatches, c.schedule);
        ASSERT_EQ(found.feasible, expected < std::numeric_limits<double>::infinity());
        if (!found.feasible) {
            continue;
        }
        ++feasible;
        EXPECT_NEAR(found.bottleneck_s, expected, 1e-7 * expected);
        Project roomy = p;
        roomy.training.recompute = Recompute::full;
        for (auto& node : roomy.topology.nodes) {
            for (auto& container : node.containers) {
                for (auto& device : container.devices) {
                    device.overrides.memory_GiB = 1e6;
                }
            }
        }
        if (best_split(roomy, {}, c.microbatches, c.schedule).bottleneck_s <
            found.bottleneck_s * (1 - 1e-9)) {
            ++memory_binds;
        }
    }
    EXPECT_GT(feasible, 150);
    EXPECT_GT(memory_binds, 8);
}

TEST(Planner, ExactForAGivenStageCount) {
    std::mt19937 rng(7);
    for (int trial = 0; trial < 60; ++trial) {
        RandomCase c = random_case(rng);
        for (auto& node : c.project.topology.nodes) {
            for (auto& container : node.containers) {
                for (auto& device : container.devices) {
                    device.overrides.memory_GiB = 1e6;
                }
            }
        }
        const Evaluator brute(c.project, "gpipe", c.microbatches);
        const auto n = static_cast<int>(c.project.topology.devices().size());
        for (int p = 1; p <= std::min(n, brute.layers()); ++p) {
            const SplitResult found = best_split(c.project, {}, c.microbatches, "gpipe", p);
            ASSERT_TRUE(found.feasible);
            EXPECT_EQ(found.devices.size(), static_cast<std::size_t>(p));
            EXPECT_EQ(found.first_layer.front(), 0);
            EXPECT_TRUE(std::is_sorted(found.first_layer.begin(), found.first_layer.end()));
        }
    }
}

// The DP's memory rule is what the simulator measures for every schedule.
TEST(Planner, InFlightActivationsMatchTheSimulatedPeak) {
    std::mt19937 rng(11);
    int checked = 0;
    for (int trial = 0; trial < 150; ++trial) {
        RandomCase c = random_case(rng);
        Project& p = c.project;
        if (p.training.full_recompute() && (c.schedule == "zb-h1" || c.schedule == "zb-h2")) {
            continue;  // the rule is an estimate there (docs/planner.md)
        }
        const auto devices = p.topology.devices();
        const int stages =
            std::min(static_cast<int>(devices.size()), static_cast<int>(p.model.layers.size()));
        if ((c.schedule == "1f1b" || c.schedule == "zb-h1" || c.schedule == "zb-h2") &&
            c.microbatches < stages) {
            continue;
        }
        std::vector<PlannedStage> split;
        const auto layers = static_cast<int>(p.model.layers.size());
        for (int k = 0; k < stages; ++k) {
            split.push_back({devices[static_cast<std::size_t>(k)].path, layers * k / stages,
                             layers * (k + 1) / stages - 1});
        }
        const Project planned = with_placement(p, split, c.schedule, c.microbatches);
        const SimulationReport report = simulate(planned);
        const Evaluator brute(p, c.schedule, c.microbatches);
        const Training& t = brute.analyzed.project.training;
        for (std::size_t k = 0; k < split.size(); ++k) {
            const auto [full, weight_only] = brute.in_flight(static_cast<int>(k), stages);
            const InFlight mine =
                activations_in_flight(c.schedule, static_cast<int>(k), stages, c.microbatches);
            EXPECT_EQ(mine.full, static_cast<int>(full));
            EXPECT_EQ(mine.weight_only, static_cast<int>(weight_only));
            double stash = 0;
            double weight_stash = 0;
            std::int64_t params = 0;
            for (int l = split[k].first_layer; l <= split[k].last_layer; ++l) {
                const LayerCost lc = layer_cost(brute.analyzed, l, brute.specs[k], {});
                stash += lc.stash_bytes;
                weight_stash += lc.weight_stash_bytes;
                params += brute.analyzed.layers[static_cast<std::size_t>(l)].parameters;
            }
            // Under full recomputation each unit keeps its input per
            // micro-batch, and a backward holds one unit's stash again on
            // top of them (it recomputes one unit at a time).
            double recomputed = 0;
            if (t.full_recompute()) {
                const auto [kept, largest] =
                    brute.units(split[k].first_layer, split[k].last_layer + 1, brute.specs[k]);
                recomputed = full > 0 ? largest : 0;
                stash = kept;
            }
            if (split[k].last_layer + 1 == layers) {
                // The loss's softmax (or output), kept from its forward to
                // its backward on the last stage.
                stash += project_loss_kernels(brute.analyzed, {}).stash_bytes;
            }
            const double expected = static_cast<double>(static_memory_bytes(params, t)) +
                                    full * stash + recomputed + weight_only * weight_stash;
            EXPECT_NEAR(static_cast<double>(report.devices[k].peak_memory_bytes), expected,
                        2.0 + 1e-9 * expected)
                << c.schedule << " stage " << k << " of " << stages << ", m=" << c.microbatches;
            ++checked;
        }
    }
    EXPECT_GT(checked, 100);
}

TEST(Planner, PlansFitInMemoryWhenSimulated) {
    std::mt19937 rng(3);
    int planned = 0;
    for (int trial = 0; trial < 120; ++trial) {
        const RandomCase c = random_case(rng);
        SCOPED_TRACE(project_to_json(c.project).dump());
        const PlanResult r = plan_pipeline(c.project, {});
        if (!r.feasible) {
            EXPECT_NE(r.why_nothing_fits.find("nothing fits in memory"), std::string::npos);
            continue;
        }
        ++planned;
        const SimulationReport report = simulate(r.project);
        EXPECT_TRUE(report.all_fit);
        EXPECT_NEAR(report.iteration_time_s, r.plan.report->iteration_time_s,
                    1e-9 * report.iteration_time_s);
        if (r.input.report && r.input.report->all_fit) {
            EXPECT_LE(r.plan.report->iteration_time_s, r.input.report->iteration_time_s);
        }
    }
    EXPECT_GT(planned, 60);
}

}  // namespace
}  // namespace pipewright
