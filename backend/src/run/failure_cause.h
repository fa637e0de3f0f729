#pragma once

// Which of several failed ranks caused the others to fail. When one rank
// raises, its sockets close as its stack unwinds, so its peers fail at once
// with "Connection closed by peer" and may even report and exit before it
// does: the first failure seen is often a consequence.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <torch/csrc/distributed/c10d/Store.hpp>

namespace pipewright::backend {

struct RankFailure {
    int rank = 0;
    std::optional<int> status;  // as waitpid reports it, once it exited here
    std::string reason;         // its own words (first line), "" when it left none
    // Its place among the run's reported failures (1 = reported first).
    std::optional<std::int64_t> order;
};

// A rank that a signal ended (kill -9, the out-of-memory killer) is the
// cause itself: its peers' silence, once it is gone, is the consequence. An
// abort may come from a peer's vanishing (an error in a Gloo thread), so it
// is not counted. `status` as waitpid reports it.
[[nodiscard]] bool killed_from_outside(int status);

// True when a reason only says that a peer vanished or stopped answering: a
// closed or reset connection, a broken pipe, a wait that timed out.
[[nodiscard]] bool is_consequence(const std::string& reason);

// The failure to blame: the first one that its worker reported with a
// reason of its own; else a rank killed by a signal (it could report nothing, and its
// peers failed because it vanished); else the first reported; else the
// first in the list. `failures` must not be empty.
[[nodiscard]] const RankFailure& first_cause(const std::vector<RankFailure>& failures);

// Every rank of [0, world) that failed: those that exited with an error here
// (`exited`: rank -> waitpid status) and those that reported a failure in
// the store (any node). A rank that left no reason in the store gets
// `log_reason(rank)` ("" for a rank of another node).
[[nodiscard]] std::vector<RankFailure> collect_failures(
    c10d::Store& store, int world, const std::map<int, int>& exited,
    const std::function<std::string(int)>& log_reason);

}  // namespace pipewright::backend
