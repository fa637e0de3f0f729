#pragma once

#include <functional>
#include <optional>
#include <ostream>
#include <string>

#include "pipewright/core/analysis.h"

namespace pipewright::cli {

enum ExitCode : int { kOk = 0, kInvalidInput = 1, kUsage = 2 };

struct RunArgs;
struct WorkerArgs;
struct ProfileArgs;
struct ImportArgs;
struct CalibrateArgs;

// What carries out the commands that train and measure with LibTorch. The
// front end hands them over to the backend program (backend_handoff.h); the
// backend program runs them itself (backend_commands.h). Both parse the same
// command line, so usage errors and --help never need Torch.
struct BackendCommands {
    std::function<int(const RunArgs&, std::ostream& out, std::ostream& err)> run;
    std::function<int(const ProfileArgs&, std::ostream& out, std::ostream& err)> profile;
    std::function<int(const WorkerArgs&, std::ostream& err)> worker;
    std::function<int(const ImportArgs&, std::ostream& out, std::ostream& err)> import;
    std::function<int(const CalibrateArgs&, std::ostream& out, std::ostream& err)> calibrate;
};

// Runs the command line with the given arguments; what a shell would see on
// stdout and stderr goes to `out` and `err`. Returns the exit code.
// `run`, `profile` and `worker` replace this process with the backend program.
int run(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

// The same, with the backend commands carried out by `backend`.
int run(int argc, const char* const* argv, std::ostream& out, std::ostream& err,
        const BackendCommands& backend);

// Loads and analyses a project file, printing every problem to `err`.
// Returns nullopt (after printing) when the project cannot be used.
std::optional<AnalyzedProject> load_analyzed(const std::string& path, AnalysisOptions options,
                                             std::ostream& err);

// Prints diagnostics under a heading naming the file.
void print_problems(std::ostream& err, const std::string& what, const Diagnostics& diagnostics);

}  // namespace pipewright::cli
