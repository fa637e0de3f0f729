// Checks the simulator's NCCL collective pricing (sim/collective_cost.h)
// against collectives measured among the GPUs of one node. Kernel-level
// data, none of it used to choose the model's constants. It reads two
// published tables:
//
//  - nccl-tests all-reduces among 2 to 8 A100s, published with vTrain
//    (bench/data/vtrain_a100_allreduce.csv, MIT; rows gpus,bytes,time_ns);
//  - XLA's collective table for 8 H100s: all-reduce, all-gather,
//    reduce-scatter and all-to-all in groups of 2, 4 and 8
//    (bench/data/xla_collectives_h100.csv, Apache-2.0; rows
//    op,dtype,elements,bytes,groups,devices_per_group,...,seconds).
//
// Prints predicted / measured time for every measurement, then the median
// per collective and group size, over small (under 1 MiB), middle (1 to 16
// MiB) and large (over 16 MiB) buffers.
//
//   collective_model_check TABLE.csv [GBps [latency_us [efficiency]]]
//
// The link defaults to a project's `intra_container` link for an A100 node
// (NVLink: 300 GB/s, 5 µs, reaching 0.8 of it), as the A100 examples and the
// validation scripts give it; the H100 examples give 450 GB/s.
#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "csv_cells.h"
#include "pipewright/sim/collective_cost.h"

namespace {

using pipewright::CollectiveKind;

struct Measurement {
    CollectiveKind kind = CollectiveKind::all_reduce;
    int gpus = 0;  // XLA's concurrent groups each run on links of their own
    double bytes = 0;
    double seconds = 0;
};

enum class TableFormat { nccl_tests, xla };

std::optional<CollectiveKind> kind_named(const std::string& op) {
    for (CollectiveKind k : {CollectiveKind::all_reduce, CollectiveKind::reduce_scatter,
                             CollectiveKind::all_gather, CollectiveKind::all_to_all}) {
        if (op == pipewright::to_string(k)) {
            return k;
        }
    }
    return std::nullopt;
}

double number(const std::string& cell) {
    char* end = nullptr;
    const double value = std::strtod(cell.c_str(), &end);
    return end != cell.c_str() && *end == '\0' ? value : -1;
}

// Reads one row; false when it is malformed. `skipped` is set for a row of
// an operation the simulator does not price as a collective (XLA's
// collective-permute: a pipeline transfer is priced by its link).
bool parse_row(const std::string& line, TableFormat format, Measurement& m, bool& skipped) {
    const std::vector<std::string> cells = csv_cells(line);
    skipped = false;
    if (format == TableFormat::nccl_tests) {
        if (cells.size() != 3) {
            return false;
        }
        m.gpus = static_cast<int>(number(cells[0]));
        m.bytes = number(cells[1]);
        m.seconds = number(cells[2]) * 1e-9;
    } else {
        if (cells.size() != 8) {
            return false;
        }
        const std::optional<CollectiveKind> kind = kind_named(cells[0]);
        if (!kind) {
            skipped = cells[0].rfind("collective-permute", 0) == 0;
            return skipped;
        }
        m.kind = *kind;
        m.bytes = number(cells[3]);
        m.gpus = static_cast<int>(number(cells[5]));
        m.seconds = number(cells[7]);
    }
    return m.gpus > 1 && m.bytes > 0 && m.seconds > 0;
}

std::string size_text(double bytes) {
    char text[32];
    if (bytes >= 1 << 30) {
        std::snprintf(text, sizeof text, "%.0f GiB", bytes / (1 << 30));
    } else if (bytes >= 1 << 20) {
        std::snprintf(text, sizeof text, "%.0f MiB", bytes / (1 << 20));
    } else {
        std::snprintf(text, sizeof text, "%.0f KiB", bytes / (1 << 10));
    }
    return text;
}

// The three size classes the summary reports.
std::size_t size_class(double bytes) {
    if (bytes < (1 << 20)) {
        return 0;
    }
    return bytes <= (16 << 20) ? 1 : 2;
}
constexpr const char* kSizeClasses[] = {"under 1 MiB", "1–16 MiB", "over 16 MiB"};

std::string median_text(std::vector<double> r) {
    if (r.empty()) {
        return "—";
    }
    std::sort(r.begin(), r.end());
    char text[48];
    std::snprintf(text, sizeof text, "%.2f (%zu)", r[r.size() / 2], r.size());
    return text;
}

}  // namespace

int main(int argc, char** argv) {
    using namespace pipewright;
    if (argc < 2 || argc > 5) {
        std::fprintf(stderr,
                     "usage: collective_model_check TABLE.csv [GBps [latency_us [efficiency]]]\n");
        return 2;
    }
    LinkSpec link{300, 5, 0.8};
    if (argc > 2) {
        link.bandwidth_GBps = std::atof(argv[2]);
    }
    if (argc > 3) {
        link.latency_us = std::atof(argv[3]);
    }
    if (argc > 4) {
        link.efficiency = std::atof(argv[4]);
    }
    if (link.bandwidth_GBps <= 0 || link.latency_us < 0 || link.efficiency <= 0 ||
        link.efficiency > 1) {
        std::fprintf(stderr, "collective_model_check: the link's figures are out of range\n");
        return 2;
    }
    std::ifstream in(argv[1]);
    if (!in) {
        std::fprintf(stderr, "collective_model_check: cannot read %s\n", argv[1]);
        return 2;
    }
    std::optional<TableFormat> format;
    std::vector<Measurement> rows;
    int skipped_rows = 0;
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') {
            continue;
        }
        if (!format) {
            if (line.rfind("gpus,bytes,", 0) == 0) {
                format = TableFormat::nccl_tests;
            } else if (line.rfind("op,dtype,elements,bytes,groups,devices_per_group,", 0) == 0) {
                format = TableFormat::xla;
            } else {
                std::fprintf(stderr,
                             "collective_model_check: %s has neither table's header row "
                             "(\"gpus,bytes,time_ns\" or \"op,dtype,elements,bytes,…\")\n",
                             argv[1]);
                return 2;
            }
            continue;
        }
        Measurement m;
        bool skipped = false;
        if (!parse_row(line, *format, m, skipped)) {
            std::fprintf(stderr, "collective_model_check: cannot read the row \"%s\"\n",
                         line.c_str());
            return 2;
        }
        if (skipped) {
            ++skipped_rows;
        } else {
            rows.push_back(m);
        }
    }
    if (rows.empty()) {
        std::fprintf(stderr, "collective_model_check: no measurements in %s\n", argv[1]);
        return 2;
    }
    std::printf("NCCL collectives over a link of %.0f GB/s, %.0f µs, reaching %.2f of it\n\n",
                link.bandwidth_GBps, link.latency_us, link.efficiency);
    std::printf(
        "| collective | GPUs | buffer | measured | predicted | predicted / measured | "
        "algorithm |\n");
    std::printf("|---|---|---|---|---|---|---|\n");
    // (collective, GPUs) → the ratios of each size class.
    std::map<std::pair<CollectiveKind, int>, std::array<std::vector<double>, 3>> ratios;
    for (const Measurement& m : rows) {
        CollectiveGroup group;
        group.library = CollectiveLibrary::nccl;
        group.members = m.gpus;
        group.ring = link;
        const CollectiveTime t = collective_time(m.kind, m.bytes, group);
        const double ratio = t.seconds / m.seconds;
        ratios[{m.kind, m.gpus}][size_class(m.bytes)].push_back(ratio);
        std::printf("| %s | %d | %s | %.1f µs | %.1f µs | %.2f | %s, %s |\n",
                    std::string(to_string(m.kind)).c_str(), m.gpus, size_text(m.bytes).c_str(),
                    m.seconds * 1e6, t.seconds * 1e6, ratio,
                    std::string(to_string(t.algorithm)).c_str(),
                    std::string(to_string(t.protocol)).c_str());
    }
    std::printf("\nPredicted / measured: median (buffers)\n\n");
    std::printf("| collective | GPUs | %s | %s | %s |\n", kSizeClasses[0], kSizeClasses[1],
                kSizeClasses[2]);
    std::printf("|---|---|---|---|---|\n");
    for (const auto& [key, classes] : ratios) {
        const auto [kind, gpus] = key;
        std::printf("| %s | %d | %s | %s | %s |\n", std::string(to_string(kind)).c_str(), gpus,
                    median_text(classes[0]).c_str(), median_text(classes[1]).c_str(),
                    median_text(classes[2]).c_str());
    }
    if (skipped_rows > 0) {
        std::printf(
            "\n%d collective-permute rows not checked: the simulator prices a pipeline "
            "transfer by its link, not as a collective.\n",
            skipped_rows);
    }
    return 0;
}
