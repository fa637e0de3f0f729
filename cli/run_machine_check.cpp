#include "run_machine_check.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <thread>

#include "pipewright/core/printable_name.h"
#include "pipewright/core/project_io.h"
#include "pipewright/core/quantity_format.h"
#include "pipewright/sim/simulation.h"
#include "run_handoff.h"

namespace pipewright::cli {

MachineResources this_machine() {
    MachineResources m;
    m.cores = static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
    std::ifstream meminfo("/proc/meminfo");
    std::string key;
    std::int64_t kib = 0;
    std::string unit;
    while (meminfo >> key >> kib) {
        std::getline(meminfo, unit);
        if (key == "MemAvailable:") {
            m.available_bytes = kib * 1024;
            break;
        }
    }
    return m;
}

std::string run_machine_problem(const RunArgs& a, const MachineResources& machine) {
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
    const int world = project->world_size() * std::max(1, project->project.tensor_parallel.size);
    const int ranks = a.nproc_per_node.value_or((world + a.nnodes - 1) / std::max(1, a.nnodes));
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

}  // namespace pipewright::cli
