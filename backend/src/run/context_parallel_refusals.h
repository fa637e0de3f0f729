#pragma once
// What real runs do not do with context parallelism (context_parallel.size
// above 1), refused before any worker starts rather than trained as
// something other than what `simulate` priced. Each refusal names the field
// and what to change.

#include "pipewright/core/analysis.h"
#include "pipewright/core/diagnostics.h"

namespace pipewright::backend {

// Adds a problem for each thing `project` asks of context parallelism that
// a run does not do; returns whether it added any. Nothing without context
// parallelism.
bool refuse_unsupported_context_parallel(const AnalyzedProject& project, Diagnostics& problems);

}  // namespace pipewright::backend
