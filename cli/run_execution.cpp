#include <algorithm>
#include <filesystem>
#include <sstream>

#include "backend_commands.h"
#include "pipewright/backend/backend_error.h"
#include "pipewright/backend/launcher.h"
#include "pipewright/backend/worker_command_line.h"
#include "pipewright/core/launch_environment.h"
#include "report_format.h"

// `run` and `worker` carried out by the backend program (LibTorch).

namespace pipewright::cli {
namespace {

backend::RunSettings settings_of(const RunArgs& a) {
    backend::RunSettings s;
    s.project = a.project;
    s.schedule = a.schedule;
    s.schedule_csv = a.schedule_csv;
    s.schedule_costs = a.schedule_costs;
    s.microbatches = a.microbatches;
    s.batch_size = a.batch_size;
    s.data_parallel = a.data_parallel;
    s.tensor_parallel = a.tensor_parallel;
    s.expert_parallel = a.expert_parallel;
    s.steps = a.steps;
    s.dtype = a.dtype;
    s.data_dir = a.data.empty() ? std::string()
                                : std::filesystem::absolute(a.data).lexically_normal().string();
    s.timeout_s = a.timeout_s;
    s.save_params = a.save_params;
    s.stop_on_nan = a.stop_on_nan;
    s.checkpoint_every = a.checkpoint_every;
    s.checkpoint_dir = a.checkpoint_dir;
    s.resume_from = a.resume;
    return s;
}

// This node's rank logs by name: "rank-2.log and rank-3.log", "rank-4.log …
// rank-7.log".
std::string rank_logs(const RunSummary& s) {
    if (s.devices.empty()) {
        return "a log per rank";
    }
    const auto [low, high] = std::minmax_element(
        s.devices.begin(), s.devices.end(),
        [](const RunDeviceMetrics& a, const RunDeviceMetrics& b) { return a.rank < b.rank; });
    const auto log = [](int rank) { return "rank-" + std::to_string(rank) + ".log"; };
    if (low->rank == high->rank) {
        return log(low->rank);
    }
    return log(low->rank) + (high->rank == low->rank + 1 ? " and " : " … ") + log(high->rank);
}

void print_summary(std::ostream& out, const RunSummary& s, const RunArgs& a) {
    out << "\n"
        << a.project << ": " << s.schedule << ", " << s.batch_size << " samples per step in "
        << s.microbatches << " micro-batches of " << s.microbatch_size;
    if (s.data_parallel > 1) {
        out << " per replica on " << s.data_parallel << " replicas ("
            << (s.zero_stage == 1 ? "ZeRO-1: optimizer state sharded" : "gradients all-reduced")
            << ")";
    }
    out << ", " << s.steps << " steps";
    if (s.first_step > 1) {
        out << " (" << s.first_step << " to " << s.first_step + s.steps - 1
            << ", resumed after step " << s.first_step - 1 << ")";
    }
    out << "\n\n";
    const int measured = s.steps - s.warmup_steps;
    out << "  iteration time  " << format_duration(s.iteration_time_s) << "  (median of "
        << measured << " step" << (measured == 1 ? "" : "s") << " after " << s.warmup_steps
        << " warm-up)\n";
    out << "  throughput      " << format_rate(s.throughput_samples_per_s) << " samples/s\n";
    out << "  bubble          " << format_percent(s.bubble_fraction)
        << "  (in the step shown in timeline.json)\n";
    if (!s.losses.empty() && s.losses.front() && s.losses.back()) {
        std::ostringstream l;
        l.precision(4);
        l << *s.losses.front() << " -> " << *s.losses.back();
        const auto last = s.first_step + static_cast<int>(s.losses.size()) - 1;
        out << "  loss            " << l.str() << "  (step " << s.first_step << " -> " << last
            << ")\n";
    }
    const bool on_gpus = std::any_of(s.devices.begin(), s.devices.end(), [](const auto& d) {
        return d.memory_kind == "cuda_allocated";
    });
    // On a GPU the allocator counts tensors only: no runtime to subtract.
    TextTable table({"rank", "device", "threads", "busy", "bubble",
                     on_gpus ? "peak allocated" : "peak RSS", "above runtime"});
    for (const auto& d : s.devices) {
        table.add_row({std::to_string(d.rank),
                       d.spec == "cpu" ? d.name : d.name + " (" + d.spec + ")",
                       std::to_string(d.threads), format_duration(d.busy_s),
                       format_percent(d.bubble_fraction),
                       format_bytes(static_cast<double>(d.peak_memory_bytes)),
                       format_bytes(static_cast<double>(d.model_peak_memory_bytes))});
    }
    for (std::size_t column = 3; column <= 6; ++column) {
        table.right_align(column);
    }
    out << '\n';
    table.print(out, "  ");
    if (s.complete) {
        out << "\nWrote " << s.out_dir
            << "/: timeline.json (measured timeline), trace.json (open in "
            << "https://ui.perfetto.dev), metrics.json, run.log\n";
    } else {
        out << "\nNode " << s.node_rank.value_or(0) << " of " << s.nnodes.value_or(1)
            << ": the figures above cover this node's ranks only; node 0 wrote the complete "
               "timeline and metrics.\nWrote "
            << s.out_dir << "/: summary.json, run.log, " << rank_logs(s) << "\n";
    }
}

std::string host_port(const std::string& host, int port) {
    const bool v6 = host.find(':') != std::string::npos;
    return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

// --master-addr and --master-port are torchrun's spelling of --master; one
// without the other takes torchrun's default for the other.
std::optional<std::string> master_of(const RunArgs& a) {
    if (!a.master_addr && !a.master_port) {
        return a.master;
    }
    if (a.master) {
        throw backend::BackendError(
            "give either --master HOST:PORT or --master-addr/--master-port (or their "
            "PET_MASTER_ADDR/PET_MASTER_PORT), not both");
    }
    if (a.port) {
        throw backend::BackendError("give either --port or --master-port, not both");
    }
    if (a.master_addr && a.master_addr->empty()) {
        throw backend::BackendError(
            "--master-addr (or PET_MASTER_ADDR) must name a host, got \"\"");
    }
    return host_port(a.master_addr.value_or("127.0.0.1"), a.master_port.value_or(29500));
}

}  // namespace

int run_run(const RunArgs& a, std::ostream& out, std::ostream& err) {
    if (a.schedule && a.schedule_csv) {
        err << "pipewright: give either --schedule or --schedule-csv, not both\n";
        return kUsage;
    }
    backend::RunOptions o;
    o.settings = settings_of(a);
    o.warmup = a.warmup;
    o.out_dir = a.out;
    o.overwrite = a.overwrite;
    o.port = a.port;
    o.nnodes = a.nnodes;
    o.node_rank = a.node_rank;
    o.nproc_per_node = a.nproc_per_node;
    try {
        o.environment = launch_from_environment(a.launcher, process_environment());
        if (!o.environment) {
            o.master = master_of(a);
        }
    } catch (const LaunchError& e) {  // a launcher's variable
        err << "pipewright: " << e.what() << '\n';
        return kUsage;
    } catch (const backend::BackendError& e) {  // contradictory --master flags
        err << "pipewright: " << e.what() << '\n';
        return kUsage;
    }
    if (o.environment) {
        // The environment assigned this process one rank: it is a node of
        // its own (the agent flags and their PET_* variables describe the
        // agent that started it, not this process).
        o.nnodes = o.environment->world_size;
        o.node_rank = o.environment->rank;
        o.nproc_per_node = 1;
        o.master = host_port(o.environment->master_host, o.environment->master_port);
        o.port.reset();
    }
    o.threads_per_rank = a.threads_per_rank;
    o.core_binding = a.core_binding == "on"    ? backend::CoreBinding::on
                     : a.core_binding == "off" ? backend::CoreBinding::off
                                               : backend::CoreBinding::automatic;
    o.device = a.device;
    o.json = a.json;
    o.progress_json = a.progress == "json";
    o.restarted = backend::restart_from_environment();
    const auto outcome = backend::launch_run(o, err);
    if (outcome.exit_code != 0 && outcome.exit_code != backend::kExitStoppedOnNan) {
        return outcome.exit_code;
    }
    if (a.json) {
        out << to_json(outcome.summary).dump(2) << '\n';
    } else {
        print_summary(out, outcome.summary, a);
    }
    return outcome.exit_code;
}

int run_worker_command(const WorkerArgs& w, std::ostream& err) {
    backend::WorkerOptions o;
    try {
        o = backend::parse_worker_arguments(w.arguments);
    } catch (const backend::BackendError& e) {
        err << "pipewright " << e.what() << '\n';
        return kUsage;
    }
    return backend::run_worker(o, err);
}
}  // namespace pipewright::cli
