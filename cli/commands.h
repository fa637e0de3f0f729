#pragma once

#include <optional>
#include <ostream>
#include <string>

#include "pipewright/core/analysis.h"

namespace pipewright::cli {

enum ExitCode : int { kOk = 0, kInvalidInput = 1, kUsage = 2 };

// Runs the command line with the given arguments; what a shell would see on
// stdout and stderr goes to `out` and `err`. Returns the exit code.
int run(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

// Loads and analyses a project file, printing every problem to `err`.
// Returns nullopt (after printing) when the project cannot be used.
std::optional<AnalyzedProject> load_analyzed(const std::string& path, AnalysisOptions options,
                                             std::ostream& err);

// Prints diagnostics under a heading naming the file.
void print_problems(std::ostream& err, const std::string& what, const Diagnostics& diagnostics);

}  // namespace pipewright::cli
