#include <algorithm>
#include <sstream>

#include "backend_commands.h"
#include "pipewright/backend/launcher.h"
#include "report_format.h"

// `run` and `worker` carried out by the backend program (LibTorch).

namespace pipewright::cli {
namespace {

backend::RunSettings settings_of(const RunArgs& a) {
    backend::RunSettings s;
    s.project = a.project;
    s.schedule = a.schedule;
    s.schedule_csv = a.schedule_csv;
    s.microbatches = a.microbatches;
    s.batch_size = a.batch_size;
    s.steps = a.steps;
    s.dtype = a.dtype;
    s.timeout_s = a.timeout_s;
    s.save_params = a.save_params;
    return s;
}

void print_summary(std::ostream& out, const nlohmann::json& s, const RunArgs& a) {
    const auto& losses = s.at("losses");
    out << "\n"
        << a.project << ": " << s.at("schedule").get<std::string>() << ", "
        << s.at("batch_size").get<int>() << " samples per step in "
        << s.at("microbatches").get<int>() << " micro-batches of "
        << s.at("microbatch_size").get<int>() << ", " << s.at("steps").get<int>() << " steps\n\n";
    const int measured = s.at("steps").get<int>() - s.at("warmup_steps").get<int>();
    out << "  iteration time  " << format_duration(s.at("iteration_time_s").get<double>())
        << "  (median of " << measured << " step" << (measured == 1 ? "" : "s") << " after "
        << s.at("warmup_steps").get<int>() << " warm-up)\n";
    out << "  throughput      " << format_rate(s.at("throughput_samples_per_s").get<double>())
        << " samples/s\n";
    out << "  bubble          " << format_percent(s.at("bubble_fraction").get<double>())
        << "  (in the step shown in timeline.json)\n";
    if (!losses.empty() && !losses.front().is_null() && !losses.back().is_null()) {
        std::ostringstream l;
        l.precision(4);
        l << losses.front().get<double>() << " -> " << losses.back().get<double>();
        out << "  loss            " << l.str() << "  (step 1 -> " << losses.size() << ")\n";
    }
    const auto& devices = s.at("devices");
    const bool on_gpus = std::any_of(devices.begin(), devices.end(), [](const auto& d) {
        return d.value("memory_kind", std::string("rss")) == "cuda_allocated";
    });
    // On a GPU the allocator counts tensors only: no runtime to subtract.
    TextTable table({"rank", "device", "threads", "busy", "bubble",
                     on_gpus ? "peak allocated" : "peak RSS", "above runtime"});
    for (const auto& d : devices) {
        const std::string where = d.at("name").get<std::string>();
        const std::string spec = d.value("spec", std::string("cpu"));
        table.add_row({std::to_string(d.at("rank").get<int>()),
                       spec == "cpu" ? where : where + " (" + spec + ")",
                       std::to_string(d.at("threads").get<int>()),
                       format_duration(d.value("busy_s", 0.0)),
                       format_percent(d.value("bubble_fraction", 0.0)),
                       format_bytes(d.at("peak_memory_bytes").get<double>()),
                       format_bytes(d.value("model_peak_memory_bytes", 0.0))});
    }
    for (std::size_t column = 3; column <= 6; ++column) {
        table.right_align(column);
    }
    out << '\n';
    table.print(out, "  ");
    const std::string dir = s.at("out_dir").get<std::string>();
    if (s.value("complete", true)) {
        out << "\nWrote " << dir << "/: timeline.json (measured timeline), trace.json (open in "
            << "https://ui.perfetto.dev), metrics.json, run.log\n";
    } else {
        out << "\nNode " << s.value("node_rank", 0) << " of " << s.value("nnodes", 1)
            << ": the figures above cover this node's ranks only; node 0 wrote the complete "
               "timeline and metrics.\nWrote "
            << dir << "/: summary.json, run.log, rank-R.log\n";
    }
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
    o.master = a.master;
    o.nnodes = a.nnodes;
    o.node_rank = a.node_rank;
    o.nproc_per_node = a.nproc_per_node;
    o.threads_per_rank = a.threads_per_rank;
    o.device = a.device;
    o.json = a.json;
    o.progress_json = a.progress == "json";
    const auto outcome = backend::launch_run(o, err);
    if (outcome.exit_code != 0) {
        return outcome.exit_code;
    }
    if (a.json) {
        out << outcome.summary.dump(2) << '\n';
    } else {
        print_summary(out, outcome.summary, a);
    }
    return kOk;
}

int run_worker_command(const WorkerArgs& w, std::ostream& err) {
    backend::WorkerOptions o;
    o.settings = settings_of(w.run);
    o.rank = w.rank;
    o.world_size = w.world;
    o.master = w.master;
    o.store_file = w.store_file;
    o.out_dir = w.out;
    o.threads = w.threads;
    o.device = w.device;
    o.local_rank = w.local_rank;
    return backend::run_worker(o, err);
}
}  // namespace pipewright::cli
