// What the run supervisor says when a rank fails or never joins, and which
// rank it blames (failure_cause.h): the RunSupervisor's members that turn a
// failed run into words.
#include <algorithm>

#include "pipewright/core/quantity_format.h"
#include "run/failure_cause.h"
#include "run/heartbeat.h"
#include "run/run_supervisor.h"

namespace pipewright::backend {
namespace {

// How long the other ranks of a failed run have to end and report, so that
// the one whose failure came first is blamed, not the first one reaped.
constexpr std::chrono::milliseconds kFailureGrace{2000};

}  // namespace

void RunSupervisor::fail(const std::string& message) {
    workers_.stop_all();
    log_->line("pipewright: " + node_name_ + message);
    if (multi_) {
        try {
            set_text(*rendezvous_->store, keys::kFailed,
                     "node " + std::to_string(o_.node_rank) + ": " + message);
        } catch (const std::exception&) {
            // the store is gone: the others learn it themselves
        }
    }
}

void RunSupervisor::stopped_by_other_node(const std::string& what) {
    workers_.stop_all();
    log_->line("pipewright: " + node_name_ + "stopped: " + what);
}

std::string RunSupervisor::rank_log(int rank) const {
    return outcome_.out_dir + "/rank-" + std::to_string(rank) + ".log";
}

// Which node hosts a rank, for messages about ranks that never came.
std::vector<int> RunSupervisor::nodes_of(const std::vector<int>& ranks) const {
    std::vector<int> nodes;
    for (int r : ranks) {
        const int n = std::min(o_.nnodes - 1, r / std::max(1, mine_.count));
        if (nodes.empty() || nodes.back() != n) {
            nodes.push_back(n);
        }
    }
    return nodes;
}

std::string RunSupervisor::never_joined(const std::vector<int>& missing) const {
    std::string m =
        counted("rank", missing) + " never joined within " + format_duration(o_.settings.timeout_s);
    if (multi_) {
        m += " (" + counted("node", nodes_of(missing)) + " did not arrive at " +
             rendezvous_->where + ")";
    }
    return m + "; stopped the ranks here";
}

// The rank whose failure caused the others' (failure_cause.h). A rank
// that raised closes its connections while it unwinds, so its peers may fail
// and exit before it does: this waits a moment for this node's other ranks
// to end and report, unless the first report already names its own cause.
// The other failures go to run.log.
RankFailure RunSupervisor::blame() {
    c10d::Store& store = *rendezvous_->store;
    const auto log_reason = [this](int rank) {
        return rank >= mine_.first && rank < mine_.first + mine_.count
                   ? last_reason_line(rank_log(rank))
                   : std::string();
    };
    const auto settled = [](const std::vector<RankFailure>& all) {
        return std::any_of(all.begin(), all.end(), [](const RankFailure& f) {
            return f.order == 1 && !is_consequence(f.reason);
        });
    };
    const auto deadline = std::chrono::steady_clock::now() + kFailureGrace;
    auto all = collect_failures(store, world_, exited_with_error_, log_reason);
    while (!settled(all) && workers_.running() > 0 && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        for (const auto& f : workers_.reap()) {
            exited_with_error_.emplace(f.rank, f.status);
        }
        all = collect_failures(store, world_, exited_with_error_, log_reason);
    }
    const RankFailure cause = first_cause(all);
    for (const RankFailure& f : all) {
        if (f.rank != cause.rank) {
            log_->file << "rank " << f.rank << " failed too"
                       << (f.status ? " (" + describe_exit(*f.status) + ")" : std::string())
                       << (f.reason.empty() ? "" : ": " + f.reason) << '\n';
        }
    }
    return cause;
}

// Why a rank failed, naming the ranks that had stopped answering when it
// did: a rank waiting on a stopped peer fails with the peer's fault.
std::string RunSupervisor::failure_message(const RankFailure& failed) const {
    c10d::Store& store = *rendezvous_->store;
    const std::string log = rank_log(failed.rank);
    const std::string& why = failed.reason;
    const std::string failure =
        "rank " + std::to_string(failed.rank) + " failed" +
        (failed.status ? " (" + describe_exit(*failed.status) + ")" : std::string()) +
        (why.empty() ? "" : ": " + why);
    const auto now = std::chrono::steady_clock::now();
    const bool killed = failed.status && killed_from_outside(*failed.status);
    const auto silent =
        killed ? std::vector<int>{} : heartbeats_->silent_ranks(store, failed.rank, now, kSilence);
    if (silent.empty()) {
        return failure + "; stopped the other ranks" + (multi_ ? " of this node" : "") +
               " (log: " + log + ")";
    }
    const std::string culprit =
        counted("rank", silent) + (multi_ ? " (" + counted("node", nodes_of(silent)) + ")" : "");
    const double quiet_s =
        static_cast<double>(heartbeats_->silent_for(silent.front(), now).count()) / 1000;
    return culprit + " stopped answering (no sign of life for " + format_duration(quiet_s) +
           ": stopped, hung or cut off" + (multi_ ? ", or its launcher ended" : "") + "); " +
           failure + " waiting for it; stopped the other ranks" + (multi_ ? " of this node" : "") +
           " (log: " + log + ")";
}

}  // namespace pipewright::backend
