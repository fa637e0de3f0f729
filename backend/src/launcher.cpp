// `pipewright run`: hosts or joins the c10d rendezvous store, starts one
// worker process per rank of this node (this same binary), relays progress
// and stops everything as soon as one rank, here or on another node, fails
// or the user interrupts.
#include "pipewright/backend/launcher.h"

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "compute_device.h"
#include "heartbeat.h"
#include "pipewright/backend/modules.h"
#include "pipewright/backend/transport.h"
#include "pipewright/core/printable_name.h"
#include "pipewright/core/project_io.h"
#include "rendezvous.h"
#include "run_folder.h"
#include "run_outputs.h"
#include "run_store.h"
#include "stderr_capture.h"
#include "worker_processes.h"

namespace pipewright::backend {
namespace {

// The signal that interrupted the run (0: none). A closed terminal (SIGHUP)
// or a closed pipe (SIGPIPE, `pipewright run | head -1`) stops the ranks like
// Ctrl-C does instead of killing the launcher and orphaning its run folder.
volatile std::sig_atomic_t g_interrupted = 0;
extern "C" void on_interrupt(int signal) {
    g_interrupted = signal;
}

// How long a rank's heartbeat must stand still before it counts as silent.
constexpr std::chrono::milliseconds kSilence = 3 * kHeartbeatPeriod;

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

// Progress goes to the terminal and to run.log alike.
struct Log {
    std::ostream& err;
    std::ofstream file;
    void line(const std::string& text) {
        err << text << '\n' << std::flush;
        file << text << '\n' << std::flush;
    }
};

std::string fmt_ms(double s) {
    std::ostringstream o;
    o.setf(std::ios::fixed);
    o.precision(1);
    o << s * 1000 << " ms";
    return o.str();
}

std::string fmt_s(double s) {
    std::ostringstream o;
    o << s << " s";
    return o.str();
}

// What every node of a run must agree on; node 0 compares the others' with
// its own before any wrong pairing could train garbage or hang.
nlohmann::json configuration(const AnalyzedProject& p, const RunOptions& o, int steps) {
    return {{"model", p.project.model.name},
            {"schedule", p.schedule.name},
            {"stages", p.schedule.num_stages},
            {"microbatches", p.microbatches},
            {"batch_size", p.microbatches * p.microbatch_size},
            {"steps", steps},
            {"dtype", o.settings.dtype},
            {"ranks", p.num_ranks()},
            {"nnodes", o.nnodes},
            {"nproc_per_node", o.nproc_per_node ? nlohmann::json(*o.nproc_per_node) : nullptr}};
}

std::string configuration_difference(const nlohmann::json& mine, const nlohmann::json& theirs) {
    for (const auto& [key, value] : mine.items()) {
        if (!theirs.contains(key) || theirs.at(key) != value) {
            return key + " " + value.dump() + " here, " +
                   (theirs.contains(key) ? theirs.at(key).dump() : "none") + " there";
        }
    }
    return "";
}

// Checks the project before any process starts; returns the problem.
std::string backend_problem(const AnalyzedProject& project, const RunOptions& o) {
    try {
        (void)run_dtype(project, o.settings.dtype);
        for (const auto& l : project.project.model.layers) {
            if (!can_build(l.type)) {
                throw BackendError("layer \"" + printable_name(l.name) +
                                   "\": the backend cannot build layer type \"" + l.type + "\"");
            }
        }
    } catch (const std::exception& e) {
        return o.settings.project + ": " + e.what();
    }
    return "";
}

}  // namespace

int default_threads_per_rank(int ranks_on_this_machine) {
    const unsigned cores = std::max(1U, std::thread::hardware_concurrency());
    return std::max(1, static_cast<int>(cores) / std::max(1, ranks_on_this_machine));
}

std::optional<AnalyzedProject> load_for_run(const RunSettings& s, std::ostream& err) {
    LoadedProject loaded = load_project_file(s.project);
    Diagnostics problems = loaded.diagnostics;
    std::optional<AnalyzedProject> analyzed;
    if (loaded.project) {
        AnalysisOptions options;
        options.schedule = s.schedule;
        options.schedule_csv = s.schedule_csv;
        options.microbatches = s.microbatches;
        options.batch_size = s.batch_size;
        options.base_dir = std::filesystem::path(s.project).parent_path();
        analyzed = analyze_project(*loaded.project, options, problems);
    }
    if (!problems.empty() || !analyzed) {
        err << "pipewright: " << s.project << ": " << problems.size() << " problem"
            << (problems.size() == 1 ? "" : "s") << ":\n";
        for (const auto& d : problems.items()) {
            err << "  " << (d.path.empty() ? "" : d.path + ": ") << d.message << '\n';
        }
        return std::nullopt;
    }
    return analyzed;
}

NodeRanks node_ranks(int world, int nnodes, int node_rank, std::optional<int> nproc_per_node) {
    if (nnodes < 1) {
        throw std::invalid_argument("--nnodes must be at least 1");
    }
    if (node_rank < 0 || node_rank >= nnodes) {
        throw std::invalid_argument("--node-rank must be from 0 to " + std::to_string(nnodes - 1) +
                                    " with --nnodes " + std::to_string(nnodes) + ", got " +
                                    std::to_string(node_rank));
    }
    if (nproc_per_node) {
        if (*nproc_per_node * nnodes != world) {
            throw std::invalid_argument(
                "--nproc-per-node " + std::to_string(*nproc_per_node) + " on " +
                std::to_string(nnodes) + " node" + (nnodes == 1 ? "" : "s") + " makes " +
                std::to_string(*nproc_per_node * nnodes) + " ranks, but the project places " +
                "its stages on " + std::to_string(world) + " devices");
        }
    } else if (world % nnodes != 0) {
        throw std::invalid_argument("the project's " + std::to_string(world) +
                                    " devices do not split evenly over " + std::to_string(nnodes) +
                                    " nodes; give --nproc-per-node or another --nnodes");
    }
    const int per_node = nproc_per_node.value_or(world / nnodes);
    return {node_rank * per_node, per_node};
}

RunOutcome launch_run(const RunOptions& o, std::ostream& err) {
    RunOutcome outcome;
    auto project = load_for_run(o.settings, err);
    if (!project) {
        return outcome;
    }
    if (const std::string problem = backend_problem(*project, o); !problem.empty()) {
        err << "pipewright: " << problem << '\n';
        return outcome;
    }
    // Options that contradict each other or the run are usage errors (2).
    constexpr int kUsageError = 2;
    if (o.port && o.master) {
        err << "pipewright: give either --port or --master, not both\n";
        outcome.exit_code = kUsageError;
        return outcome;
    }
    const int world = project->num_ranks();
    NodeRanks mine;
    HostPort master{"127.0.0.1", o.port.value_or(0)};
    try {
        mine = node_ranks(world, o.nnodes, o.node_rank, o.nproc_per_node);
        if (o.master) {
            master = parse_host_port(*o.master, "--master");
        } else if (o.nnodes > 1) {
            throw std::invalid_argument("--nnodes " + std::to_string(o.nnodes) +
                                        " needs --master HOST:PORT, the address of node 0");
        }
        if (o.nnodes > 1 && master.port == 0) {
            throw std::invalid_argument(
                "--master needs a fixed port with --nnodes > 1: the other nodes must know it");
        }
    } catch (const std::exception& e) {
        err << "pipewright: " << e.what() << '\n';
        outcome.exit_code = kUsageError;
        return outcome;
    }
    if (const unsigned cores = std::max(1U, std::thread::hardware_concurrency());
        o.threads_per_rank > static_cast<int>(cores)) {
        err << "pipewright: --threads-per-rank " << o.threads_per_rank << " is more than this "
            << "machine's " << cores << " core" << (cores == 1 ? "" : "s") << "; give at most "
            << cores << " (or leave it out: cores / ranks)\n";
        outcome.exit_code = kUsageError;
        return outcome;
    }
    std::string device_kind;
    try {
        device_kind = resolve_device_kind(o.device, mine.count);
    } catch (const std::exception& e) {
        err << "pipewright: " << e.what() << '\n';
        return outcome;
    }
    const auto timeout =
        std::chrono::milliseconds(static_cast<std::int64_t>(o.settings.timeout_s * 1000));
    const int steps = o.settings.steps.value_or(project->project.training.steps);
    const bool multi = o.nnodes > 1;
    const std::string node_name = multi ? "node " + std::to_string(o.node_rank) + ": " : "";

    std::optional<RunStore> rendezvous = open_run_store(master, o, timeout, err);
    if (!rendezvous) {
        return outcome;
    }
    const c10::intrusive_ptr<c10d::Store> store = rendezvous->store;
    const nlohmann::json config = configuration(*project, o, steps);
    if (multi) {
        if (store->add(keys::node_claim(o.node_rank), 1) > 1) {
            err << "pipewright: node rank " << o.node_rank << " is already taken by another "
                << "launcher of the run at " << rendezvous->where << '\n';
            return outcome;
        }
        set_text(*store, keys::node(o.node_rank), config.dump());
    }

    outcome.out_dir = o.out_dir.value_or(default_run_folder(project->project.model.name));
    try {
        prepare_run_folder(outcome.out_dir, o.settings.project, o.overwrite);
    } catch (const std::exception& e) {
        err << "pipewright: " << e.what() << '\n';
        return outcome;
    }
    StderrCapture capture(outcome.out_dir + "/run.log");
    Log log{&err == &std::cerr ? capture.terminal() : err,
            std::ofstream(outcome.out_dir + "/run.log", std::ios::app)};
    // Without --threads-per-rank the workers share this machine's cores among
    // all the ranks they find on it at the rendezvous, so that launchers of
    // several nodes on one machine do not oversubscribe it.
    const int threads =
        o.threads_per_rank > 0 ? o.threads_per_rank : default_threads_per_rank(mine.count);
    const std::string threads_text =
        o.threads_per_rank == 0 && multi
            ? "cores shared by the ranks on this machine"
            : std::to_string(threads) + " thread" + (threads == 1 ? "" : "s") + " each";
    const bool json = o.progress_json;
    const std::string ranks_text = mine.count == 1
                                       ? "rank " + std::to_string(mine.first)
                                       : "ranks " + std::to_string(mine.first) + "-" +
                                             std::to_string(mine.first + mine.count - 1);
    if (!json) {
        log.line("pipewright: " + node_name + "running " +
                 printable_name(project->project.model.name) + " with " + project->schedule.name +
                 " on " + std::to_string(world) + (device_kind == "cuda" ? " GPU" : " CPU") +
                 " rank" + (world == 1 ? "" : "s") +
                 (multi ? " over " + std::to_string(o.nnodes) + " nodes (" + ranks_text + " here)"
                        : "") +
                 " (" + threads_text + "), " + std::to_string(steps) + " steps, store " +
                 rendezvous->where + ", output " + outcome.out_dir);
        if (rendezvous->listening_port) {
            log.line("pipewright: note: the rendezvous store listens on port " +
                     std::to_string(*rendezvous->listening_port) +
                     " of every interface of this machine (LibTorch's TCPStore takes no "
                     "address); run multi-node only inside a trusted network");
        }
    }

    for (const int signal : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) {
        std::signal(signal, on_interrupt);
    }
    g_interrupted = 0;
    WorkerProcesses workers;
    // Every launcher announces its node's failure so that the others stop
    // at once instead of waiting for their c10d timeouts.
    const auto fail = [&](const std::string& message) {
        workers.stop_all();
        log.line("pipewright: " + node_name + message);
        if (multi) {
            try {
                set_text(*store, keys::kFailed,
                         "node " + std::to_string(o.node_rank) + ": " + message);
            } catch (const std::exception&) {
                // the store is gone: the others learn it themselves
            }
        }
        return outcome;
    };
    const std::string exe = std::filesystem::read_symlink("/proc/self/exe").string();
    for (int r = mine.first; r < mine.first + mine.count; ++r) {
        std::vector<std::string> args{exe,
                                      "worker",
                                      o.settings.project,
                                      "--rank",
                                      std::to_string(r),
                                      "--world",
                                      std::to_string(world),
                                      "--out",
                                      outcome.out_dir,
                                      "--threads",
                                      std::to_string(o.threads_per_rank),
                                      "--steps",
                                      std::to_string(steps),
                                      "--timeout",
                                      std::to_string(o.settings.timeout_s),
                                      "--device",
                                      device_kind,
                                      "--local-rank",
                                      std::to_string(r - mine.first)};
        args.insert(args.end(), rendezvous->worker_args.begin(), rendezvous->worker_args.end());
        const auto add = [&](const char* flag, const auto& value) {
            if (value) {
                std::ostringstream v;
                v << *value;
                args.insert(args.end(), {flag, v.str()});
            }
        };
        add("--schedule", o.settings.schedule);
        add("--schedule-csv", o.settings.schedule_csv);
        add("--microbatches", o.settings.microbatches);
        add("--batch-size", o.settings.batch_size);
        if (!o.settings.dtype.empty()) {
            args.insert(args.end(), {"--dtype", o.settings.dtype});
        }
        if (o.settings.save_params) {
            args.emplace_back("--save-params");
        }
        try {
            const pid_t pid =
                workers.start(r, args, outcome.out_dir + "/rank-" + std::to_string(r) + ".log");
            log.file << "rank " << r << ": pid " << pid << '\n' << std::flush;
        } catch (const std::exception& e) {
            return fail(e.what());
        }
    }

    int next_progress = 0;
    const auto relay_progress = [&] {
        while (const auto text = try_get_text(*store, keys::progress(next_progress))) {
            const auto p = nlohmann::json::parse(*text);
            ++next_progress;
            if (json) {
                log.line(nlohmann::json{{"event", "step"},
                                        {"step", next_progress},
                                        {"steps", steps},
                                        {"loss", p.at("loss")},
                                        {"iteration_time_s", p.at("iteration_time_s")}}
                             .dump());
            } else {
                std::ostringstream l;
                l.setf(std::ios::fixed);
                l.precision(4);
                l << "step " << next_progress << "/" << steps << "  loss "
                  << p.at("loss").get<double>() << "  "
                  << fmt_ms(p.at("iteration_time_s").get<double>());
                log.line(l.str());
            }
        }
    };
    // Which node hosts a rank, for messages about ranks that never came.
    const auto nodes_of = [&](const std::vector<int>& ranks) {
        std::vector<int> nodes;
        for (int r : ranks) {
            const int n = std::min(o.nnodes - 1, r / std::max(1, mine.count));
            if (nodes.empty() || nodes.back() != n) {
                nodes.push_back(n);
            }
        }
        return nodes;
    };
    const auto never_joined = [&](const std::vector<int>& missing) {
        std::string m =
            counted("rank", missing) + " never joined within " + fmt_s(o.settings.timeout_s);
        if (multi) {
            const auto nodes = nodes_of(missing);
            m += " (" + counted("node", nodes) + " did not arrive at " + rendezvous->where + ")";
        }
        return m + "; stopped the ranks here";
    };
    HeartbeatWatch heartbeats(world, std::chrono::steady_clock::now());
    // Why a rank failed, naming the ranks that had stopped answering when
    // it did: a rank waiting on a stopped peer fails with the peer's fault.
    const auto failure_message = [&](const WorkerProcesses::Failure& failed) {
        const std::string rank_log =
            outcome.out_dir + "/rank-" + std::to_string(failed.rank) + ".log";
        std::string why = last_line(rank_log);
        if (const auto reported = try_get_text(*store, keys::failure(failed.rank))) {
            why = reported->substr(0, reported->find('\n'));
        }
        const std::string failure = "rank " + std::to_string(failed.rank) + " failed (" +
                                    describe_exit(failed.status) + ")" +
                                    (why.empty() ? "" : ": " + why);
        const auto now = std::chrono::steady_clock::now();
        const auto silent = heartbeats.silent_ranks(*store, failed.rank, now, kSilence);
        if (silent.empty()) {
            return failure + "; stopped the other ranks" + (multi ? " of this node" : "") +
                   " (log: " + rank_log + ")";
        }
        const std::string culprit =
            counted("rank", silent) + (multi ? " (" + counted("node", nodes_of(silent)) + ")" : "");
        const double quiet_s =
            static_cast<double>(heartbeats.silent_for(silent.front(), now).count()) / 1000;
        return culprit + " stopped answering (no sign of life for " + fmt_s(quiet_s) +
               ": stopped, hung or cut off" + (multi ? ", or its launcher ended" : "") + "); " +
               failure + " waiting for it; stopped the other ranks" +
               (multi ? " of this node" : "") + " (log: " + rank_log + ")";
    };
    std::optional<std::chrono::steady_clock::time_point> local_up;
    bool all_joined = false;
    std::vector<bool> node_checked(static_cast<std::size_t>(o.nnodes), false);
    while (true) {
        if (g_interrupted != 0) {
            const int signal = g_interrupted;
            fail(interruption_text(signal) + "; stopped all " + std::to_string(mine.count) +
                 " ranks" + (multi ? " of this node" : ""));
            outcome.exit_code = 128 + signal;
            return outcome;
        }
        const auto failed = workers.reap();
        try {
            if (!all_joined) {
                const auto missing = missing_ranks(*store, world);
                all_joined = missing.empty();
                const bool local_missing = std::any_of(missing.begin(), missing.end(), [&](int r) {
                    return r >= mine.first && r < mine.first + mine.count;
                });
                // The wait for the others starts once this node's ranks are up
                // (starting LibTorch takes seconds on a loaded machine).
                if (!local_missing && !local_up) {
                    local_up = std::chrono::steady_clock::now();
                }
                // A worker here that failed once its peers were due failed
                // because of the ranks that did not come: name those.
                if (!all_joined && local_up &&
                    (failed || std::chrono::steady_clock::now() - *local_up > timeout)) {
                    return fail(never_joined(missing));
                }
            }
            heartbeats.poll(*store, std::chrono::steady_clock::now());
            if (failed && multi) {
                // A rank here that failed because a rank of another node
                // vanished: that node's launcher names the real cause, or,
                // when that launcher is gone too, the silence of its ranks.
                const auto since = std::chrono::steady_clock::now();
                // A counter is read once a period, so a silence shows a
                // period or two after the rank went quiet.
                while (std::chrono::steady_clock::now() - since < kSilence + 2 * kHeartbeatPeriod) {
                    if (const auto other = try_get_text(*store, keys::kFailed)) {
                        workers.stop_all();
                        log.line("pipewright: " + node_name + "stopped: " + *other);
                        return outcome;
                    }
                    heartbeats.poll(*store, std::chrono::steady_clock::now());
                    if (!heartbeats
                             .silent_ranks(*store, failed->rank, std::chrono::steady_clock::now(),
                                           kSilence)
                             .empty()) {
                        break;
                    }
                    std::this_thread::sleep_for(std::chrono::milliseconds(50));
                }
            }
            if (failed) {
                return fail(failure_message(*failed));
            }
            if (multi) {
                if (const auto other = try_get_text(*store, keys::kFailed)) {
                    workers.stop_all();
                    log.line("pipewright: " + node_name + "stopped: " + *other);
                    return outcome;
                }
                for (int n = 1; o.node_rank == 0 && n < o.nnodes; ++n) {
                    const auto text = node_checked[static_cast<std::size_t>(n)]
                                          ? std::nullopt
                                          : try_get_text(*store, keys::node(n));
                    if (text) {
                        node_checked[static_cast<std::size_t>(n)] = true;
                        const std::string diff =
                            configuration_difference(config, nlohmann::json::parse(*text));
                        if (!diff.empty()) {
                            return fail("node " + std::to_string(n) +
                                        " runs another configuration (" + diff + ")");
                        }
                    }
                }
            }
            relay_progress();
        } catch (const std::exception& e) {
            // Only node 0's launcher ending takes the store away.
            workers.stop_all();
            log.line("pipewright: " + node_name + "lost the rendezvous store at " +
                     rendezvous->where + " (" +
                     std::string(e.what()).substr(0, std::string(e.what()).find('\n')) +
                     "); stopped the ranks here");
            return outcome;
        }
        if (workers.running() == 0) {
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    relay_progress();

    try {
        if (o.node_rank == 0) {
            // Every rank's record, the other nodes' through the store.
            const auto other_failure = [&] { return try_get_text(*store, keys::kFailed); };
            outcome.summary = write_complete_outputs(*project, *store, o.warmup, outcome.out_dir,
                                                     timeout, other_failure);
        } else {
            outcome.summary = write_node_outputs(*project, mine, o.warmup, outcome.out_dir);
        }
    } catch (const std::exception& e) {
        return fail(std::string("cannot write the run's outputs: ") + e.what());
    }
    outcome.summary["out_dir"] = outcome.out_dir;
    if (multi) {
        outcome.summary["nnodes"] = o.nnodes;
        outcome.summary["node_rank"] = o.node_rank;
    }
    log.file << outcome.summary.dump(2) << '\n' << std::flush;
    if (multi) {
        try {
            if (o.node_rank == 0) {
                // The store lives in this process: keep it until the other
                // nodes have finished with it.
                std::vector<std::string> done;
                for (int n = 1; n < o.nnodes; ++n) {
                    done.push_back(keys::node_done(n));
                }
                store->wait(done, timeout);
            } else {
                set_text(*store, keys::node_done(o.node_rank), "1");
            }
        } catch (const std::exception&) {
            log.line("pipewright: " + node_name +
                     "note: not every node confirmed the end of the run; its outputs are "
                     "complete");
        }
    }
    outcome.exit_code = 0;
    return outcome;
}

}  // namespace pipewright::backend
