#pragma once

// The files `simulate` writes (--trace, --timeline, --export-csv), each
// streamed to disk, and the size limit that keeps a large case from filling
// the disk or the memory unasked (issue 18).

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include "pipewright/core/analysis.h"
#include "pipewright/core/torch_csv.h"
#include "pipewright/sim/simulation.h"

namespace pipewright::cli {

// 1 GiB: larger traces do not open in Perfetto or chrome://tracing anyway.
inline constexpr std::uint64_t kDefaultMaxOutputBytes = std::uint64_t{1} << 30;

struct OutputArgs {
    std::optional<std::string> trace;
    std::optional<std::string> timeline;
    std::optional<std::string> export_csv;
    // nullopt: as Pipewright runs it (each receive right before the action
    // that needs it); else the form torch's _load_csv reads.
    std::optional<TorchCsvFormat> csv_format;
    std::uint64_t max_output_bytes = kDefaultMaxOutputBytes;
};

// "4GiB", "500MB", "1.5G", "123456" (bytes); nullopt when not a size.
// Binary units (KiB, MiB, GiB, TiB and K, M, G, T) are powers of 1024,
// decimal ones (kB, MB, GB, TB) of 1000.
[[nodiscard]] std::optional<std::uint64_t> parse_byte_size(std::string_view text);

void add_output_options(CLI::App& command, OutputArgs& args);

// Writes the files asked for. Refuses (writing none) when one would be
// larger than the limit, saying its estimated size and how to go on.
// Returns false after printing why.
[[nodiscard]] bool write_simulation_outputs(const OutputArgs& args, const SimulationReport& report,
                                            const AnalyzedProject& project, std::ostream& err);

// "Wrote ..." lines for the files written.
void print_written_outputs(const OutputArgs& args, std::ostream& out);

}  // namespace pipewright::cli
