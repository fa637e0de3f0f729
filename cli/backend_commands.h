#pragma once

// The commands that the backend program (`pipewright-backend`) carries out
// with LibTorch. Only that program links them; the front end hands these
// commands over to it (backend_handoff.h).

#include <ostream>

#include "calibrate_command.h"
#include "commands.h"
#include "import_command.h"
#include "profile_command.h"
#include "run_command.h"

namespace pipewright::cli {

int run_run(const RunArgs& args, std::ostream& out, std::ostream& err);
int run_worker_command(const WorkerArgs& args, std::ostream& err);
int run_profile(const ProfileArgs& args, std::ostream& out, std::ostream& err);
int run_import(const ImportArgs& args, std::ostream& out, std::ostream& err);
int run_calibrate(const CalibrateArgs& args, std::ostream& out, std::ostream& err);

// The five above, for run(argc, argv, out, err, backend).
[[nodiscard]] inline BackendCommands torch_backend_commands() {
    return BackendCommands{run_run, run_profile, run_worker_command, run_import, run_calibrate};
}

}  // namespace pipewright::cli
