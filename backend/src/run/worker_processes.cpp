#include "run/worker_processes.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "pipewright/backend/backend_error.h"

namespace pipewright::backend {

WorkerProcesses::~WorkerProcesses() {
    stop_all();
}

pid_t WorkerProcesses::start(int rank, const std::vector<std::string>& args,
                             const std::string& log_path) {
    std::vector<char*> argv;
    for (const auto& a : args) {
        argv.push_back(const_cast<char*>(a.c_str()));
    }
    argv.push_back(nullptr);
    const int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        throw BackendError("cannot create " + log_path + ": " + std::strerror(errno));
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
        throw BackendError(std::string("cannot start a worker: ") + std::strerror(errno));
    }
    workers_.push_back({rank, pid, true});
    return pid;
}

std::vector<WorkerProcesses::Failure> WorkerProcesses::reap() {
    std::vector<Failure> failed;
    for (auto& w : workers_) {
        int status = 0;
        if (!w.alive || ::waitpid(w.pid, &status, WNOHANG) != w.pid) {
            continue;
        }
        w.alive = false;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            failed.push_back(Failure{w.rank, status});
        }
    }
    std::stable_partition(failed.begin(), failed.end(),
                          [](const Failure& f) { return WIFSIGNALED(f.status); });
    return failed;
}

int WorkerProcesses::running() const {
    int n = 0;
    for (const auto& w : workers_) {
        n += w.alive ? 1 : 0;
    }
    return n;
}

void WorkerProcesses::stop_all() {
    for (const auto& w : workers_) {
        if (w.alive) {
            ::kill(w.pid, SIGTERM);
        }
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (std::chrono::steady_clock::now() < deadline && running() > 0) {
        (void)reap();
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    for (auto& w : workers_) {
        if (w.alive) {
            ::kill(w.pid, SIGKILL);
            int status = 0;
            ::waitpid(w.pid, &status, 0);
            w.alive = false;
        }
    }
}

std::string describe_exit(int status) {
    if (WIFSIGNALED(status)) {
        const int sig = WTERMSIG(status);
        return "killed by signal " + std::to_string(sig) + " (" + ::strsignal(sig) + ")";
    }
    return "exit code " + std::to_string(WEXITSTATUS(status));
}

namespace {
constexpr std::string_view kNote = ": note: ";
}  // namespace

std::string worker_note(int rank, const std::string& text) {
    return "pipewright worker rank " + std::to_string(rank) + std::string(kNote) + text;
}

std::string last_reason_line(const std::string& path) {
    std::ifstream in(path);
    std::string line, last;
    while (std::getline(in, line)) {
        const bool note =
            line.starts_with("pipewright worker rank ") && line.find(kNote) != std::string::npos;
        if (!line.empty() && !note) {
            last = line;
        }
    }
    return last;
}

}  // namespace pipewright::backend
