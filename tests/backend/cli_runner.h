#pragma once

// Runs the real `pipewright` binary from the backend tests, as a user would.

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

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

// `pipewright run PROJECT` as the equivalence tests run it: `steps` steps
// in float64, a thread a rank, every stage's parameters saved and a JSON
// summary printed, into `out`.
[[nodiscard]] CliResult run_exactly(const std::filesystem::path& project, int steps,
                                    const std::filesystem::path& out,
                                    const std::filesystem::path& dir);

// The decoder runs' layers: transformer block `name` of hidden 32 and 4
// heads, Llama-style when `llama` (grouped-query attention over 2 key/value
// heads, SwiGLU of 48, RMSNorm, no biases, rotary); the final norm `ln_f`
// of the same style; the vocabulary head `head` (32 -> 64, no bias).
[[nodiscard]] nlohmann::json tiny_block(const std::string& name, bool llama);
[[nodiscard]] nlohmann::json tiny_final_norm(bool llama);
[[nodiscard]] nlohmann::json tiny_head();

// A token model (`sequence` ids in, cross-entropy) of `layers` on one node
// of `devices` CPUs (node0/c0/cpu0, ...) placed as `placement`, trained as
// `training` says: the decoder runs' projects. The caller adds the parallel
// sections.
[[nodiscard]] nlohmann::json token_model_project(const std::string& name, nlohmann::json layers,
                                                 nlohmann::json placement, int devices,
                                                 nlohmann::json training, int sequence = 8);

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
