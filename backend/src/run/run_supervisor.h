#pragma once

// `pipewright run` on one node, as a sequence of named steps: check the
// options, meet at the rendezvous store, prepare the run folder, start this
// node's workers, watch them until they end (relaying progress, naming the
// rank or node at fault), then write the outputs. Any step that fails ends
// the run with its message; the steps after it do not run.

#include <chrono>
#include <fstream>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipewright/backend/launcher.h"
#include "run/core_binding.h"
#include "run/failure_cause.h"
#include "run/heartbeat.h"
#include "run/rendezvous.h"
#include "run/run_store.h"
#include "run/stderr_capture.h"
#include "run/worker_processes.h"

namespace pipewright::backend {

class RunSupervisor {
  public:
    RunSupervisor(const RunOptions& options, std::ostream& err);
    [[nodiscard]] RunOutcome run();

  private:
    // The steps, in order; each returns false when the run must end.
    bool load_and_check();
    bool choose_checkpoint();  // run_supervisor_checkpoints.cpp
    bool meet_at_rendezvous();
    bool prepare_run_folder();
    void announce();
    void announce_checkpoints();
    // Once the run folder is made: the default checkpoint folder in it, made
    // when the run saves. Throws BackendError.
    void settle_checkpoint_folder();
    // The run folder's entries that hold the checkpoints it saves or
    // resumes from: kept when the folder is prepared.
    [[nodiscard]] std::vector<std::string> checkpoint_entries_in(const std::string& out) const;
    bool start_workers();
    bool watch_workers();
    bool write_outputs();
    void finish_with_other_nodes();

    // One pass of the watch: false when the run must end.
    bool check_joined(const std::optional<WorkerProcesses::Failure>& failed);
    bool check_other_nodes();
    [[nodiscard]] std::string difference_with_node(int n);
    void wait_for_the_cause(const WorkerProcesses::Failure& failed);
    void relay_progress();

    // Ends the run: stops this node's ranks, says why, and tells the other
    // nodes' launchers (multi-node) so that they stop at once too.
    void fail(const std::string& message);
    void stopped_by_other_node(const std::string& what);
    [[nodiscard]] std::string never_joined(const std::vector<int>& missing) const;
    [[nodiscard]] RankFailure blame();
    [[nodiscard]] std::string failure_message(const RankFailure& failed) const;
    [[nodiscard]] std::vector<int> nodes_of(const std::vector<int>& ranks) const;
    [[nodiscard]] std::string rank_log(int rank) const;

    struct Log {
        std::ostream& err;
        std::ofstream file;
        void line(const std::string& text);
    };

    const RunOptions& o_;
    std::ostream& err_;
    RunOutcome outcome_;

    std::optional<AnalyzedProject> project_;
    NodeRanks mine_;
    HostPort master_{"127.0.0.1", 0};
    int world_ = 0;
    std::string device_kind_;
    std::chrono::milliseconds timeout_{0};
    int steps_ = 0;
    bool multi_ = false;
    CoreBindingChoice binding_;  // CPU workers on cores of their own
    std::string node_name_;      // "node 1: " in a multi-node run, else ""
    nlohmann::json config_;
    // Checkpoints: where this run saves them (absolute; "" when it does not
    // and names no --checkpoint-dir), and the one it resumes from.
    std::string checkpoint_dir_;
    std::string resume_folder_;
    int resume_step_ = 0;
    bool resume_replaces_outputs_ = false;  // it resumes from inside --out

    std::optional<RunStore> rendezvous_;
    // Declared before the workers: they are stopped before the log closes and
    // stderr is given back.
    std::optional<StderrCapture> capture_;
    std::optional<Log> log_;
    WorkerProcesses workers_;
    std::optional<HeartbeatWatch> heartbeats_;
    int next_progress_ = 0;
    std::optional<int> first_nonfinite_step_;  // 1-based, as the progress shows steps
    std::optional<std::chrono::steady_clock::time_point> local_up_;
    bool all_joined_ = false;
    std::vector<bool> node_checked_;
    std::map<int, int> exited_with_error_;  // rank -> waitpid status, this node's
};

}  // namespace pipewright::backend
