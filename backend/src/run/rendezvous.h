#pragma once

// What the launchers and workers of one run say to each other through the
// rendezvous TCPStore, hosted by the launcher of node 0. Every name a key can
// have is made here, so the two sides cannot drift apart.

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <torch/csrc/distributed/c10d/Store.hpp>

namespace pipewright::backend {

struct HostPort {
    std::string host;
    int port = 0;
};

// "HOST:PORT" (an IPv6 host in brackets: "[::1]:29500"); throws BackendError
// naming the problem.
[[nodiscard]] HostPort parse_host_port(const std::string& text, const std::string& option);

namespace keys {
// Set by a worker once it reached the store, before forming the process group.
[[nodiscard]] std::string joined(int rank);
// A worker's final record (see worker.cpp), JSON text.
[[nodiscard]] std::string record(int rank);
// Loss and iteration time of a step, from the rank with the last stage.
[[nodiscard]] std::string progress(int step);
// Under --stop-on-nan: "yes" when step's loss was finite (the run goes on),
// "no" when not (every rank stops after that step).
[[nodiscard]] std::string loss_finite(int step);
// A launcher's claim of its node rank (counter: > 1 means taken twice).
[[nodiscard]] std::string node_claim(int node);
// A launcher's description of its node, JSON text (ranks, configuration).
[[nodiscard]] std::string node(int node);
// Set by a launcher of a node other than 0 once its outputs are written:
// node 0 keeps the store until then.
[[nodiscard]] std::string node_done(int node);
// A worker's sign of life: a counter it raises every second while it runs.
[[nodiscard]] std::string alive(int rank);
// Why a worker failed, as text: reaches the launcher even when the worker
// cannot write its log (a full disk).
[[nodiscard]] std::string failure(int rank);
// A failed worker's place among the run's failures ("1" for the first),
// drawn from the kFailures counter before it sets its failure key.
[[nodiscard]] std::string failure_order(int rank);
inline constexpr const char* kFailures = "failures";
// Set by the first launcher whose part of the run failed: why, as text.
inline constexpr const char* kFailed = "failed";
// Rank 0's run folder, once made, when the environment assigned the ranks:
// the other ranks write in a folder of their own inside it.
inline constexpr const char* kRunFolder = "run-folder";
}  // namespace keys

void set_text(c10d::Store& store, const std::string& key, const std::string& text);
[[nodiscard]] std::string get_text(c10d::Store& store, const std::string& key);
[[nodiscard]] std::optional<std::string> try_get_text(c10d::Store& store, const std::string& key);

// The text of `key` once it is set, polling; nullopt when `failed_key` is set
// first or `timeout` passes.
[[nodiscard]] std::optional<std::string> wait_for_text(c10d::Store& store, const std::string& key,
                                                       const std::string& failed_key,
                                                       std::chrono::milliseconds timeout);

// Ranks in [0, world) whose joined key is missing, polling until all joined
// or `timeout` passed.
[[nodiscard]] std::vector<int> wait_for_ranks(c10d::Store& store, int world,
                                              std::chrono::milliseconds timeout);
[[nodiscard]] std::vector<int> missing_ranks(c10d::Store& store, int world);

// "1, 2 and 5".
[[nodiscard]] std::string list_ranks(const std::vector<int>& ranks);
// The list after its noun, singular or plural: "rank 3", "nodes 1 and 2".
[[nodiscard]] std::string counted(const std::string& noun, const std::vector<int>& numbers);

}  // namespace pipewright::backend
