// Per-layer timing for `pipewright profile`: forward, input gradient and
// weight gradient of each layer alone, at the micro-batch size of a run.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <latch>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include <ATen/CPUGeneratorImpl.h>

#include "execution/compute_device.h"
#include "execution/gradient_accumulation.h"
#include "pipewright/backend/executor.h"
#include "pipewright/backend/modules.h"
#include "pipewright/backend/profiler.h"
#include "pipewright/core/layer_catalog.h"
#include "profile/profiler_timing.h"

namespace pipewright::backend {
namespace {

using profiling::median;

// The device's clock: a GPU's queued work has run before the time is read.
double now_s(const torch::Device& device) {
    synchronize(device);
    return profiling::now_s();
}

// A micro-batch of the layer's input, as the run would hand it over: token
// ids for a model that starts with an embedding, random values otherwise.
torch::Tensor layer_input(const AnalyzedProject& p, int layer, int microbatch_size,
                          torch::Dtype dtype, at::Generator& gen) {
    std::vector<std::int64_t> sizes{microbatch_size};
    const auto& model = p.project.model;
    if (layer == 0) {
        sizes.insert(sizes.end(), model.input.shape.begin(), model.input.shape.end());
        if (model.input.dtype == DType::int64) {
            // As SyntheticTask draws them: ids below the embedding's vocabulary.
            return torch::randint(input_vocabulary(model), sizes, gen,
                                  torch::TensorOptions(torch::kInt64));
        }
        return torch::randn(sizes, gen, torch::TensorOptions(dtype));
    }
    const Shape& shape = p.layers[static_cast<std::size_t>(layer - 1)].output_shape;
    sizes.insert(sizes.end(), shape.begin(), shape.end());
    return torch::randn(sizes, gen, torch::TensorOptions(dtype));
}

struct Timings {
    std::vector<double> forward, input_grad, weight_grad, backward, optimizer;
};

// One layer's forward in flight: its input, output and the output gradient
// RECV_B would deliver (made outside the timed parts).
struct InFlight {
    torch::Tensor x, y, g;
};

InFlight timed_forward(torch::nn::Sequential& module, const torch::Tensor& input,
                       bool needs_input_grad, const torch::Device& device,
                       std::vector<double>* out) {
    InFlight f;
    f.x = needs_input_grad ? input.detach().requires_grad_(true) : input;
    const double t0 = now_s(device);
    f.y = module->forward(f.x);
    const double forward = now_s(device) - t0;
    if (f.y.requires_grad()) {
        f.g = torch::ones_like(f.y);
    }
    if (out != nullptr) {
        out->push_back(forward);
    }
    return f;
}

// One layer ready to be timed, with what its repetitions accumulate.
struct LayerBench {
    torch::nn::Sequential module{nullptr};
    std::vector<torch::Tensor> params;
    torch::Tensor input;
    bool needs_input_grad = false;
    std::vector<torch::Tensor> stand_ins;  // the optimizer's parameters
    std::unique_ptr<torch::optim::Optimizer> optimizer;
    Timings timings;
};

// Every round times the layers in the order a stage runs them: all forwards
// in model order, then the backward parts in reverse. A layer's weights thus
// leave the caches between its forward and its backward whenever the model
// is larger than the caches, as they do in a run (timing one layer's forward
// and backward back to back found its weights in the cache: on a 2048-wide
// MLP at micro-batch 32 that measured B 6 % and I 9 % cheaper).
std::vector<InFlight> forwards(std::vector<LayerBench>& benches, const torch::Device& device,
                               bool keep) {
    std::vector<InFlight> flights;
    flights.reserve(benches.size());
    for (auto& b : benches) {
        flights.push_back(timed_forward(b.module, b.input, b.needs_input_grad, device,
                                        keep ? &b.timings.forward : nullptr));
    }
    return flights;
}

// The split backward of zero-bubble schedules, as the executor splits it: I
// is autograd::grad to the input with the graph retained, W the parameter
// gradients from that graph, added into .grad. All I first, then all W.
void split_backward_round(std::vector<LayerBench>& benches, const torch::Device& device,
                          bool keep) {
    std::vector<InFlight> flights = forwards(benches, device, keep);
    for (std::size_t i = benches.size(); i-- > 0;) {
        LayerBench& b = benches[i];
        const InFlight& f = flights[i];
        double input_grad = 0;
        if (f.y.requires_grad() && b.needs_input_grad) {
            const double t0 = now_s(device);
            (void)torch::autograd::grad({f.y}, {f.x}, {f.g}, /*retain_graph=*/true);
            input_grad = now_s(device) - t0;
        }
        if (keep) {
            b.timings.input_grad.push_back(input_grad);
        }
    }
    for (std::size_t i = benches.size(); i-- > 0;) {
        LayerBench& b = benches[i];
        InFlight& f = flights[i];
        double weight_grad = 0;
        if (f.y.requires_grad() && !b.params.empty()) {
            const double t0 = now_s(device);
            add_gradients(b.params, torch::autograd::grad({f.y}, b.params, {f.g},
                                                          /*retain_graph=*/false,
                                                          /*create_graph=*/false,
                                                          /*allow_unused=*/true));
            weight_grad = now_s(device) - t0;
        }
        f = InFlight{};  // frees the graph as W does
        if (keep) {
            b.timings.weight_grad.push_back(weight_grad);
        }
    }
}

// Forward and the whole backward (B of the other schedules).
void full_backward_round(std::vector<LayerBench>& benches, const torch::Device& device, bool keep) {
    std::vector<InFlight> flights = forwards(benches, device, keep);
    for (std::size_t i = benches.size(); i-- > 0;) {
        LayerBench& b = benches[i];
        InFlight& f = flights[i];
        double backward = 0;
        if (f.y.requires_grad()) {
            const double t0 = now_s(device);
            torch::autograd::backward({f.y}, {f.g});
            backward = now_s(device) - t0;
        }
        f = InFlight{};
        if (keep) {
            b.timings.backward.push_back(backward);
        }
    }
}

// zero_grad and one step of the project's optimizer over stand-ins of the
// layer's parameters (same shapes and type, zero gradients): the cost of the
// real step without changing the weights being timed.
void time_optimizer(torch::optim::Optimizer& optimizer, const torch::Device& device, Timings* out) {
    const double t0 = now_s(device);
    optimizer.zero_grad();
    optimizer.step();
    if (out != nullptr) {
        out->optimizer.push_back(now_s(device) - t0);
    }
}

// Every layer built and fed at `microbatch_size`, ready to be timed.
std::vector<LayerBench> make_benches(const AnalyzedProject& project, int microbatch_size,
                                     torch::Dtype dtype, const torch::Device& device) {
    const auto seed = static_cast<std::uint64_t>(project.project.training.seed);
    auto gen = at::make_generator<at::CPUGeneratorImpl>(layer_seed(seed, -1));
    const int count = static_cast<int>(project.layers.size());
    std::vector<LayerBench> benches(project.layers.size());
    for (int l = 0; l < count; ++l) {
        const auto& spec = project.project.model.layers[static_cast<std::size_t>(l)];
        if (!can_build(spec.type)) {
            throw BackendError("layer \"" + spec.name +
                               "\": the backend cannot build layer type \"" + spec.type + "\"");
        }
        LayerBench& b = benches[static_cast<std::size_t>(l)];
        b.module = build_layers(project, l, l, seed, dtype);
        b.module->to(device);
        b.module->train();  // dropout and batch-norm as in training
        b.params = b.module->parameters();
        b.input = layer_input(project, l, microbatch_size, dtype, gen).to(device);
        // The data needs no gradient; every later layer's input does.
        b.needs_input_grad = l > 0 && b.input.is_floating_point();
        for (const auto& p : b.params) {
            b.stand_ins.push_back(torch::zeros_like(p).requires_grad_(true));
            b.stand_ins.back().mutable_grad() = torch::zeros_like(p);
        }
        if (!b.params.empty()) {
            b.optimizer = make_optimizer(project.project.training.optimizer, b.stand_ins);
        }
    }
    return benches;
}

// The other ranks of a run, computing while the layers are timed: threads
// that run the same layers, forward and backward, until stopped. On a CPU
// they take cores, caches and memory bandwidth as a run's ranks do (timed
// alone, the 2-core machine measured W 2.5 times faster than the runs saw).
class ConcurrentRanks {
  public:
    ConcurrentRanks(const AnalyzedProject& project, int count, int microbatch_size,
                    torch::Dtype dtype, const torch::Device& device) {
        const int threads = torch::get_num_threads();
        std::latch ready(count);
        for (int c = 0; c < count; ++c) {
            // By value what the thread uses after this constructor returns.
            threads_.emplace_back(
                [this, &project, &ready, threads, microbatch_size, dtype, device] {
                    std::vector<LayerBench> benches;
                    try {
                        // OpenMP's thread count is per thread: as the timed one's.
                        torch::set_num_threads(threads);
                        benches = make_benches(project, microbatch_size, dtype, device);
                    } catch (const std::exception& e) {
                        const std::lock_guard lock(mutex_);
                        error_ = e.what();
                    }
                    ready.count_down();
                    try {
                        while (!benches.empty() && !stop_.load()) {
                            split_backward_round(benches, device, false);
                        }
                    } catch (const std::exception& e) {
                        const std::lock_guard lock(mutex_);
                        error_ = e.what();
                    }
                });
        }
        ready.wait();
        if (!error_.empty()) {
            stop();
            throw BackendError("a concurrent rank of the profile failed: " + error_);
        }
    }
    ~ConcurrentRanks() { stop(); }
    ConcurrentRanks(const ConcurrentRanks&) = delete;
    ConcurrentRanks& operator=(const ConcurrentRanks&) = delete;

    void stop() {
        stop_.store(true);
        threads_.clear();  // joins
    }

  private:
    std::atomic<bool> stop_{false};
    std::mutex mutex_;
    std::string error_;
    std::vector<std::jthread> threads_;
};

}  // namespace

std::vector<LayerProfile> measure_layers(const AnalyzedProject& project,
                                         const LayerTimingOptions& options) {
    const torch::Dtype dtype = run_dtype(project, options.dtype);
    const torch::Device device = rank_device(options.device, 0);
    // In the project's precision, as core counts the bytes the memory model holds.
    const double element_bytes = static_cast<double>(dtype_bytes(project.project.training.dtype));
    const int count = static_cast<int>(project.layers.size());
    const int microbatch_size =
        options.microbatch_size > 0 ? options.microbatch_size : project.microbatch_size;
    std::vector<LayerBench> benches = make_benches(project, microbatch_size, dtype, device);
    std::optional<ConcurrentRanks> others;
    if (options.concurrent_ranks > 1) {
        others.emplace(project, options.concurrent_ranks - 1, microbatch_size, dtype, device);
    }

    // Every repetition visits every layer, so a burst of load from elsewhere
    // on the machine spreads over all layers' samples instead of inflating
    // every sample of the one layer it hit.
    const int repeats = std::max(1, options.repeats);
    const int rounds = options.warmup + repeats;
    for (int i = 0; i < rounds; ++i) {
        if (options.on_round) {
            options.on_round(i, rounds);
        }
        const bool keep = i >= options.warmup;
        split_backward_round(benches, device, keep);
        full_backward_round(benches, device, keep);
        for (auto& b : benches) {
            if (b.optimizer) {
                time_optimizer(*b.optimizer, device, keep ? &b.timings : nullptr);
            }
        }
    }

    std::vector<LayerProfile> out;
    out.reserve(benches.size());
    for (int l = 0; l < count; ++l) {
        const Timings& t = benches[static_cast<std::size_t>(l)].timings;
        LayerProfile lp;
        lp.name = project.project.model.layers[static_cast<std::size_t>(l)].name;
        lp.forward_ms = median(t.forward) * 1e3;
        lp.backward_input_ms = median(t.input_grad) * 1e3;
        lp.backward_weight_ms = median(t.weight_grad) * 1e3;
        lp.backward_ms = median(t.backward) * 1e3;
        lp.optimizer_ms = median(t.optimizer) * 1e3;  // 0 without parameters
        // What the memory model holds for the layer per micro-batch, from
        // the catalog (see docs/real-runs.md, "Profiling").
        const LayerAnalysis& analysis = project.layers[static_cast<std::size_t>(l)];
        lp.activation_bytes =
            static_cast<std::int64_t>(analysis.stashed_elements * microbatch_size * element_bytes);
        // What was measured, so that a model of other sizes is told.
        lp.parameters = analysis.parameters;
        lp.output_shape = analysis.output_shape;
        out.push_back(std::move(lp));
    }
    return out;
}

}  // namespace pipewright::backend
