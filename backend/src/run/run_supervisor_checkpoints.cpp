// The launcher's part of checkpoints (checkpoint.h): where the run saves
// them, which one it resumes from (--resume, or the newest in
// --checkpoint-dir when the job was restarted), checked against this run
// before any worker starts.
#include <filesystem>
#include <system_error>

#include "pipewright/backend/backend_error.h"
#include "pipewright/core/printable_name.h"
#include "run/checkpoint.h"
#include "run/run_supervisor.h"

namespace pipewright::backend {
namespace fs = std::filesystem;
namespace {

std::string absolute_path(const std::string& path) {
    std::error_code ec;
    const fs::path p = fs::absolute(path, ec);
    return (ec ? fs::path(path) : p).lexically_normal().string();
}

// The first entry of `inner` below `outer` ("checkpoints" for
// runs/a/checkpoints/step-000002 below runs/a), or "" when not below it.
std::string entry_below(const std::string& outer, const std::string& inner) {
    const fs::path relative = fs::path(inner).lexically_relative(outer);
    if (relative.empty() || *relative.begin() == ".." || *relative.begin() == ".") {
        return "";
    }
    return relative.begin()->string();
}

}  // namespace

bool RunSupervisor::choose_checkpoint() {
    const RunSettings& s = o_.settings;
    if (!s.checkpoint_dir.empty()) {
        checkpoint_dir_ = absolute_path(s.checkpoint_dir);
    } else if (s.checkpoint_every > 0 && o_.out_dir) {
        // The default, in the run folder: known here when --out is given;
        // without it the folder is new (prepare_run_folder sets it then).
        checkpoint_dir_ = absolute_path(*o_.out_dir + "/" + kDefaultCheckpointFolder);
    }
    std::string source = s.resume_from;
    if (source.empty() && !o_.restarted.empty() && !checkpoint_dir_.empty() &&
        (s.checkpoint_every > 0 || !s.checkpoint_dir.empty()) &&
        holds_checkpoint(checkpoint_dir_)) {
        source = checkpoint_dir_;
    }
    if (source.empty()) {
        return true;
    }
    const nlohmann::json layout = checkpoint_layout(*project_, s);
    try {
        const CheckpointChoice c = backend::choose_checkpoint(source, layout, world_, mine_);
        if (c.steps_done >= steps_) {
            throw BackendError(c.folder + " holds the state after step " +
                               std::to_string(c.steps_done) + ", and this run trains " +
                               std::to_string(steps_) +
                               " steps: nothing is left to train (give "
                               "--steps more than " +
                               std::to_string(c.steps_done) + ")");
        }
        resume_folder_ = c.folder;
        resume_step_ = c.steps_done;
    } catch (const BackendError& e) {
        err_ << "pipewright: " << node_name_ << "cannot resume"
             << (s.resume_from.empty() ? " the restarted job (" + o_.restarted + ")" : "") << ": "
             << e.what() << '\n';
        return false;
    }
    next_progress_ = resume_step_;
    if (o_.out_dir) {
        resume_replaces_outputs_ = !entry_below(absolute_path(*o_.out_dir), resume_folder_).empty();
    }
    return true;
}

void RunSupervisor::settle_checkpoint_folder() {
    if (o_.settings.checkpoint_every <= 0) {
        return;
    }
    if (checkpoint_dir_.empty()) {
        // The default: checkpoints/ in the run folder (rank 0's, under
        // torchrun or Slurm, where the other ranks write in rank-R/).
        const fs::path base = o_.environment && o_.node_rank != 0
                                  ? fs::path(outcome_.out_dir).parent_path()
                                  : fs::path(outcome_.out_dir);
        checkpoint_dir_ = absolute_path((base / kDefaultCheckpointFolder).string());
    }
    std::error_code ec;
    fs::create_directories(checkpoint_dir_, ec);
    if (ec) {
        throw BackendError("cannot make the checkpoint folder " + checkpoint_dir_ + ": " +
                           ec.message());
    }
}

std::vector<std::string> RunSupervisor::checkpoint_entries_in(const std::string& out) const {
    std::vector<std::string> entries;
    const std::string outer = absolute_path(out);
    for (const std::string& inner : {checkpoint_dir_, resume_folder_}) {
        if (const std::string e = inner.empty() ? "" : entry_below(outer, inner); !e.empty()) {
            entries.push_back(e);
        }
    }
    return entries;
}

void RunSupervisor::announce_checkpoints() {
    const RunSettings& s = o_.settings;
    const std::string restarted =
        o_.restarted.empty() ? "" : " (" + o_.restarted + ": the job was restarted)";
    if (o_.progress_json) {
        if (!resume_folder_.empty()) {
            log_->line(nlohmann::json{{"event", "resume"},
                                      {"checkpoint", resume_folder_},
                                      {"steps_done", resume_step_},
                                      {"restarted", o_.restarted}}
                           .dump());
        }
        return;
    }
    if (!resume_folder_.empty()) {
        log_->line("pipewright: " + node_name_ + "resuming from " + printable_name(resume_folder_) +
                   restarted + ": the state after step " + std::to_string(resume_step_) +
                   ", training on from step " + std::to_string(resume_step_ + 1) + " of " +
                   std::to_string(steps_));
    } else if (!o_.restarted.empty() && s.checkpoint_every > 0) {
        log_->line("pipewright: " + node_name_ + "the job was restarted (" + o_.restarted +
                   "), but " + printable_name(checkpoint_dir_) +
                   " holds no complete checkpoint yet: training starts from step 1");
    }
    if (s.checkpoint_every > 0) {
        log_->line("pipewright: " + node_name_ + "checkpoints every " +
                   std::to_string(s.checkpoint_every) + " step" +
                   (s.checkpoint_every == 1 ? "" : "s") + " into " +
                   printable_name(checkpoint_dir_) + " (the last " +
                   std::to_string(kCheckpointsKept) + " kept)");
    }
}

}  // namespace pipewright::backend
