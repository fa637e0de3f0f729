#pragma once

// Runs the real `pipewright` binary from the backend tests, as a user would.

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

#include "backend_test_util.h"

namespace pipewright::test {

struct CliResult {
    int code = -1;
    std::string output;  // stdout and stderr
    double seconds = 0;
};

// Runs `pipewright ARGS` through a shell. Output goes through a file in
// `dir` (named after `tag`) so that a hung child could never block the test
// on a pipe.
[[nodiscard]] CliResult run_cli(const std::string& args, const std::filesystem::path& dir,
                                const std::string& tag = "cli");

// A fresh folder under the system's temporary directory.
[[nodiscard]] std::filesystem::path temp_dir(const std::string& name);

// Writes the MLP project of `spec` as dir/project.json.
[[nodiscard]] std::filesystem::path write_project(const std::filesystem::path& dir,
                                                  const MlpSpec& spec);

// Processes whose command line contains `text` (e.g. a run's unique output
// folder): what a run left behind.
[[nodiscard]] std::vector<pid_t> processes_mentioning(const std::string& text);

// A TCP port of 127.0.0.1 that nothing listens on right now.
[[nodiscard]] int free_port();

// The JSON summary a `run --json` printed last on stdout.
[[nodiscard]] std::string last_json_object(const std::string& output);

}  // namespace pipewright::test
