#pragma once

// How far a device's measured GEMMs lie from the kernel cost model's price
// for them, over a grid of shapes: what a device calibration teaches the
// model (device_calibration.h). The simulator multiplies a GEMM's modelled
// time by ratio(m, n, k), so shapes between the measured ones get the
// correction of their neighbours and shapes beyond the grid that of its edge.

#include <vector>

#include "pipewright/core/tensor.h"

namespace pipewright {

struct GemmCorrection {
    DType dtype = DType::float32;  // the GEMMs measured; other dtypes are not corrected
    // The grid's values of each dimension, ascending, at least one each.
    std::vector<double> m;
    std::vector<double> n;
    std::vector<double> k;
    // log(measured / modelled) at (m[a], n[b], k[c]), index (a·|n| + b)·|k| + c.
    std::vector<double> log_ratio;

    // measured / modelled for C[m×n] = A[m×k]·B[k×n]: multilinear in
    // log m, log n and log k between grid points, held at the grid's edges.
    [[nodiscard]] double ratio(double m, double n, double k) const;

    bool operator==(const GemmCorrection&) const = default;
};

}  // namespace pipewright
