#pragma once
// Steps of analyze_project (analysis.cpp) that live in files of their own;
// each adds its problems to `d` at the project field they concern.

#include <cstddef>
#include <string>
#include <vector>

#include "pipewright/core/analysis.h"
#include "pipewright/core/device_catalog.h"
#include "pipewright/core/topology.h"

namespace pipewright::analysis_steps {

// "placement[3]"
[[nodiscard]] std::string stage_path(std::size_t i);
// "a, b, c", the first `limit` of them and how many in all.
[[nodiscard]] std::string join(const std::vector<std::string>& items, std::size_t limit = 12);

// analysis_devices.cpp: the layout on devices.
// Each stage's rank and device, its spec from `catalog`.
void resolve_ranks(const Project& p, const DeviceCatalog& catalog, const DeviceLookup& lookup,
                   AnalyzedProject& out, Diagnostics& d);
// False, after saying so, when the tensor-parallel size exceeds every
// container's devices.
[[nodiscard]] bool tensor_size_fits_a_container(const Project& p, const AnalysisOptions& o,
                                                Diagnostics& d);
// Each rank's tensor-parallel group.
void resolve_tensor_parallel(const Project& p, const AnalysisOptions& o, const DeviceLookup& lookup,
                             AnalyzedProject& out, Diagnostics& d);
// The data-parallel replicas' devices.
void resolve_replicas(const Project& p, const AnalysisOptions& o, const DeviceCatalog& catalog,
                      const DeviceLookup& lookup, AnalyzedProject& out, Diagnostics& d);
// FP8 training needs FP8 tensor cores on every device of the layout.
void check_precision(const Project& p, const DeviceCatalog& catalog, const AnalyzedProject& out,
                     Diagnostics& d);
// The fused attention kernel the training names needs a measured rate on
// every device of the layout that runs a flash-attention block.
void check_attention_kernel(const Project& p, const DeviceCatalog& catalog,
                            const AnalyzedProject& out, Diagnostics& d);

}  // namespace pipewright::analysis_steps
