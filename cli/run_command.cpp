#include "run_command.h"

#include <algorithm>
#include <sstream>

#include "commands.h"
#include "option_checks.h"
#include "report_format.h"

#ifdef PIPEWRIGHT_HAVE_BACKEND
#include "pipewright/backend/launcher.h"
#endif

namespace pipewright::cli {
namespace {

// Options shared by `run` and the worker: what defines the training.
void add_training_options(CLI::App* cmd, RunArgs& a) {
    cmd->add_option("project", a.project, "Project file (.json)")->required();
    cmd->add_option("--schedule", a.schedule, "Schedule to use instead of the project's");
    cmd->add_option("--schedule-csv", a.schedule_csv, "Run a schedule from a PyTorch-style CSV");
    cmd->add_option("--microbatches,-m", a.microbatches, "Number of micro-batches")
        ->check(whole_number(1));
    cmd->add_option("--batch-size,-b", a.batch_size, "Samples per iteration")
        ->check(whole_number(1));
    cmd->add_option("--steps", a.steps, "Training steps (default: the project's)")
        ->check(whole_number(1));
    // At most a week: a wait that long is a hang, and the bound keeps the
    // conversion to milliseconds finite and exact.
    cmd->add_option("--timeout", a.timeout_s,
                    "Seconds any rank waits for another before giving up (default 60)")
        ->check(finite_number(0.001, 604800));
    // For tests: exact comparisons with single-process training.
    cmd->add_option("--dtype", a.dtype, "Override the compute precision")
        ->check(CLI::IsMember({"float32", "float64"}))
        ->group("");
    cmd->add_flag("--save-params", a.save_params, "Write each stage's parameters")->group("");
}

#ifdef PIPEWRIGHT_HAVE_BACKEND
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
#endif

}  // namespace

void add_run_command(CLI::App& app, RunArgs& a) {
    CLI::App* cmd = app.add_subcommand(
        "run", "Train the project for real with LibTorch on local CPU ranks and measure it");
    add_training_options(cmd, a);
    cmd->add_option("--warmup", a.warmup, "Steps left out of the medians (default 1)")
        ->check(whole_number(0));
    cmd->add_option("--out", a.out,
                    "Output folder, new or empty (default runs/<model>-<timestamp>)");
    cmd->add_flag("--overwrite", a.overwrite,
                  "Replace the earlier run in a non-empty --out (only a run's own files)");
    cmd->add_option("--port", a.port,
                    "Host the rendezvous as a TCPStore on this port (of every interface) "
                    "instead of a private file")
        ->check(whole_number(1, 65535));
    cmd->add_option("--master", a.master,
                    "HOST:PORT of the rendezvous store; node 0 hosts it there, the other nodes "
                    "connect to it (required with --nnodes > 1)");
    cmd->add_option("--nnodes", a.nnodes,
                    "Number of nodes (machines) of a multi-node run; start one launcher on each "
                    "(default 1)")
        ->check(whole_number(1));
    cmd->add_option("--node-rank", a.node_rank,
                    "This node's index, 0 to nnodes - 1; node 0 hosts the store and writes the "
                    "complete outputs (default 0)")
        ->check(whole_number(0));
    cmd->add_option("--nproc-per-node", a.nproc_per_node,
                    "Ranks this node starts (default: ranks / nnodes, in rank order)")
        ->check(whole_number(1));
    cmd->add_option("--threads-per-rank", a.threads_per_rank,
                    "Torch threads per rank, at most the cores (default: cores / ranks of the "
                    "run on this machine)")
        ->check(whole_number(1));
    cmd->add_option("--device", a.device,
                    "auto (a GPU per rank when there are enough, else CPUs), cpu or cuda")
        ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
    cmd->add_option("--progress", a.progress, "Progress on stderr: text or json (JSON lines)")
        ->check(CLI::IsMember({"text", "json"}));
    cmd->add_flag("--json", a.json, "Print the summary as one JSON object");
}

void add_worker_command(CLI::App& app, WorkerArgs& w) {
    // Internal: started by the launcher, hidden from --help.
    CLI::App* cmd = app.add_subcommand("worker", "One rank of a run (started by run)");
    cmd->group("");
    add_training_options(cmd, w.run);
    cmd->add_option("--rank", w.rank)->required();
    cmd->add_option("--world", w.world)->required();
    cmd->add_option("--master", w.master);
    cmd->add_option("--store-file", w.store_file);
    cmd->add_option("--out", w.out)->required();
    cmd->add_option("--threads", w.threads);
    cmd->add_option("--device", w.device)->check(CLI::IsMember({"cpu", "cuda"}));
    cmd->add_option("--local-rank", w.local_rank);
}

#ifdef PIPEWRIGHT_HAVE_BACKEND
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
#else
int run_run(const RunArgs& /*args*/, std::ostream& /*out*/, std::ostream& err) {
    err << "pipewright: run: the LibTorch backend was not built (configure with "
           "-DPIPEWRIGHT_BUILD_BACKEND=ON and LibTorch installed)\n";
    return kInvalidInput;
}

int run_worker_command(const WorkerArgs& /*args*/, std::ostream& err) {
    err << "pipewright: worker: the LibTorch backend was not built\n";
    return kInvalidInput;
}
#endif

}  // namespace pipewright::cli
