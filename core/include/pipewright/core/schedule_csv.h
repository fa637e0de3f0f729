#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "pipewright/core/schedule.h"

namespace pipewright {

// PyTorch's CSV form (torch.distributed.pipelining `_dump_csv`/`_load_csv`):
// one row per rank, one action per cell, empty cells ignored; a forward
// overlapped with the backward after it is one cell, "(0F3;5B1)OVERLAP_F_B".
[[nodiscard]] std::string schedule_to_csv(const Schedule& schedule);
// That cell.
[[nodiscard]] std::string overlapped_cell(const Action& forward, const Action& backward);

// Parses the CSV; stage_rank is derived from where each stage's actions
// appear. Throws InputError naming "row R, column C" for malformed cells or a
// stage that appears on two ranks. num_microbatches is 1 + the largest index.
[[nodiscard]] Schedule schedule_from_csv(const std::string& text, const std::string& name = "csv");
[[nodiscard]] Schedule load_schedule_csv(const std::filesystem::path& path);

}  // namespace pipewright
