#pragma once
// What both imports share: the TorchScript one (import_execution.cpp, in
// the backend program) and the Hugging Face config one (config_import.cpp).

#include <optional>
#include <ostream>
#include <string>

#include "pipewright/core/project.h"

namespace pipewright::cli {

// The imported layers over the project's devices: the planner's contiguous
// split with the smallest bottleneck at the project's schedule and
// micro-batches (stage times on these devices, transfers, memory), or, when
// no split fits in memory, its split by parameters (simulate then says
// where it does not fit).
[[nodiscard]] Project placed_by_planner(const Project& imported);

// The device catalog's name for `spec`, whatever its case; nothing when the
// catalog has no such device.
[[nodiscard]] std::optional<std::string> catalog_name(const std::string& spec);
// "no device "X" in the catalog; give one of A100-40GB, …".
[[nodiscard]] std::string unknown_device_words(const std::string& spec);
// catalog_name, with the known names printed to `err` when there is none.
[[nodiscard]] std::optional<std::string> catalog_device_name(const std::string& spec,
                                                             std::ostream& err);

}  // namespace pipewright::cli
