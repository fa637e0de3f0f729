#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace pipewright::backend {

// The worker processes a launcher started on this node: started with their
// output in a log file, reaped, and stopped together so that none outlives
// the run.
class WorkerProcesses {
  public:
    WorkerProcesses() = default;
    ~WorkerProcesses();  // stops what still runs
    WorkerProcesses(const WorkerProcesses&) = delete;
    WorkerProcesses& operator=(const WorkerProcesses&) = delete;

    // Starts `args` (args[0] is the program) for `rank` with stdout and
    // stderr in `log_path`; throws BackendError when it cannot. The
    // child dies with the launcher, even one killed with SIGKILL.
    pid_t start(int rank, const std::vector<std::string>& args, const std::string& log_path);

    struct Failure {
        int rank = 0;
        int status = 0;  // as waitpid reports it
    };
    // Reaps the workers that exited since the last call. Returns those that
    // failed, the ones killed by a signal first (their peers fail only
    // because they vanished).
    [[nodiscard]] std::vector<Failure> reap();
    [[nodiscard]] int running() const;

    // SIGTERM, two seconds of grace, then SIGKILL; waits for all of them.
    void stop_all();

  private:
    struct Worker {
        int rank = 0;
        pid_t pid = 0;
        bool alive = false;
    };
    std::vector<Worker> workers_;
};

// "exit code 3", "killed by signal 9 (Killed)".
[[nodiscard]] std::string describe_exit(int status);

// What a worker writes to its log that is not a failure: "pipewright worker
// rank 1: note: bound to core 1". last_reason_line passes over such lines.
[[nodiscard]] std::string worker_note(int rank, const std::string& text);

// The last non-empty line of a rank's log that is not one of its notes
// ("" when there is none): what it said last about why it stopped.
[[nodiscard]] std::string last_reason_line(const std::string& path);

}  // namespace pipewright::backend
