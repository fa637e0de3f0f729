// Checks the kernel cost model's GEMM pricing against measured GEMM
// throughput: XLA's tables of H100 and B200 GEMMs by shape (bench/data/,
// Apache-2.0, The OpenXLA Authors; dtype bf16, f32 or fp8). Kernel-level data, none of it used to
// choose the model's constants. Prints, per size class, the median and the spread of predicted /
// measured time.
//
//   gemm_model_check bench/data/xla_matmul_h100.csv H100-SXM
//   gemm_model_check bench/data/xla_matmul_b200_fp8.csv B200
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "csv_cells.h"
#include "pipewright/core/device_catalog.h"
#include "pipewright/sim/kernel_cost.h"

namespace {

double quantile(std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    const double at = q * static_cast<double>(v.size() - 1);
    const auto lo = static_cast<std::size_t>(std::floor(at));
    const auto hi = static_cast<std::size_t>(std::ceil(at));
    return v[lo] + (v[hi] - v[lo]) * (at - static_cast<double>(lo));
}

}  // namespace

int main(int argc, char** argv) {
    using namespace pipewright;
    if (argc != 3) {
        std::fprintf(stderr, "usage: gemm_model_check TABLE.csv DEVICE\n");
        return 2;
    }
    const DeviceSpec* device = DeviceCatalog::builtin().find(argv[2]);
    if (device == nullptr) {
        std::fprintf(stderr, "gemm_model_check: no device \"%s\" in the catalog\n", argv[2]);
        return 2;
    }
    std::ifstream in(argv[1]);
    if (!in) {
        std::fprintf(stderr, "gemm_model_check: cannot read %s\n", argv[1]);
        return 2;
    }
    // Ratios by dtype and by the GEMM's FLOPs (decades).
    std::map<std::string, std::map<int, std::vector<double>>> ratios;
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#' || line.rfind("b,", 0) == 0) {
            continue;
        }
        const std::vector<std::string> cells = csv_cells(line);
        if (cells.size() != 6) {
            continue;
        }
        const double b = std::stod(cells[0]), m = std::stod(cells[1]), n = std::stod(cells[2]),
                     k = std::stod(cells[3]), measured_flops = std::stod(cells[5]);
        const std::string& dtype = cells[4];
        // XLA's "f32" GEMMs run on TF32 tensor cores (they exceed the FP32
        // peak); its "fp8" ones take FP8 operands and write bfloat16, as an
        // FP8 linear layer's GEMMs do.
        const bool fp8 = dtype == "fp8";
        const DType t = dtype == "f32" ? DType::float32 : DType::bfloat16;
        Kernel g = gemm_kernel("gemm", b, m, n, k, dtype_bytes(t));
        g.tf32 = dtype == "f32";
        g.fp8 = fp8;
        const double predicted = kernel_time(g, *device, t).seconds;
        const double measured = g.flops / measured_flops;
        const int decade = static_cast<int>(std::floor(std::log10(g.flops)));
        ratios[dtype][decade].push_back(predicted / measured);
        ratios[dtype][0].push_back(predicted / measured);
    }
    std::printf(
        "| dtype | GEMM FLOPs | shapes | predicted / measured time: median | 10th | 90th |\n");
    std::printf("|---|---|---|---|---|---|\n");
    for (const auto& [dtype, by_size] : ratios) {
        for (const auto& [decade, r] : by_size) {
            const std::string size =
                decade == 0 ? std::string("all")
                            : "1e" + std::to_string(decade) + "–1e" + std::to_string(decade + 1);
            std::printf("| %s | %s | %zu | %.2f | %.2f | %.2f |\n", dtype.c_str(), size.c_str(),
                        r.size(), quantile(r, 0.5), quantile(r, 0.1), quantile(r, 0.9));
        }
    }
    return 0;
}
