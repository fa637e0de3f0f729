#pragma once

// The groups of data-parallel replicas a project forms beside its pipeline
// (analysis.cpp's step after the replicas and tensor groups): the replicas
// that split each block's experts, and those that split each sequence.

#include "pipewright/core/analysis.h"

namespace pipewright {

// Resolves `out.project`'s expert- and context-parallel sizes (the
// options', else the project's) and checks them against the model and
// `out`'s replicas, each problem to `d` at its field or option.
void resolve_replica_groups(const Project& project, const AnalysisOptions& options,
                            AnalyzedProject& out, Diagnostics& d);

}  // namespace pipewright
