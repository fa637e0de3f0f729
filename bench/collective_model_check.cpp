// Checks the simulator's NCCL all-reduce pricing (sim/collective_cost.h)
// against nccl-tests measured among 2 to 8 A100s of one node, published with
// vTrain (bench/data/vtrain_a100_allreduce.csv, MIT). Kernel-level data, none
// of it used to choose the model's constants. Prints predicted / measured
// time for every group size and buffer, then per group size the median.
//
//   collective_model_check bench/data/vtrain_a100_allreduce.csv [GBps [latency_us [efficiency]]]
//
// The link defaults to a project's `intra_container` link (NVLink: 300 GB/s,
// 5 µs, reaching 0.8 of it), as the A100 examples and the validation
// scripts give it.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "csv_cells.h"
#include "pipewright/sim/collective_cost.h"

namespace {

struct Measurement {
    int gpus = 0;
    double bytes = 0;
    double seconds = 0;
};

bool parse_row(const std::string& line, Measurement& m) {
    const std::vector<std::string> cells = csv_cells(line);
    if (cells.size() != 3) {
        return false;
    }
    char* end = nullptr;
    m.gpus = static_cast<int>(std::strtol(cells[0].c_str(), &end, 10));
    m.bytes = std::strtod(cells[1].c_str(), &end);
    m.seconds = std::strtod(cells[2].c_str(), &end) * 1e-9;
    return m.gpus > 1 && m.bytes > 0 && m.seconds > 0;
}

std::string size_text(double bytes) {
    char text[32];
    if (bytes >= 1 << 30) {
        std::snprintf(text, sizeof text, "%.0f GiB", bytes / (1 << 30));
    } else {
        std::snprintf(text, sizeof text, "%.0f MiB", bytes / (1 << 20));
    }
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
    std::vector<Measurement> rows;
    std::string line;
    while (std::getline(in, line)) {
        Measurement m;
        if (line.empty() || line[0] == '#' || line.rfind("gpus,", 0) == 0) {
            continue;
        }
        if (!parse_row(line, m)) {
            std::fprintf(stderr, "collective_model_check: cannot read the row \"%s\"\n",
                         line.c_str());
            return 2;
        }
        rows.push_back(m);
    }
    if (rows.empty()) {
        std::fprintf(stderr, "collective_model_check: no measurements in %s\n", argv[1]);
        return 2;
    }
    std::printf("NCCL all-reduce over a link of %.0f GB/s, %.0f µs, reaching %.2f of it\n\n",
                link.bandwidth_GBps, link.latency_us, link.efficiency);
    std::printf("| GPUs | buffer | measured | predicted | predicted / measured | algorithm |\n");
    std::printf("|---|---|---|---|---|---|\n");
    std::map<int, std::vector<double>> ratios;
    for (const Measurement& m : rows) {
        CollectiveGroup group;
        group.library = CollectiveLibrary::nccl;
        group.members = m.gpus;
        group.ring = link;
        const CollectiveTime t = collective_time(CollectiveKind::all_reduce, m.bytes, group);
        const double ratio = t.seconds / m.seconds;
        ratios[m.gpus].push_back(ratio);
        std::printf("| %d | %s | %.1f µs | %.1f µs | %.2f | %s, %s |\n", m.gpus,
                    size_text(m.bytes).c_str(), m.seconds * 1e6, t.seconds * 1e6, ratio,
                    std::string(to_string(t.algorithm)).c_str(),
                    std::string(to_string(t.protocol)).c_str());
    }
    std::printf("\n| GPUs | buffers | predicted / measured: median | lowest | highest |\n");
    std::printf("|---|---|---|---|---|\n");
    for (auto& [gpus, r] : ratios) {
        std::sort(r.begin(), r.end());
        std::printf("| %d | %zu | %.2f | %.2f | %.2f |\n", gpus, r.size(), r[r.size() / 2],
                    r.front(), r.back());
    }
    return 0;
}
