#pragma once

// The front end (`pipewright`) links no LibTorch, so that validating,
// simulating and planning start in milliseconds. `run`, `profile` and the
// per-rank `worker` are carried out by the backend program
// (`pipewright-backend`), which the front end executes in its own place:
// same process id, same terminal, same signals and exit code, so Ctrl-C, the
// studio's Cancel and scripts see no difference.

#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

namespace pipewright::cli {

// Where the backend program was found, or every place that was tried.
struct BackendLocation {
    std::filesystem::path program;             // empty when not found
    std::vector<std::filesystem::path> tried;  // in the order tried
    std::string problem;                       // why $PIPEWRIGHT_BACKEND was refused
};

// Looks for the backend program: $PIPEWRIGHT_BACKEND when set (and then
// only there), else next to `front_end` (a build tree), else in the
// installed libexec folder relative to it.
[[nodiscard]] BackendLocation locate_backend(const std::filesystem::path& front_end);

// The running program's own file.
[[nodiscard]] std::filesystem::path this_program();

// Replaces this process with the backend program, given the same arguments
// (argv[0] becomes the backend's path) and then `extra`. Returns only on
// failure, after saying why on `err`; the result is then the exit code to use.
int hand_over_to_backend(int argc, const char* const* argv, const std::string& command,
                         std::ostream& err, const std::vector<std::string>& extra = {});

}  // namespace pipewright::cli
