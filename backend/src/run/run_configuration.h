#pragma once

// What every node of a multi-node run must agree on: everything that
// defines the training (the model with its imported module files' contents,
// the placement, the training settings and seed, the parallel layouts) and
// the run's own options. Each node publishes its configuration in the store
// and compares it with node 0's before training, so that two nodes never
// train a model that is neither's.

#include <string>

#include <nlohmann/json.hpp>

#include "pipewright/backend/launcher.h"
#include "pipewright/core/analysis.h"

namespace pipewright::backend {

// The project as it trains, with each imported layer's module file named by
// its contents (the nodes may keep the file in other folders), without the
// topology's links and capacities (they change no arithmetic).
[[nodiscard]] nlohmann::json training_definition(const AnalyzedProject& project);

[[nodiscard]] nlohmann::json run_configuration(const AnalyzedProject& project,
                                               const RunOptions& options, int steps);

// The first difference, in words, with its path: `training.optimizer.lr
// 0.01 here, 0.02 there`; "" when the two agree.
[[nodiscard]] std::string configuration_difference(const nlohmann::json& mine,
                                                   const nlohmann::json& theirs);

}  // namespace pipewright::backend
