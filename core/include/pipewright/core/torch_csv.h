#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "pipewright/core/schedule.h"

namespace pipewright {

// The two CSV forms torch.distributed.pipelining's _PipelineScheduleRuntime
// loads with _load_csv(path, format=...), so that a schedule planned here can
// be run by torch (docs/file-formats.md, "Handing a schedule to PyTorch").
enum class TorchCsvFormat {
    // F, B, I and W only; torch adds its sends, receives and FSDP/DDP
    // actions itself when it loads the file.
    compute_only,
    // Lowered as torch 2.x lowers a compute-only list: the sends and receives
    // of _add_send_recv (ranks take turns; a receive enters the receiver's
    // row when the sender's send is placed), a REDUCE_GRAD for every stage
    // (torch scales the gradients there, so a schedule without data
    // parallelism gets them after each stage's last backward, as torch's
    // _add_reduce_grad places them) with WAIT_REDUCE_GRAD after it, and a
    // WAIT_SEND_F/WAIT_SEND_B for every send (after the local backward that
    // proves a forward send consumed, else at the end).
    compute_comms,
};

// "compute-only", "compute-comms".
[[nodiscard]] std::string_view to_string(TorchCsvFormat format);
[[nodiscard]] std::optional<TorchCsvFormat> torch_csv_format(std::string_view name);

// The schedule in `format`, one row per rank. Sends and receives in
// `schedule` are dropped and, for compute_comms, placed again as torch
// places them; collectives (UNSHARD, RESHARD, REDUCE_GRAD) stay where the
// schedule has them. Throws ScheduleError when the compute actions cannot
// be ordered (a schedule that check_schedule rejects).
[[nodiscard]] std::string schedule_to_torch_csv(const Schedule& schedule, TorchCsvFormat format);

// torch's runtime posts a receive where its row has it and waits for the
// data where an action uses it; Pipewright's receive waits where it stands.
// Moves each receive to just before the first action of its rank that uses
// the data (never earlier), so that a file lowered by torch, which posts
// receives as early as it can, simulates and runs as torch runs it.
[[nodiscard]] Schedule with_receives_where_used(const Schedule& schedule);

}  // namespace pipewright
