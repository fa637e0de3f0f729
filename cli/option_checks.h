#pragma once

// Checks for numeric command-line options whose messages say what is allowed
// ("--microbatches: must be at least 1, got 0"). CLI11's own ranges print the
// largest double in full (309 digits) and let "nan" through every bound.

#include <cstdint>
#include <limits>

#include <CLI/CLI.hpp>

namespace pipewright::cli {

// A whole number from `min` to `max` (the default: what an int holds).
[[nodiscard]] CLI::Validator whole_number(std::int64_t min,
                                          std::int64_t max = std::numeric_limits<int>::max());

// A finite number from `min` to `max`, both included.
[[nodiscard]] CLI::Validator finite_number(double min, double max);

}  // namespace pipewright::cli
