#include "run_machine_check.h"

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <thread>

#include "pipewright/core/launch_files.h"
#include "pipewright/core/machine_memory.h"
#include "pipewright/core/printable_name.h"
#include "pipewright/core/profile.h"
#include "pipewright/core/project_io.h"
#include "pipewright/core/quantity_format.h"
#include "pipewright/sim/simulation.h"
#include "run_handoff.h"

namespace pipewright::cli {

MachineResources this_machine() {
    MachineResources m;
    m.cores = static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
    m.has_gpus = has_nvidia_gpus();
    m.available_bytes = available_memory_bytes();
    return m;
}

bool has_nvidia_gpus() {
    std::error_code ec;
    return std::filesystem::exists("/dev/nvidia0", ec) ||
           !std::filesystem::is_empty("/proc/driver/nvidia/gpus", ec);
}

std::string run_machine_problem(const RunArgs& a, const MachineResources& machine,
                                const Environment& environment) {
    // Ranks on GPUs hold the model in the GPUs' memory, which the simulation
    // checks against each device's capacity: only CPU workers fill this one.
    if (a.device == "cuda" || (a.device == "auto" && machine.has_gpus)) {
        return "";
    }
    const LoadedProject loaded = load_project_file(a.project);
    if (!loaded.project) {
        return "";
    }
    Diagnostics problems;
    const auto project = analyze_project(*loaded.project, run_analysis_options(a), problems);
    if (!project || !problems.empty()) {
        return "";
    }
    // One worker per device of every replica and tensor slice; a node of a
    // multi-node run starts its share.
    const int world = run_process_count(*project);
    int ranks = a.nproc_per_node.value_or((world + a.nnodes - 1) / std::max(1, a.nnodes));
    try {
        if (const auto launch = launch_from_environment(a.launcher, environment)) {
            ranks = launch->local_world_size;
        }
    } catch (const LaunchError&) {
        return "";  // the backend refuses the variable, naming it
    }
    std::int64_t model_peak = 0;
    try {
        const SimulationReport report =
            simulate_project(*project, CostModelOptions{}, Recording::summary);
        for (const auto& d : report.devices) {
            model_peak = std::max(model_peak, d.peak_memory_bytes);
        }
    } catch (const std::exception&) {
        return "";  // the backend says what does not run
    }
    const std::int64_t per_rank = model_peak + kWorkerRuntimeBytes;
    const double need = static_cast<double>(per_rank) * ranks;
    std::ostringstream why;
    if (machine.available_bytes > 0 && need > static_cast<double>(machine.available_bytes)) {
        why << "this run needs about " << format_bytes(need) << " of memory (" << ranks << " rank"
            << (ranks == 1 ? "" : "s") << " × " << format_bytes(static_cast<double>(per_rank))
            << ": the simulated peak of the "
            << "busiest rank, " << format_bytes(static_cast<double>(model_peak)) << ", plus about "
            << format_bytes(static_cast<double>(kWorkerRuntimeBytes))
            << " for each worker process), but this machine has "
            << format_bytes(static_cast<double>(machine.available_bytes))
            << " available; simulate it (`pipewright simulate " << printable_name(a.project)
            << "`) or run a smaller model";
    } else if (ranks > kMostRanksPerCore * machine.cores) {
        why << "this run starts " << ranks << " worker processes on " << machine.cores << " core"
            << (machine.cores == 1 ? "" : "s") << " (at most " << kMostRanksPerCore
            << " a core run in step); simulate it (`pipewright simulate " << a.project
            << "`), or spread it over machines with --nnodes";
    }
    if (why.tellp() > 0) {
        why << "; --force starts it anyway";
    }
    return why.str();
}

std::string profile_machine_problem(const ProfileArgs& a, const MachineResources& machine) {
    if (a.device == "cuda" || (a.device == "auto" && machine.has_gpus)) {
        return "";  // measured on a GPU, in its memory
    }
    const LoadedProject loaded = load_project_file(a.project);
    if (!loaded.project) {
        return "";
    }
    AnalysisOptions options;
    options.microbatches = a.microbatches;
    options.batch_size = a.batch_size;
    options.base_dir = std::filesystem::path(a.project).parent_path();
    Diagnostics problems;
    const auto project = analyze_project(*loaded.project, options, problems);
    if (!project || !problems.empty()) {
        return "";
    }
    // Measured in float32 on CPUs; every layer held at once.
    constexpr double kBytes = 4;
    constexpr double kWeightCopies = 6;  // weights, gradients, stand-ins and theirs, Adam's two
    // At the largest micro-batch size measured (profiler.cpp's choice).
    const std::vector<int> sizes =
        a.sizes.empty() ? default_profile_sizes(project->microbatch_size,
                                                project->microbatch_size * project->microbatches)
                        : a.sizes;
    double samples = project->microbatch_size;
    for (const int size : sizes) {
        samples = std::max(samples, static_cast<double>(size));
    }
    double held = 0;
    double transient = 0;
    double input = static_cast<double>(numel(project->project.model.input.shape));
    for (const auto& layer : project->layers) {
        held += (static_cast<double>(layer.parameters) * kWeightCopies + input * samples) * kBytes;
        // Its forward's kept activations and output, and their gradients.
        transient = std::max(
            transient, (layer.stashed_elements + layer.output_elements) * samples * kBytes * 2);
        input = layer.output_elements;
    }
    // Each rank computing at once holds a copy of its own (profiler.h).
    const int concurrent = a.concurrent_ranks > 0
                               ? a.concurrent_ranks
                               : std::min(project->world_size(), std::max(1, machine.cores));
    const double need = (held + transient) * concurrent + static_cast<double>(kWorkerRuntimeBytes);
    if (machine.available_bytes <= 0 || need <= static_cast<double>(machine.available_bytes)) {
        return "";
    }
    std::ostringstream why;
    why << "profiling this project needs about " << format_bytes(need) << " of memory ("
        << (concurrent > 1 ? std::to_string(concurrent) + " ranks computing at once, each with "
                           : "")
        << "every layer built at once: " << format_bytes(held)
        << " of weights, their stand-ins, the optimizer's state and each layer's input, plus "
        << format_bytes(transient) << " for the largest layer's forward and backward), but this "
        << "machine has " << format_bytes(static_cast<double>(machine.available_bytes))
        << " available; profile a smaller model, more micro-batches (-m: fewer samples each) or "
           "fewer --concurrent-ranks; --force measures it anyway";
    return why.str();
}

}  // namespace pipewright::cli
