#include "run/run_supervisor.h"

#include <algorithm>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <limits>
#include <sstream>
#include <thread>

#include "execution/compute_device.h"
#include "pipewright/backend/backend_error.h"
#include "pipewright/backend/modules.h"
#include "pipewright/backend/tensor_data.h"
#include "pipewright/backend/worker_command_line.h"
#include "pipewright/core/launch_files.h"
#include "pipewright/core/printable_name.h"
#include "pipewright/core/quantity_format.h"
#include "pipewright/core/run_records.h"
#include "pipewright/core/transformer_dims.h"
#include "run/checkpoint.h"
#include "run/core_binding.h"
#include "run/failure_cause.h"
#include "run/run_folder_preparation.h"
#include "run/run_outputs.h"
#include "run/shared_run_folder.h"
#include "torchscript/torchscript_modules.h"

namespace pipewright::backend {
namespace {

// The signal that interrupted the run (0: none). A closed terminal (SIGHUP)
// or a closed pipe (SIGPIPE, `pipewright run | head -1`) stops the ranks like
// Ctrl-C does instead of killing the launcher and orphaning its run folder.
volatile std::sig_atomic_t g_interrupted = 0;
extern "C" void on_interrupt(int signal) {
    g_interrupted = signal;
}

// Options that contradict each other or the run.
constexpr int kUsageError = 2;

std::string interruption_text(int signal) {
    switch (signal) {
        case SIGHUP:
            return "the terminal closed (SIGHUP)";
        case SIGPIPE:
            return "the output pipe closed (SIGPIPE)";
        case SIGTERM:
            return "terminated (SIGTERM)";
        default:
            return "interrupted";
    }
}

// Checks the project before any process starts; returns the problem.
std::string backend_problem(const AnalyzedProject& project, const RunOptions& o) {
    try {
        const torch::Dtype dtype = run_dtype(project, o.settings.dtype);
        for (const auto& l : project.project.model.layers) {
            if (!can_build(l.type)) {
                throw BackendError("layer \"" + printable_name(l.name) +
                                   "\": the backend cannot build layer type \"" + l.type + "\"");
            }
            if (l.type == "torchscript") {
                check_unchanged(project.project.model, torchscript_file(l));
            }
        }
        if (!o.settings.data_dir.empty()) {
            (void)TensorData(o.settings.data_dir, project, dtype);  // its problems, in words
        }
    } catch (const BackendError& e) {
        return o.settings.project + ": " + e.what();
    }
    return "";
}

}  // namespace

void RunSupervisor::Log::line(const std::string& text) {
    err << text << '\n' << std::flush;
    file << text << '\n' << std::flush;
}

RunSupervisor::RunSupervisor(const RunOptions& options, std::ostream& err)
    : o_(options), err_(err) {}

RunOutcome RunSupervisor::run() {
    // What the environment assigned comes first: a refusal below is read
    // with it.
    if (o_.environment) {
        err_ << (o_.progress_json
                     ? nlohmann::json{{"event", "launcher"},
                                      {"launcher", o_.environment->launcher},
                                      {"rank", o_.environment->rank},
                                      {"world_size", o_.environment->world_size},
                                      {"local_rank", o_.environment->local_rank},
                                      {"master", o_.environment->master_host + ":" +
                                                     std::to_string(o_.environment->master_port)}}
                           .dump()
                     : "pipewright: " + describe(*o_.environment))
             << '\n'
             << std::flush;
    }
    if (!load_and_check() || !choose_checkpoint() || !meet_at_rendezvous() ||
        !prepare_run_folder()) {
        return outcome_;
    }
    // From the first line the run prints: `run 2>&1 | head -1` closes the
    // pipe at the second, which must stop the run in words, not kill it.
    for (const int signal : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) {
        std::signal(signal, on_interrupt);
    }
    g_interrupted = 0;
    // Decided once, before any worker starts (see core_binding.h).
    binding_ = choose_core_binding(o_.core_binding, device_kind_ == "cuda");
    announce();
    if (!start_workers() || !watch_workers() || !write_outputs()) {
        return outcome_;
    }
    finish_with_other_nodes();
    // A run that --stop-on-nan ended wrote every output; its own status
    // tells a script that training diverged.
    outcome_.exit_code = o_.settings.stop_on_nan && first_nonfinite_step_ ? kExitStoppedOnNan : 0;
    return outcome_;
}

bool RunSupervisor::load_and_check() {
    project_ = load_for_run(o_.settings, err_);
    if (!project_) {
        return false;
    }
    if (const std::string problem = backend_problem(*project_, o_); !problem.empty()) {
        err_ << "pipewright: " << problem << '\n';
        return false;
    }
    if (o_.port && o_.master) {
        err_ << "pipewright: give either --port or --master, not both\n";
        outcome_.exit_code = kUsageError;
        return false;
    }
    // One worker per device of every replica (world rank = replica × ranks
    // of the pipeline + rank), each running the replica's schedule.
    world_ = run_process_count(*project_);
    if (o_.environment && o_.environment->world_size != world_) {
        err_ << "pipewright: " << o_.environment->world_variable << " is "
             << o_.environment->world_size << ", but " << o_.settings.project << " runs on "
             << world_ << " rank" << (world_ == 1 ? "" : "s")
             << " (one per device of every replica); start " << world_ << " process"
             << (world_ == 1 ? "" : "es") << '\n';
        outcome_.exit_code = kUsageError;
        return false;
    }
    master_.port = o_.port.value_or(0);
    try {
        mine_ = node_ranks(world_, o_.nnodes, o_.node_rank, o_.nproc_per_node);
        if (o_.master) {
            master_ = parse_host_port(*o_.master, "--master");
        } else if (o_.nnodes > 1) {
            throw std::invalid_argument("--nnodes " + std::to_string(o_.nnodes) +
                                        " needs --master HOST:PORT, the address of node 0");
        }
        if (o_.nnodes > 1 && master_.port == 0) {
            throw std::invalid_argument(
                "--master needs a fixed port with --nnodes > 1: the other nodes must know it");
        }
    } catch (const std::invalid_argument& e) {
        err_ << "pipewright: " << e.what() << '\n';
        outcome_.exit_code = kUsageError;
        return false;
    } catch (const BackendError& e) {
        err_ << "pipewright: " << e.what() << '\n';
        outcome_.exit_code = kUsageError;
        return false;
    }
    if (const unsigned cores = std::max(1U, std::thread::hardware_concurrency());
        o_.threads_per_rank > static_cast<int>(cores)) {
        err_ << "pipewright: --threads-per-rank " << o_.threads_per_rank << " is more than this "
             << "machine's " << cores << " core" << (cores == 1 ? "" : "s") << "; give at most "
             << cores << " (or leave it out: cores / ranks)\n";
        outcome_.exit_code = kUsageError;
        return false;
    }
    try {
        // A GPU per rank of this machine (its local rank picks it).
        device_kind_ = resolve_device_kind(
            o_.device, o_.environment ? o_.environment->local_world_size : mine_.count);
    } catch (const std::exception& e) {
        // BackendError, or Torch's own (c10::Error) when CUDA cannot be asked.
        err_ << "pipewright: " << e.what() << '\n';
        return false;
    }
    timeout_ = std::chrono::milliseconds(static_cast<std::int64_t>(o_.settings.timeout_s * 1000));
    steps_ = o_.settings.steps.value_or(project_->project.training.steps);
    multi_ = o_.nnodes > 1;
    node_name_ = multi_ ? "node " + std::to_string(o_.node_rank) + ": " : "";
    node_checked_.assign(static_cast<std::size_t>(o_.nnodes), false);
    return true;
}

bool RunSupervisor::prepare_run_folder() {
    outcome_.out_dir = o_.out_dir.value_or(default_run_folder(project_->project.model.name));
    // A restarted job replaces its earlier attempt's outputs, as does a
    // resume from a checkpoint inside --out; the checkpoints stay.
    const bool overwrite = o_.overwrite || !o_.restarted.empty() || resume_replaces_outputs_;
    std::vector<std::string> keep = checkpoint_entries_in(outcome_.out_dir);
    if (o_.environment && overwrite) {
        // The other ranks' folders of the earlier attempt: each rank clears
        // its own (prepare_shared_run_folder).
        for (int r = 1; r < world_; ++r) {
            keep.push_back("rank-" + std::to_string(r));
        }
    }
    try {
        if (o_.environment) {
            outcome_.out_dir =
                prepare_shared_run_folder(*rendezvous_->store, outcome_.out_dir, o_.node_rank,
                                          o_.settings.project, overwrite, timeout_, keep);
        } else {
            backend::prepare_run_folder(outcome_.out_dir, o_.settings.project, overwrite, keep);
        }
        settle_checkpoint_folder();
    } catch (const std::exception& e) {
        // Filesystem errors as well as the folder checks' own.
        err_ << "pipewright: " << e.what() << '\n';
        return false;
    }
    capture_.emplace(outcome_.out_dir + "/run.log");
    log_.emplace(Log{&err_ == &std::cerr ? capture_->terminal() : err_,
                     std::ofstream(outcome_.out_dir + "/run.log", std::ios::app)});
    return true;
}

void RunSupervisor::announce() {
    if (o_.environment) {
        log_->file << "pipewright: " << describe(*o_.environment) << '\n' << std::flush;
    }
    announce_checkpoints();
    if (o_.progress_json) {
        return;
    }
    // Without --threads-per-rank the workers share this machine's cores among
    // all the ranks they find on it at the rendezvous, so that launchers of
    // several nodes on one machine do not oversubscribe it.
    const int threads =
        o_.threads_per_rank > 0 ? o_.threads_per_rank : default_threads_per_rank(mine_.count);
    const std::string threads_text =
        o_.threads_per_rank == 0 && multi_
            ? "cores shared by the ranks on this machine"
            : std::to_string(threads) + " thread" + (threads == 1 ? "" : "s") + " each";
    const std::string ranks_text = mine_.count == 1
                                       ? "rank " + std::to_string(mine_.first)
                                       : "ranks " + std::to_string(mine_.first) + "-" +
                                             std::to_string(mine_.first + mine_.count - 1);
    const int replicas = project_->data_parallel();
    const int tensor = project_->project.tensor_parallel.size;
    const int experts = project_->project.expert_parallel.size;
    const int context = project_->project.context_parallel.size;
    const std::string replicas_text =
        (replicas > 1 ? ": " + std::to_string(replicas) + " replicas × " +
                            std::to_string(project_->num_ranks()) + " ranks, ZeRO-" +
                            std::to_string(project_->project.data_parallel.zero_stage)
                      : "") +
        (tensor > 1 ? (replicas > 1 ? ", " : ": ") + std::string("each stage over ") +
                          std::to_string(tensor) + " ranks (tensor parallel)"
                    : "") +
        (experts > 1 ? ", experts split over " + std::to_string(experts) + " replicas" : "") +
        (context > 1
             ? ", each sequence over " + std::to_string(context) + " replicas (context parallel, " +
                   (project_->project.context_parallel.exchange == ContextExchange::ring
                        ? "ring"
                        : "all-gather") +
                   ")"
             : "");
    log_->line(
        "pipewright: " + node_name_ + "running " + printable_name(project_->project.model.name) +
        " with " + project_->schedule.name + " on " + std::to_string(world_) +
        (device_kind_ == "cuda" ? " GPU" : " CPU") + " rank" + (world_ == 1 ? "" : "s") +
        replicas_text +
        (multi_ ? " over " + std::to_string(o_.nnodes) + " nodes (" + ranks_text + " here)" : "") +
        " (" + threads_text + "), " + std::to_string(steps_) + " steps, store " +
        rendezvous_->where + ", output " + outcome_.out_dir +
        core_binding_words(binding_, mine_.count, threads, multi_));
    // A project planned for GPUs, run here on CPUs: its lanes keep the
    // project's device names, so say what actually trains.
    if (device_kind_ != "cuda") {
        const auto gpu = std::find_if(project_->rank_specs.begin(), project_->rank_specs.end(),
                                      [](const DeviceSpec& d) { return d.kind == "gpu"; });
        if (gpu != project_->rank_specs.end()) {
            log_->line("pipewright: " + node_name_ + "note: the project's devices are " +
                       printable_name(gpu->name) +
                       " GPUs; this run trains on this machine's CPUs instead, a worker process "
                       "per device under the project's device names, so its times are CPU times");
        }
    }
    // A setting that describes another framework for the simulation.
    if (project_->project.training.gradient_accumulation == GradientAccumulation::add) {
        log_->line("pipewright: " + node_name_ +
                   "note: training.gradient_accumulation \"add\" describes a framework that "
                   "adds each micro-batch's gradients with a kernel of its own, for the "
                   "simulation; this run accumulates as Pipewright's runs do (the linear "
                   "layers' weight gradients in place), so its weight gradients may take less "
                   "than simulated");
    }
    const Training& training = project_->project.training;
    if (training.gradients() != training.dtype) {
        log_->line("pipewright: " + node_name_ + "note: training.gradient_dtype \"" +
                   std::string(to_string(training.gradients())) +
                   "\" describes a framework that holds and reduces its gradients in that "
                   "precision, for the simulation; this run keeps them in the weights' dtype, "
                   "as Pipewright's runs do, so it may hold less memory and move fewer bytes "
                   "than simulated");
    }
    if (training.attention_kernel != AttentionKernel::flash2 &&
        any_flash_attention(project_->project.model.layers)) {
        log_->line("pipewright: " + node_name_ + "note: training.attention_kernel \"" +
                   std::string(to_string(training.attention_kernel)) + "\" names the " +
                   std::string(display_name(training.attention_kernel)) +
                   " kernel a GPU framework runs, for the simulation; this run computes "
                   "attention with LibTorch's own kernels, whose times are not that kernel's");
    }
    // Which data it trains on: a new user judges the loss by it.
    log_->line("pipewright: " + node_name_ + "data: " +
               (o_.settings.data_dir.empty()
                    ? "synthetic, from seed " + std::to_string(project_->project.training.seed) +
                          ": random inputs, and targets from a teacher (the same model with "
                          "weights drawn from another seed), so the loss falls as it learns"
                    : printable_name(o_.settings.data_dir) + " (inputs.pt, targets.pt)"));
    if (rendezvous_->listening_port && rendezvous_->listening_address.empty()) {
        log_->line("pipewright: note: the rendezvous store listens on port " +
                   std::to_string(*rendezvous_->listening_port) +
                   " of every interface of this machine (LibTorch 1.13's TCPStore takes no "
                   "address); run multi-node only inside a trusted network");
    } else if (rendezvous_->listening_port) {
        log_->line("pipewright: note: the rendezvous store listens on " +
                   rendezvous_->listening_address + " port " +
                   std::to_string(*rendezvous_->listening_port) +
                   " only; it has no authentication: run multi-node only inside a trusted "
                   "network");
    }
}

bool RunSupervisor::start_workers() {
    const std::string exe = std::filesystem::read_symlink("/proc/self/exe").string();
    for (int r = mine_.first; r < mine_.first + mine_.count; ++r) {
        WorkerOptions worker;
        worker.settings = o_.settings;
        worker.settings.steps = steps_;
        worker.settings.checkpoint_dir = checkpoint_dir_;
        worker.settings.resume_from = resume_folder_;
        worker.rank = r;
        worker.world_size = world_;
        worker.out_dir = outcome_.out_dir;
        worker.threads = o_.threads_per_rank;
        worker.bind_cores = binding_.bind;
        worker.device = device_kind_;
        worker.local_rank = o_.environment ? o_.environment->local_rank : r - mine_.first;
        worker.store_file = rendezvous_->store_file;
        worker.master = rendezvous_->master;
        worker.store_prefix = rendezvous_->prefix;
        std::vector<std::string> args = worker_arguments(worker);
        args.insert(args.begin(), exe);
        try {
            const pid_t pid = workers_.start(r, args, rank_log(r));
            log_->file << "rank " << r << ": pid " << pid << '\n' << std::flush;
        } catch (const BackendError& e) {
            fail(e.what());
            return false;
        }
    }
    return true;
}

bool RunSupervisor::watch_workers() {
    heartbeats_.emplace(world_, std::chrono::steady_clock::now());
    c10d::Store& store = *rendezvous_->store;
    while (true) {
        if (g_interrupted != 0) {
            const int signal = g_interrupted;
            fail(interruption_text(signal) + "; stopped all " + std::to_string(mine_.count) +
                 " ranks" + (multi_ ? " of this node" : ""));
            outcome_.exit_code = 128 + signal;
            return false;
        }
        std::optional<WorkerProcesses::Failure> failed;
        for (const auto& f : workers_.reap()) {
            exited_with_error_.emplace(f.rank, f.status);
            failed = failed ? failed : f;
        }
        try {
            if (!check_joined(failed)) {
                return false;
            }
            heartbeats_->poll(store, std::chrono::steady_clock::now());
            if (failed) {
                if (multi_ && !killed_from_outside(failed->status)) {
                    wait_for_the_cause(*failed);
                    if (const auto other = try_get_text(store, keys::kFailed)) {
                        stopped_by_other_node(*other);
                        return false;
                    }
                }
                fail(failure_message(blame()));
                return false;
            }
            if (multi_ && !check_other_nodes()) {
                return false;
            }
            relay_progress();
        } catch (const std::exception& e) {
            // c10d reports a lost store as c10::Error or std::runtime_error;
            // only node 0's launcher ending takes the store away.
            workers_.stop_all();
            const std::string what = e.what();
            log_->line("pipewright: " + node_name_ + "lost the rendezvous store at " +
                       rendezvous_->where + " (" + what.substr(0, what.find('\n')) +
                       "); stopped the ranks here");
            return false;
        }
        if (workers_.running() == 0) {
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    relay_progress();
    return true;
}

bool RunSupervisor::check_joined(const std::optional<WorkerProcesses::Failure>& failed) {
    if (all_joined_) {
        return true;
    }
    const auto missing = missing_ranks(*rendezvous_->store, world_);
    all_joined_ = missing.empty();
    const bool local_missing = std::any_of(missing.begin(), missing.end(), [&](int r) {
        return r >= mine_.first && r < mine_.first + mine_.count;
    });
    // The wait for the others starts once this node's ranks are up (starting
    // LibTorch takes seconds on a loaded machine).
    if (!local_missing && !local_up_) {
        local_up_ = std::chrono::steady_clock::now();
    }
    // A worker here that failed once its peers were due failed because of
    // the ranks that did not come: name those.
    if (!all_joined_ && local_up_ &&
        (failed || std::chrono::steady_clock::now() - *local_up_ > timeout_)) {
        fail(never_joined(missing));
        return false;
    }
    return true;
}

void RunSupervisor::relay_progress() {
    while (const auto text = try_get_text(*rendezvous_->store, keys::progress(next_progress_))) {
        const auto p = nlohmann::json::parse(*text);
        ++next_progress_;
        const std::optional<double> loss = loss_from_json(p.at("loss"));
        if (loss && !std::isfinite(*loss) && !first_nonfinite_step_) {
            first_nonfinite_step_ = next_progress_;
            const std::string note =
                "the loss is " + std::string(std::isnan(*loss) ? "NaN" : "infinite") +
                " from step " + std::to_string(next_progress_) +
                ": training diverged (a learning rate too high, or data with NaN or infinite "
                "values?); " +
                (o_.settings.stop_on_nan ? "--stop-on-nan ends the run after this step"
                                         : "the run goes on (--stop-on-nan ends it)");
            if (o_.progress_json) {
                log_->line(nlohmann::json{
                    {"event", "nonfinite_loss"}, {"step", next_progress_}, {"message", note}}
                               .dump());
            } else {
                log_->line("pipewright: " + node_name_ + note);
            }
        }
        if (o_.progress_json) {
            log_->line(nlohmann::json{{"event", "step"},
                                      {"step", next_progress_},
                                      {"steps", steps_},
                                      {"loss", p.at("loss")},
                                      {"iteration_time_s", p.at("iteration_time_s")}}
                           .dump());
        } else {
            std::ostringstream l;
            l.setf(std::ios::fixed);
            l.precision(4);
            l << "step " << next_progress_ << "/" << steps_ << "  loss "
              << loss.value_or(std::numeric_limits<double>::quiet_NaN()) << "  "
              << format_duration(p.at("iteration_time_s").get<double>());
            log_->line(l.str());
        }
    }
}

bool RunSupervisor::write_outputs() {
    c10d::Store& store = *rendezvous_->store;
    try {
        if (o_.node_rank == 0) {
            // Every rank's record, the other nodes' through the store.
            const auto other_failure = [&store] { return try_get_text(store, keys::kFailed); };
            outcome_.summary = write_complete_outputs(*project_, store, o_.warmup, resume_step_,
                                                      outcome_.out_dir, timeout_, other_failure);
        } else {
            outcome_.summary =
                write_node_outputs(*project_, mine_, o_.warmup, resume_step_, outcome_.out_dir);
        }
    } catch (const std::exception& e) {
        // A record that does not read (InputError), one that does not fit
        // (BackendError), or a disk that is full (filesystem_error).
        fail(std::string("cannot write the run's outputs: ") + e.what());
        return false;
    }
    outcome_.summary.out_dir = outcome_.out_dir;
    if (multi_) {
        outcome_.summary.nnodes = o_.nnodes;
        outcome_.summary.node_rank = o_.node_rank;
    }
    log_->file << to_json(outcome_.summary).dump(2) << '\n' << std::flush;
    return true;
}

}  // namespace pipewright::backend
