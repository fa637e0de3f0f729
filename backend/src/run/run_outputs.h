#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include <torch/csrc/distributed/c10d/Store.hpp>

#include "pipewright/backend/launcher.h"
#include "pipewright/core/analysis.h"
#include "pipewright/core/run_records.h"

namespace pipewright::backend {

// Node 0, once its own workers are done: collects every rank's record from
// the rendezvous store (the other nodes' ranks may still be finishing; it
// waits up to `timeout`, and stops early when `other_failure` reports a
// failed node), then writes timeline.json, trace.json and metrics.json into
// `out_dir`. Returns the summary; throws BackendError naming what is
// missing.
[[nodiscard]] RunSummary write_complete_outputs(
    const AnalyzedProject& project, c10d::Store& store, int warmup, int steps_before,
    const std::string& out_dir, std::chrono::milliseconds timeout,
    const std::function<std::optional<std::string>()>& other_failure);

// Another node: the summary of its own ranks, from their record files in
// `out_dir`, written there as summary.json ("complete": false; node 0 holds
// the whole run).
[[nodiscard]] RunSummary write_node_outputs(const AnalyzedProject& project, NodeRanks ranks,
                                            int warmup, int steps_before,
                                            const std::string& out_dir);

}  // namespace pipewright::backend
