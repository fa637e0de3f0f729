#pragma once

// Checkpoints of a real run, on disk: one folder per save, `step-000004/`
// (the steps done), holding every rank's state as `rank-R.pt` and, written
// last, `manifest.json`: the layout the run had (and its fingerprint), the
// step and every rank file with its size. A save is written into
// `step-000004.partial/` and renamed to `step-000004/` once its manifest is
// there, so a step folder is complete unless something damaged it later;
// older complete folders are pruned after, keeping the last kCheckpointsKept.
//
// This side is what the launcher needs (which checkpoint to resume from,
// and whether it fits this run) and what world rank 0 does to finish a save;
// the ranks' own state is in rank_checkpoint.h.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipewright/backend/launcher.h"
#include "pipewright/core/analysis.h"

namespace pipewright::backend {

inline constexpr int kCheckpointsKept = 2;
inline constexpr const char* kCheckpointManifest = "manifest.json";
inline constexpr const char* kDefaultCheckpointFolder = "checkpoints";

// What a checkpoint must agree with to be resumed: the training definition
// (the project as it trains, without its step count and schedule), the
// parallel layout (ranks, the rank of every stage, replicas, ZeRO stage,
// tensor parallelism, world size), the micro-batching and the precision.
[[nodiscard]] nlohmann::json checkpoint_layout(const AnalyzedProject& project,
                                               const RunSettings& settings);
// A digest of the layout (64-bit FNV-1a of its JSON text, as hex).
[[nodiscard]] std::string layout_fingerprint(const nlohmann::json& layout);

// "step-000004" for the save after 4 steps.
[[nodiscard]] std::string checkpoint_folder_name(int steps_done);
// "rank-3.pt".
[[nodiscard]] std::string rank_checkpoint_file(int rank);

// The checkpoint a resume starts from.
struct CheckpointChoice {
    std::string folder;  // the step folder
    int steps_done = 0;
};

// The checkpoint `dir` names: `dir` itself when it is one (it has a
// manifest, or is named step-NNNNNN), else the newest step folder in it.
// It must be complete (a manifest, and the files of `ranks` at the sizes the
// manifest lists) and of this run's layout; otherwise throws BackendError
// saying what is wrong or differs (and which older checkpoint there is).
[[nodiscard]] CheckpointChoice choose_checkpoint(const std::string& dir,
                                                 const nlohmann::json& layout, int world_size,
                                                 NodeRanks ranks);

// Whether `dir` has a step folder with a manifest (automatic resume).
[[nodiscard]] bool holds_checkpoint(const std::string& dir);

// World rank 0, once every rank's file of the save is in `partial`: checks
// that it sees them all (a folder the nodes do not share shows here), writes
// the manifest, renames the folder to its step folder and prunes the older
// ones. Throws BackendError with the reason.
void finish_checkpoint(const std::string& dir, const std::string& partial, int steps_done,
                       const nlohmann::json& layout, int world_size);

// Removes what an interrupted save left in `dir` (*.partial, *.old).
void remove_unfinished_checkpoints(const std::string& dir);

}  // namespace pipewright::backend
