#include "simulate_outputs.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <functional>
#include <new>
#include <vector>

#include "option_checks.h"
#include "pipewright/core/inner_waits.h"
#include "pipewright/core/output_file.h"
#include "pipewright/core/printable_name.h"
#include "pipewright/core/quantity_format.h"
#include "pipewright/core/schedule_csv.h"
#include "pipewright/core/timeline.h"
#include "pipewright/sim/report_inner_waits.h"

namespace pipewright::cli {

namespace {

constexpr double kKiB = 1024.0;

struct Unit {
    std::string_view name;
    double bytes;
};

// Matched without regard to case, so "gib", "GB" and "g" all work.
constexpr Unit kUnits[] = {
    {"", 1},
    {"b", 1},
    {"k", kKiB},
    {"kib", kKiB},
    {"kb", 1e3},
    {"m", kKiB* kKiB},
    {"mib", kKiB* kKiB},
    {"mb", 1e6},
    {"g", kKiB* kKiB* kKiB},
    {"gib", kKiB* kKiB* kKiB},
    {"gb", 1e9},
    {"t", kKiB* kKiB* kKiB* kKiB},
    {"tib", kKiB* kKiB* kKiB* kKiB},
    {"tb", 1e12},
};

std::string lower(std::string_view s) {
    std::string out;
    for (const char c : s) {
        out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    }
    return out;
}

// A limit that lets `bytes` through, in whole GiB (or MiB below 1 GiB).
std::string size_to_ask(std::uint64_t bytes) {
    const double gib = static_cast<double>(bytes) / (kKiB * kKiB * kKiB);
    if (gib >= 1) {
        return std::to_string(static_cast<std::uint64_t>(std::ceil(gib))) + "GiB";
    }
    const double mib = static_cast<double>(bytes) / (kKiB * kKiB);
    return std::to_string(static_cast<std::uint64_t>(std::ceil(mib))) + "MiB";
}

struct PlannedOutput {
    std::string path;
    std::string what;  // "trace", "timeline", "schedule CSV"
    std::function<std::uint64_t()> estimate;
    std::function<void(TextSink&)> write;
};

std::vector<PlannedOutput> planned_outputs(const OutputArgs& args, const SimulationReport& report,
                                           const AnalyzedProject& project) {
    std::vector<PlannedOutput> out;
    const Timeline& timeline = report.timeline;
    // A JSON document of the timeline, one line with its final newline.
    const auto add_json = [&out, &timeline](const std::string& path, const char* what,
                                            std::uint64_t (*estimate)(const Timeline&),
                                            void (*write)(const Timeline&, TextSink&)) {
        out.push_back({path, what, [&timeline, estimate] { return estimate(timeline) + 1; },
                       [&timeline, write](TextSink& sink) {
                           write(timeline, sink);
                           sink.write("\n");
                       }});
    };
    if (args.trace) {
        // With the waits inside the forwards and backwards, as nested slices.
        out.push_back({*args.trace, "trace",
                       [&timeline, inner = inner_waits(report)] {
                           return estimate_chrome_trace_bytes(timeline, inner) + 1;
                       },
                       [&timeline, inner = inner_waits(report)](TextSink& sink) {
                           write_chrome_trace(timeline, inner, sink);
                           sink.write("\n");
                       }});
    }
    if (args.timeline) {
        add_json(*args.timeline, "timeline", estimate_timeline_json_bytes, write_timeline_json);
    }
    if (args.export_csv) {
        const Schedule& schedule = project.schedule;
        const std::optional<TorchCsvFormat> format = args.csv_format;
        // About 10 bytes an action ("12SEND_F3,"), 15 with torch's waits:
        // small next to the others.
        out.push_back({*args.export_csv, "schedule CSV",
                       [&schedule] { return std::uint64_t{15} * schedule.action_count(); },
                       [&schedule, format](TextSink& sink) {
                           sink.write(format ? schedule_to_torch_csv(schedule, *format)
                                             : schedule_to_csv(schedule));
                       }});
    }
    return out;
}

}  // namespace

std::optional<std::uint64_t> parse_byte_size(std::string_view text) {
    double value = 0;
    const char* begin = text.data();
    const char* end = text.data() + text.size();
    const auto [number_end, ec] = std::from_chars(begin, end, value, std::chars_format::fixed);
    if (ec != std::errc() || number_end == begin || !std::isfinite(value) || value < 0) {
        return std::nullopt;
    }
    const std::string unit =
        lower(std::string_view(number_end, static_cast<std::size_t>(end - number_end)));
    for (const Unit& u : kUnits) {
        if (unit == u.name) {
            const double bytes = std::floor(value * u.bytes);
            // Up to 2^63: beyond any disk, and exact enough in a double.
            if (bytes > 9.2e18) {
                return std::nullopt;
            }
            return static_cast<std::uint64_t>(bytes);
        }
    }
    return std::nullopt;
}

void add_output_options(CLI::App& command, OutputArgs& args) {
    command.add_option("--trace", args.trace, "Write a Chrome trace (open in Perfetto)")
        ->check(non_empty_path());
    command.add_option("--timeline", args.timeline, "Write the Pipewright timeline JSON")
        ->check(non_empty_path());
    CLI::Option* export_csv =
        command
            .add_option("--export-csv", args.export_csv,
                        "Write the schedule as PyTorch CSV (torch.distributed.pipelining)")
            ->check(non_empty_path());
    command
        .add_option_function<std::string>(
            "--csv-format",
            [&args](const std::string& text) {
                if (text == "pipewright") {
                    args.csv_format.reset();
                    return;
                }
                args.csv_format = torch_csv_format(text);
                if (!args.csv_format) {
                    throw CLI::ValidationError("--csv-format",
                                               "expected pipewright, compute-only or "
                                               "compute-comms, got \"" +
                                                   text + "\"");
                }
            },
            "Form of --export-csv: pipewright (as simulated, the default), compute-only or "
            "compute-comms (what torch's _load_csv(path, format=...) reads)")
        ->type_name("FORMAT")
        ->needs(export_csv);
    command
        .add_option_function<std::string>(
            "--max-output-size",
            [&args](const std::string& text) {
                const auto bytes = parse_byte_size(text);
                if (!bytes) {
                    throw CLI::ValidationError("--max-output-size",
                                               "expected a size such as 4GiB, 500MB or 1048576, "
                                               "got \"" +
                                                   text + "\"");
                }
                args.max_output_bytes = *bytes;
            },
            "Refuse to write a --trace, --timeline or --export-csv file estimated larger than "
            "SIZE (default 1GiB; units B, KiB, MiB, GiB, TiB, kB, MB, GB, TB)")
        ->type_name("SIZE");
}

bool write_simulation_outputs(const OutputArgs& args, const SimulationReport& report,
                              const AnalyzedProject& project, std::ostream& err) {
    const std::vector<PlannedOutput> outputs = planned_outputs(args, report, project);
    // Every file is checked before any is written: a refusal leaves none behind.
    bool fits = true;
    for (const auto& o : outputs) {
        const std::uint64_t estimate = o.estimate();
        if (estimate > args.max_output_bytes) {
            err << "pipewright: the " << o.what << " " << printable_name(o.path)
                << " would take about " << format_bytes(static_cast<double>(estimate))
                << ", more than the limit of "
                << format_bytes(static_cast<double>(args.max_output_bytes))
                << "; to write it anyway, pass --max-output-size " << size_to_ask(estimate) << '\n';
            fits = false;
        }
    }
    if (!fits) {
        return false;
    }
    bool ok = true;
    for (const auto& o : outputs) {
        try {
            OutputFile file(o.path);
            o.write(file);
            file.commit();
        } catch (const std::bad_alloc&) {
            throw;  // reported by main as out of memory
        } catch (const std::exception& e) {
            err << "pipewright: cannot write the " << o.what << ": " << printable_name(e.what())
                << '\n';
            ok = false;
        }
    }
    return ok;
}

void print_written_outputs(const OutputArgs& args, std::ostream& out) {
    if (args.trace) {
        out << "\nWrote " << *args.trace
            << " (Chrome trace: open it in https://ui.perfetto.dev or chrome://tracing)\n";
    }
    if (args.timeline) {
        out << (args.trace ? "" : "\n") << "Wrote " << *args.timeline << " (Pipewright timeline)\n";
    }
    if (args.export_csv) {
        out << ((args.trace || args.timeline) ? "" : "\n") << "Wrote " << *args.export_csv;
        if (args.csv_format) {
            out << " (schedule for torch: _load_csv(path, format=\""
                << (*args.csv_format == TorchCsvFormat::compute_only ? "compute_only"
                                                                     : "compute_comms")
                << "\"))\n";
        } else {
            out << " (schedule, one row per rank)\n";
        }
    }
}

}  // namespace pipewright::cli
