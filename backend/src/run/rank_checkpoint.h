#pragma once

// One rank's part of a run's checkpoints (checkpoint.h): its state in
// `rank-R.pt` — the parameters and buffers of its stages (its slices under
// tensor parallelism), its optimizer's state (its shard under ZeRO-1), the
// steps done, which are also the data's position (step s trains on batch s),
// and Torch's random state (so dropout draws on as if never stopped).

#include <chrono>
#include <string>

#include <torch/torch.h>
#include <nlohmann/json.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include "pipewright/backend/executor.h"
#include "pipewright/backend/launcher.h"

namespace pipewright::backend {

class RankCheckpoints {
  public:
    // `options.settings`: checkpoint_every, checkpoint_dir and resume_from
    // (a checkpoint folder the launcher checked). World rank 0 clears what
    // an interrupted save left behind.
    RankCheckpoints(const WorkerOptions& options, const AnalyzedProject& project,
                    c10d::Store& store, std::chrono::milliseconds timeout);

    // Loads this rank's state from resume_from into `executor` and the
    // random generators; returns the steps done (0 without resume_from).
    // Throws BackendError naming what does not fit.
    int resume(RankExecutor& executor, const torch::Device& device) const;

    // After `steps_done` steps: saves when a checkpoint is due. Every rank
    // writes its file into the save's folder; world rank 0 waits for all of
    // them, then writes the manifest and completes the save.
    void after_step(int steps_done, const RankExecutor& executor, const torch::Device& device);

  private:
    int rank_;
    int world_;
    int every_;
    std::string dir_;
    std::string resume_from_;
    nlohmann::json layout_;
    c10d::Store& store_;
    std::chrono::milliseconds timeout_;
};

}  // namespace pipewright::backend
