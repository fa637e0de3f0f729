#pragma once
// A device calibration of the catalog's "cpu" measured on a machine of
// `cores` cores with `threads` Torch threads: GEMMs at 50 GFLOP/s, copies at
// 20 GB/s. Shared by the simulation's and the studio's tests of CPU ranks
// that take turns on the calibrated cores.
#include <cstdint>

#include "pipewright/core/device_calibration.h"

namespace pipewright {

inline DeviceCalibration cpu_calibration(int cores, int threads) {
    DeviceCalibration c;
    c.spec = "cpu";
    c.device_kind = "cpu";
    c.device_name = "CPU";
    c.dtype = DType::float32;
    c.cores = cores;
    c.threads = threads;
    c.launch_seconds = 2e-6;
    for (std::int64_t m : {64, 1024}) {
        for (std::int64_t n : {64, 1024}) {
            for (std::int64_t k : {64, 1024}) {
                c.gemms.push_back({m, n, k, 2.0 * static_cast<double>(m * n * k) / 50e9});
            }
        }
    }
    c.copies = {{1 << 26, 2.0 * (1 << 26) / 20e9}};
    return c;
}

}  // namespace pipewright
