// `pipewright profile`: loads the project as a run would, measures its layers
// with the threads one rank of a run gets, and the transfer between two ranks.
#include "pipewright/backend/profiler.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <iomanip>
#include <iterator>
#include <optional>
#include <thread>

#include <torch/torch.h>
#include <torch/version.h>
#include <nlohmann/json.hpp>

#include "execution/allocator_tuning.h"
#include "execution/compute_device.h"
#include "pipewright/backend/launcher.h"
#include "pipewright/backend/modules.h"
#include "pipewright/core/quantity_format.h"
#include "profile/host_name.h"

namespace pipewright::backend {
namespace {

// Torch's thread count for the duration of a profile, restored however it ends.
class ThreadCount {
  public:
    explicit ThreadCount(int threads) : previous_(torch::get_num_threads()) {
        torch::set_num_threads(threads);
    }
    ~ThreadCount() { torch::set_num_threads(previous_); }
    ThreadCount(const ThreadCount&) = delete;
    ThreadCount& operator=(const ThreadCount&) = delete;

  private:
    int previous_;
};

// The default sizes plus what crosses this project's stage boundaries (one
// micro-batch of a layer's output), so the fit is anchored where it is used.
std::vector<std::int64_t> boundary_ladder(const AnalyzedProject& p) {
    std::vector<std::int64_t> sizes = default_transfer_sizes();
    const auto element_bytes = static_cast<double>(dtype_bytes(p.project.training.dtype));
    // The last stage's output is the model's: it crosses nothing.
    for (std::size_t s = 0; s + 1 < p.stages.size(); ++s) {
        const auto& stage = p.stages[s];
        const double bytes = p.layers[static_cast<std::size_t>(stage.last_layer)].output_elements *
                             p.microbatch_size * element_bytes;
        // Bounded so that a huge boundary cannot stall the profile.
        if (bytes >= 4 && bytes <= 256.0 * (1 << 20)) {
            sizes.push_back(static_cast<std::int64_t>(bytes));
        }
    }
    std::sort(sizes.begin(), sizes.end());
    sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
    return sizes;
}

// The default sizes plus each stage's gradients (what a replica reduces, in
// buckets of at most DDP's 25 MiB), so the fit is anchored where it is used.
std::vector<std::int64_t> gradient_ladder(const AnalyzedProject& p) {
    std::vector<std::int64_t> sizes = default_collective_sizes();
    const auto element_bytes = static_cast<double>(dtype_bytes(p.project.training.dtype));
    for (const auto& stage : p.stages) {
        double parameters = 0;
        for (int l = stage.first_layer; l <= stage.last_layer; ++l) {
            parameters += static_cast<double>(p.layers[static_cast<std::size_t>(l)].parameters);
        }
        const double bytes = std::min(parameters * element_bytes, 25.0 * (1 << 20));
        if (bytes >= 8) {
            sizes.push_back(static_cast<std::int64_t>(bytes));
        }
    }
    // Stages of the same width differ by a bias or two: one size for them.
    std::sort(sizes.begin(), sizes.end());
    sizes.erase(std::unique(sizes.begin(), sizes.end(),
                            [](std::int64_t a, std::int64_t b) {
                                return static_cast<double>(b) < 1.01 * static_cast<double>(a);
                            }),
                sizes.end());
    return sizes;
}

// The one-minute load average, when the system says it.
std::optional<double> load_average() {
    std::ifstream file("/proc/loadavg");
    double one_minute = 0;
    if (file >> one_minute) {
        return one_minute;
    }
    return std::nullopt;
}

// The sizes to measure: the project's first (the profile's own), then the
// others ascending; nullopt after saying why one cannot be measured.
std::optional<std::vector<int>> sizes_to_measure(const ProfileOptions& o,
                                                 const AnalyzedProject& project, bool on_gpu,
                                                 std::ostream& err) {
    const int own = project.microbatch_size;
    // One replica's batch: no micro-batch of a run is larger.
    const int batch = std::max(1, project.microbatch_size * project.microbatches);
    // A GPU's memory holds the project's size, not necessarily a larger one.
    std::vector<int> others =
        o.sizes.empty() ? default_profile_sizes(own, on_gpu ? own : batch) : o.sizes;
    for (const int s : others) {
        if (s < 1 || s > batch) {
            err << "pipewright: --sizes: " << s
                << " samples is not a micro-batch of this project (1 to its batch of " << batch
                << " per pipeline)\n";
            return std::nullopt;
        }
    }
    std::sort(others.begin(), others.end());
    others.erase(std::unique(others.begin(), others.end()), others.end());
    std::vector<int> out{own};
    std::copy_if(others.begin(), others.end(), std::back_inserter(out),
                 [own](int s) { return s != own; });
    return out;
}

// One progress event as a JSON line, as run's --progress json writes its
// steps: the studio reads these instead of matching the text.
void progress_event(std::ostream& err, nlohmann::json fields) {
    fields["event"] = "profile";
    err << fields.dump() << '\n' << std::flush;
}

}  // namespace

ProfileOutcome profile_project(const ProfileOptions& o, std::ostream& err) {
    ProfileOutcome outcome;
    RunSettings settings;
    settings.project = o.project;
    settings.microbatches = o.microbatches;
    settings.batch_size = o.batch_size;
    // Layer and transfer costs do not depend on the schedule; GPipe accepts
    // any placement and micro-batch count, so profiling at a size the
    // project's own schedule refuses (one micro-batch under 1F1B) still works.
    settings.schedule = "gpipe";
    const auto project = load_for_run(settings, err, LoadPurpose::profile);
    if (!project) {
        return outcome;
    }
    // One rank's device: the first GPU, or the CPU.
    std::string kind;
    try {
        kind = resolve_device_kind(o.device, 1);
    } catch (const std::exception& e) {
        err << "pipewright: " << e.what() << '\n';
        return outcome;
    }
    const bool on_gpu = kind == "cuda";
    const unsigned cores = std::max(1U, std::thread::hardware_concurrency());
    // What `run` gives each rank by default, so the figures are the ones a
    // rank of a run sees.
    const int threads = o.threads > 0 ? o.threads : default_threads_per_rank(project->world_size());

    // As many ranks compute at once as the run has here, up to a rank a core
    // (each concurrent one holds a copy of the model); on GPUs each rank has
    // a device of its own.
    const int concurrent =
        o.concurrent_ranks > 0
            ? o.concurrent_ranks
            : (on_gpu ? 1 : std::min(project->world_size(), static_cast<int>(cores)));

    Profile profile;
    profile.device_kind = kind;
    profile.device_name =
        on_gpu ? device_name(rank_device(kind, 0))
               : "CPU, " + std::to_string(threads) + " thread" + (threads == 1 ? "" : "s");
    profile.microbatch_size = project->microbatch_size;
    profile.machine.host = host_name();
    profile.machine.cores = static_cast<int>(cores);
    profile.machine.threads = threads;
    profile.machine.repeats = o.repeats;
    profile.machine.concurrent_ranks = concurrent;
    profile.machine.torch_version = TORCH_VERSION;

    // Other work on the cores stretches every timing, and the transfer's
    // most (each waits for a core): say so before measuring.
    if (const auto load = load_average(); load && *load >= 0.5 * static_cast<double>(cores)) {
        err << "pipewright: warning: this machine is busy (load average " << std::fixed
            << std::setprecision(1) << *load << std::defaultfloat << " on " << cores
            << " cores): the timings will come out high, the transfer's most; profile when it "
               "is quiet\n";
    }
    const auto sizes = sizes_to_measure(o, *project, on_gpu, err);
    if (!sizes) {
        return outcome;
    }
    std::string size_list;
    for (const int s : *sizes) {
        size_list += (size_list.empty() ? "" : ", ") + std::to_string(s);
    }
    err << "pipewright: profiling " << project->project.model.name << ": " << project->layers.size()
        << " layers at micro-batch size" << (sizes->size() == 1 ? " " : "s ") << size_list << " on "
        << profile.device_name << ", " << o.repeats << " repeats after " << o.warmup << " warm-up"
        << (concurrent > 1 ? ", while " + std::to_string(concurrent) + " ranks compute at once"
                           : std::string())
        << "\n"
        << std::flush;
    const ThreadCount thread_count(threads);
    // As the workers of a run do (worker.cpp): subnormals flushed to zero.
    at::globalContext().setFlushDenormal(true);
    keep_freed_memory_for_reuse();
    try {
        LayerTimingOptions timing;
        timing.repeats = o.repeats;
        timing.warmup = o.warmup;
        timing.device = kind;
        timing.concurrent_ranks = concurrent;
        std::size_t size_index = 0;
        timing.on_round = [&](int round, int rounds) {
            if (o.json_progress) {
                progress_event(err, {{"phase", "layers"},
                                     {"size", size_index + 1},
                                     {"sizes", sizes->size()},
                                     {"round", round + 1},
                                     {"rounds", rounds},
                                     {"warmup", round < o.warmup}});
                return;
            }
            err << "  round " << (round + 1) << "/" << rounds
                << (round < o.warmup ? " (warm-up)" : "") << " over the layers\n"
                << std::flush;
        };
        for (std::size_t i = 0; i < sizes->size(); ++i) {
            size_index = i;
            const int size = (*sizes)[i];
            if (sizes->size() > 1) {
                err << "  micro-batch size " << size << ":\n";
            }
            timing.microbatch_size = size;
            std::vector<LayerProfile> layers = measure_layers(*project, timing);
            double total_ms = 0;
            for (const auto& l : layers) {
                total_ms += l.forward_ms + l.backward_input_ms + l.backward_weight_ms;
            }
            err << "  layers: " << format_duration(total_ms * 1e-3) << " per micro-batch of "
                << size << " (forward + backward)\n"
                << std::flush;
            if (i == 0) {
                profile.layers = std::move(layers);
                continue;
            }
            for (std::size_t l = 0; l < layers.size(); ++l) {
                const LayerProfile& m = layers[l];
                profile.layers[l].other_sizes.push_back(
                    {size, m.forward_ms, m.backward_input_ms, m.backward_weight_ms, m.backward_ms});
            }
        }
        if (o.measure_transfer && on_gpu) {
            // The transfers below run between two Gloo ranks in host memory;
            // between GPUs the project's link classes (NVLink, PCIe, network)
            // describe the transfer better than that would.
            err << "  transfer: not measured on GPUs; the simulation keeps the project's links\n";
        } else if (o.measure_transfer) {
            if (o.json_progress) {
                progress_event(err, {{"phase", "transfer"}});
            } else {
                err << "  transfer: one way between two Gloo ranks (processes) on 127.0.0.1\n"
                    << std::flush;
            }
            TransferOptions transfer;
            transfer.timeout_s = o.timeout_s;
            transfer.message_bytes = boundary_ladder(*project);
            transfer.peer_program = o.backend_program;
            TransferFit fit = measure_transfer(transfer);
            profile.transfer = fit.link;
            profile.transfer_samples = std::move(fit.samples);
            profile.ready_receive_us = fit.ready_receive_us;
            profile.machine.transport = "gloo";
            if (o.json_progress) {
                progress_event(err, {{"phase", "collectives"}});
            } else {
                err << "  collectives: all-reduce and all-gather in a Gloo group of two on "
                       "127.0.0.1\n"
                    << std::flush;
            }
            TransferOptions collective;
            collective.timeout_s = o.timeout_s;
            collective.repeats = 10;
            collective.message_bytes = gradient_ladder(*project);
            CollectiveFits fits = measure_collectives(collective);
            profile.all_reduce = std::move(fits.all_reduce);
            profile.all_gather = std::move(fits.all_gather);
        }
    } catch (const c10::Error& e) {
        err << "pipewright: profile: " << e.what_without_backtrace() << '\n';
        return outcome;
    } catch (const std::exception& e) {
        err << "pipewright: profile: " << o.project << ": " << e.what() << '\n';
        return outcome;
    }
    outcome.profile = std::move(profile);
    outcome.exit_code = 0;
    return outcome;
}

}  // namespace pipewright::backend
