#pragma once

// Checks for numeric command-line options whose messages say what is allowed
// ("--microbatches: must be at least 1, got 0"). CLI11's own ranges print the
// largest double in full (309 digits) and let "nan" through every bound.

#include <cstdint>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace pipewright::cli {

// A whole number from `min` to `max` (the default: what an int holds).
[[nodiscard]] CLI::Validator whole_number(std::int64_t min,
                                          std::int64_t max = std::numeric_limits<int>::max());

// Whether a file can be written at `path` (its folder exists and is
// writable, it is not a folder); says why not on `err` as "cannot write the
// <what> PATH: ...". Checked before long work, so a typo does not cost it.
[[nodiscard]] bool check_output_file(const std::string& what, const std::string& path,
                                     std::ostream& err);

// A file the command reads or writes, named for messages: {"--trace", path}.
struct NamedFile {
    std::string role;
    std::string path;
};

// Refuses, before any work, an output that is one of the inputs or another
// output (the same file, through any path or link, or the same path when it
// does not exist yet): writing it would replace what the command reads.
// Says which on `err` and returns false.
[[nodiscard]] bool check_outputs_spare_inputs(const std::vector<NamedFile>& inputs,
                                              const std::vector<NamedFile>& outputs,
                                              std::ostream& err);

// A path that is not empty (`--out ''` names no file).
[[nodiscard]] CLI::Validator non_empty_path();

// A finite number from `min` to `max`, both included.
[[nodiscard]] CLI::Validator finite_number(double min, double max);

}  // namespace pipewright::cli
