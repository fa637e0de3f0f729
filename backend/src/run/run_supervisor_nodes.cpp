// How the launchers of a run on several nodes meet and part: each publishes
// its configuration in the run's store and refuses another node's that
// differs, waits for the cause when another node's rank vanished, and node
// 0 keeps the store until every node has finished with it (RunSupervisor's
// members for the other nodes).
#include <chrono>
#include <thread>

#include "run/heartbeat.h"
#include "run/run_configuration.h"
#include "run/run_supervisor.h"

namespace pipewright::backend {

bool RunSupervisor::meet_at_rendezvous() {
    rendezvous_ = open_run_store(master_, o_, timeout_, err_);
    if (!rendezvous_) {
        return false;
    }
    config_ = run_configuration(*project_, o_, steps_);
    // Every node resumes from the same step (a checkpoint folder that the
    // nodes do not share could differ).
    config_["resume_step"] = resume_step_;
    config_["checkpoint_every"] = o_.settings.checkpoint_every;
    if (multi_) {
        c10d::Store& store = *rendezvous_->store;
        if (store.add(keys::node_claim(o_.node_rank), 1) > 1) {
            err_ << "pipewright: node rank " << o_.node_rank << " is already taken by another "
                 << "launcher of the run at " << rendezvous_->where << '\n';
            return false;
        }
        set_text(store, keys::node(o_.node_rank), config_.dump());
        // Node 0 publishes its configuration as it opens the store: another
        // node refuses a difference before any of its workers starts.
        if (const std::string diff = difference_with_node(0); !diff.empty()) {
            err_ << "pipewright: " << node_name_ << diff << '\n';
            try {
                set_text(store, keys::kFailed,
                         "node " + std::to_string(o_.node_rank) + ": " + diff);
            } catch (const std::exception&) {
                // node 0 is gone already: it learns nothing more from us
            }
            return false;
        }
    }
    return true;
}

// "" when node `n` has not published its configuration yet or runs this
// node's; else the refusal, with the first difference in words.
std::string RunSupervisor::difference_with_node(int n) {
    if (n == o_.node_rank || node_checked_[static_cast<std::size_t>(n)]) {
        return "";
    }
    const auto text = try_get_text(*rendezvous_->store, keys::node(n));
    if (!text) {
        return "";
    }
    node_checked_[static_cast<std::size_t>(n)] = true;
    const std::string diff = configuration_difference(config_, nlohmann::json::parse(*text));
    if (diff.empty()) {
        return "";
    }
    return (o_.node_rank == 0 ? "node " + std::to_string(n) + " runs"
                              : std::string("this node runs")) +
           " another configuration than " +
           (o_.node_rank == 0 ? std::string("this node") : "node " + std::to_string(n)) + " (" +
           diff + "); run the same project with the same options on every node";
}

// A rank here that failed because a rank of another node vanished: that
// node's launcher names the real cause, or, when that launcher is gone too,
// the silence of its ranks. Waits until either shows.
void RunSupervisor::wait_for_the_cause(const WorkerProcesses::Failure& failed) {
    c10d::Store& store = *rendezvous_->store;
    const auto since = std::chrono::steady_clock::now();
    // A counter is read once a period, so a silence shows a period or two
    // after the rank went quiet.
    while (std::chrono::steady_clock::now() - since < kSilence + 2 * kHeartbeatPeriod) {
        if (try_get_text(store, keys::kFailed)) {
            return;
        }
        heartbeats_->poll(store, std::chrono::steady_clock::now());
        if (!heartbeats_
                 ->silent_ranks(store, failed.rank, std::chrono::steady_clock::now(), kSilence)
                 .empty()) {
            return;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
}

bool RunSupervisor::check_other_nodes() {
    // Node 0 compares every node's configuration with its own, and every
    // other node its own with node 0's: each refuses with the difference in
    // its own words (first, before another node's refusal of the same), even
    // when node 0 has ended and taken the store with it.
    for (int n = 0; n < (o_.node_rank == 0 ? o_.nnodes : 1); ++n) {
        if (const std::string diff = difference_with_node(n); !diff.empty()) {
            fail(diff);
            return false;
        }
    }
    if (const auto other = try_get_text(*rendezvous_->store, keys::kFailed)) {
        stopped_by_other_node(*other);
        return false;
    }
    return true;
}

void RunSupervisor::finish_with_other_nodes() {
    if (!multi_) {
        return;
    }
    c10d::Store& store = *rendezvous_->store;
    try {
        if (o_.node_rank == 0) {
            // The store lives in this process: keep it until the other nodes
            // have finished with it.
            std::vector<std::string> done;
            for (int n = 1; n < o_.nnodes; ++n) {
                done.push_back(keys::node_done(n));
            }
            store.wait(done, timeout_);
        } else {
            set_text(store, keys::node_done(o_.node_rank), "1");
        }
    } catch (const std::exception&) {
        // c10d's timeout or a store that is gone: the outputs are written.
        log_->line("pipewright: " + node_name_ +
                   "note: not every node confirmed the end of the run; its outputs are "
                   "complete");
    }
}

}  // namespace pipewright::backend
