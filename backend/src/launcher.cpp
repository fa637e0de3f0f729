// `pipewright run`: hosts the c10d rendezvous store, starts one worker
// process per rank (this same binary), relays progress and stops everything
// as soon as one rank fails or the user interrupts.
#include "pipewright/backend/launcher.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "pipewright/backend/modules.h"
#include "pipewright/core/project_io.h"
#include "run_report.h"

namespace pipewright::backend {
namespace {

volatile std::sig_atomic_t g_interrupted = 0;
extern "C" void on_interrupt(int /*signal*/) {
    g_interrupted = 1;
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

std::string default_out_dir(const std::string& model) {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    localtime_r(&now, &tm);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    const std::string base = "runs/" + (model.empty() ? "run" : model) + "-" + stamp;
    std::string dir = base;
    for (int i = 2; std::filesystem::exists(dir); ++i) {
        dir = base + "-" + std::to_string(i);
    }
    return dir;
}

pid_t spawn(const std::vector<std::string>& args, const std::string& log_path) {
    std::vector<char*> argv;
    for (const auto& a : args) {
        argv.push_back(const_cast<char*>(a.c_str()));
    }
    argv.push_back(nullptr);
    const int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        throw std::runtime_error("cannot create " + log_path + ": " + std::strerror(errno));
    }
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid == 0) {
        // Only async-signal-safe calls between fork and exec. A worker must
        // not outlive its launcher, even one killed with SIGKILL.
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != parent) {
            ::_exit(1);
        }
        ::dup2(fd, STDOUT_FILENO);
        ::dup2(fd, STDERR_FILENO);
        ::execv(argv[0], argv.data());
        ::_exit(127);
    }
    ::close(fd);
    if (pid < 0) {
        throw std::runtime_error(std::string("cannot start a worker: ") + std::strerror(errno));
    }
    return pid;
}

std::string last_line(const std::string& path) {
    std::ifstream in(path);
    std::string line, last;
    while (std::getline(in, line)) {
        if (!line.empty()) {
            last = line;
        }
    }
    return last;
}

std::string describe_exit(int status) {
    if (WIFSIGNALED(status)) {
        const int sig = WTERMSIG(status);
        return "killed by signal " + std::to_string(sig) + " (" + ::strsignal(sig) + ")";
    }
    return "exit code " + std::to_string(WEXITSTATUS(status));
}

struct Workers {
    std::vector<pid_t> pids;
    std::vector<bool> alive;

    // SIGTERM, two seconds of grace, then SIGKILL: never leaves strays.
    void stop_all() {
        for (std::size_t r = 0; r < pids.size(); ++r) {
            if (alive[r]) {
                ::kill(pids[r], SIGTERM);
            }
        }
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
        while (std::chrono::steady_clock::now() < deadline && reap() > 0) {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        for (std::size_t r = 0; r < pids.size(); ++r) {
            if (alive[r]) {
                ::kill(pids[r], SIGKILL);
                int status = 0;
                ::waitpid(pids[r], &status, 0);
                alive[r] = false;
            }
        }
    }
    // Collects exited workers; returns how many are still running.
    int reap() {
        int running = 0;
        for (std::size_t r = 0; r < pids.size(); ++r) {
            int status = 0;
            if (alive[r] && ::waitpid(pids[r], &status, WNOHANG) == pids[r]) {
                alive[r] = false;
            }
            running += alive[r] ? 1 : 0;
        }
        return running;
    }
};

std::string fmt_ms(double s) {
    std::ostringstream o;
    o.setf(std::ios::fixed);
    o.precision(1);
    o << s * 1000 << " ms";
    return o.str();
}

}  // namespace

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

RunOutcome launch_run(const RunOptions& o, std::ostream& err) {
    RunOutcome outcome;
    auto project = load_for_run(o.settings, err);
    if (!project) {
        return outcome;
    }
    if (o.device == "cuda") {
        err << "pipewright: --device cuda: "
            << (torch::cuda::is_available()
                    ? "CUDA execution is not implemented yet in this build; use --device cpu\n"
                    : "this Pipewright is built against a LibTorch without CUDA support (or no "
                      "GPU is visible); use --device cpu\n");
        return outcome;
    }
    try {
        (void)run_dtype(*project, o.settings.dtype);
        for (const auto& l : project->project.model.layers) {
            if (!can_build(l.type)) {
                throw BackendError("layer \"" + l.name +
                                   "\": the backend cannot build layer type \"" + l.type + "\"");
            }
        }
    } catch (const std::exception& e) {
        err << "pipewright: " << o.settings.project << ": " << e.what() << '\n';
        return outcome;
    }
    if (project->project.training.activation_checkpointing) {
        err << "pipewright: note: activation checkpointing is not implemented by the backend; "
               "running without it\n";
    }
    if (o.port && o.master) {
        err << "pipewright: give either --port or --master, not both\n";
        return outcome;
    }
    std::string host = "127.0.0.1";
    int port = o.port.value_or(0);
    if (o.master) {
        const auto colon = o.master->rfind(':');
        if (colon == std::string::npos || colon == 0) {
            err << "pipewright: --master must be HOST:PORT, got \"" << *o.master << "\"\n";
            return outcome;
        }
        host = o.master->substr(0, colon);
        port = std::atoi(o.master->c_str() + colon + 1);
    }
    const int world = project->num_ranks();
    const auto timeout =
        std::chrono::milliseconds(static_cast<std::int64_t>(o.settings.timeout_s * 1000));

    // The launcher hosts the rendezvous store: a taken port fails here, with
    // a clear message, before any worker starts. Port 0 asks for a free one.
    c10::intrusive_ptr<c10d::TCPStore> store;
    try {
        c10d::TCPStoreOptions so;
        so.port = static_cast<std::uint16_t>(port);
        so.isServer = true;
        so.waitWorkers = false;
        so.timeout = timeout;
        store = c10::make_intrusive<c10d::TCPStore>(host, so);
    } catch (const std::exception& e) {
        const std::string why = e.what();
        err << "pipewright: cannot listen on " << host << ":" << port << ": "
            << (why.find("in use") != std::string::npos ||
                        why.find("EADDRINUSE") != std::string::npos
                    ? "the port is already in use"
                    : why.substr(0, why.find('\n')))
            << "; choose another with --port, or leave it out to pick a free one\n";
        return outcome;
    }
    port = store->getPort();

    outcome.out_dir = o.out_dir.value_or(default_out_dir(project->project.model.name));
    std::error_code ec;
    std::filesystem::create_directories(outcome.out_dir, ec);
    if (ec) {
        err << "pipewright: cannot create " << outcome.out_dir << ": " << ec.message() << '\n';
        return outcome;
    }
    Log log{err, std::ofstream(outcome.out_dir + "/run.log")};
    const unsigned cores = std::max(1U, std::thread::hardware_concurrency());
    const int threads = o.threads_per_rank > 0
                            ? o.threads_per_rank
                            : std::max(1, static_cast<int>(cores) / std::max(1, world));
    const int steps = o.settings.steps.value_or(project->project.training.steps);
    const bool json = o.progress_json;
    if (!json) {
        log.line("pipewright: running " + project->project.model.name + " with " +
                 project->schedule.name + " on " + std::to_string(world) + " CPU rank" +
                 (world == 1 ? "" : "s") + " (" + std::to_string(threads) + " thread" +
                 (threads == 1 ? "" : "s") + " each), " + std::to_string(steps) + " steps, store " +
                 host + ":" + std::to_string(port) + ", output " + outcome.out_dir);
    }

    std::signal(SIGINT, on_interrupt);
    std::signal(SIGTERM, on_interrupt);
    g_interrupted = 0;
    Workers workers;
    const std::string exe = std::filesystem::read_symlink("/proc/self/exe").string();
    for (int r = 0; r < world; ++r) {
        std::vector<std::string> args{exe,
                                      "worker",
                                      o.settings.project,
                                      "--rank",
                                      std::to_string(r),
                                      "--world",
                                      std::to_string(world),
                                      "--master",
                                      host + ":" + std::to_string(port),
                                      "--out",
                                      outcome.out_dir,
                                      "--threads",
                                      std::to_string(threads),
                                      "--steps",
                                      std::to_string(steps),
                                      "--timeout",
                                      std::to_string(o.settings.timeout_s)};
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
            workers.pids.push_back(
                spawn(args, outcome.out_dir + "/rank-" + std::to_string(r) + ".log"));
            workers.alive.push_back(true);
            log.file << "rank " << r << ": pid " << workers.pids.back() << '\n' << std::flush;
        } catch (const std::exception& e) {
            workers.stop_all();
            log.line(std::string("pipewright: ") + e.what());
            return outcome;
        }
    }

    int next_progress = 0;
    const auto relay_progress = [&] {
        while (store->check({"progress/" + std::to_string(next_progress)})) {
            const auto bytes = store->get("progress/" + std::to_string(next_progress));
            const auto p = nlohmann::json::parse(std::string(bytes.begin(), bytes.end()));
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
    while (true) {
        if (g_interrupted != 0) {
            workers.stop_all();
            log.line("pipewright: interrupted; stopped all " + std::to_string(world) + " ranks");
            outcome.exit_code = 130;
            return outcome;
        }
        // Reap every exited worker of this round, then blame a crashed one
        // first: its peers fail only because it vanished.
        int failed = -1;
        int failed_status = 0;
        for (std::size_t r = 0; r < workers.pids.size(); ++r) {
            int status = 0;
            if (workers.alive[r] &&
                ::waitpid(workers.pids[r], &status, WNOHANG) == workers.pids[r]) {
                workers.alive[r] = false;
                const bool bad = !WIFEXITED(status) || WEXITSTATUS(status) != 0;
                if (bad && (failed < 0 || (WIFSIGNALED(status) && !WIFSIGNALED(failed_status)))) {
                    failed = static_cast<int>(r);
                    failed_status = status;
                }
            }
        }
        if (failed >= 0) {
            workers.stop_all();
            const std::string rank_log =
                outcome.out_dir + "/rank-" + std::to_string(failed) + ".log";
            const std::string why = last_line(rank_log);
            log.line("pipewright: rank " + std::to_string(failed) + " failed (" +
                     describe_exit(failed_status) + ")" + (why.empty() ? "" : ": " + why) +
                     "; stopped the other ranks (log: " + rank_log + ")");
            return outcome;
        }
        relay_progress();
        if (workers.reap() == 0) {
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    relay_progress();

    try {
        std::vector<nlohmann::json> ranks;
        for (int r = 0; r < world; ++r) {
            ranks.push_back(nlohmann::json::parse(
                read_text_file(outcome.out_dir + "/rank-" + std::to_string(r) + ".json")));
        }
        RunReport report = build_run_report(*project, ranks, o.warmup);
        save_timeline_file(report.timeline, outcome.out_dir + "/timeline.json");
        write_file_atomically(outcome.out_dir + "/trace.json",
                              timeline_to_chrome_trace(report.timeline).dump() + "\n");
        write_file_atomically(outcome.out_dir + "/metrics.json", report.metrics.dump(2) + "\n");
        report.summary["out_dir"] = outcome.out_dir;
        log.file << report.summary.dump(2) << '\n';
        outcome.summary = std::move(report.summary);
    } catch (const std::exception& e) {
        log.line(std::string("pipewright: cannot write the run's outputs: ") + e.what());
        return outcome;
    }
    outcome.exit_code = 0;
    return outcome;
}

}  // namespace pipewright::backend
