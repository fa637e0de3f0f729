#include "pipewright/core/gemm_correction.h"

#include <algorithm>
#include <cmath>

namespace pipewright {
namespace {

// The grid cell holding `x` along one dimension: lower index and the weight
// of the upper point, in log space; held at the edges.
std::pair<std::size_t, double> locate(const std::vector<double>& grid, double x) {
    if (grid.size() < 2 || x <= grid.front()) {
        return {0, 0.0};
    }
    if (x >= grid.back()) {
        return {grid.size() - 2, 1.0};
    }
    const auto upper = std::upper_bound(grid.begin(), grid.end(), x);
    const std::size_t lo = static_cast<std::size_t>(upper - grid.begin()) - 1;
    const double span = std::log(grid[lo + 1]) - std::log(grid[lo]);
    return {lo, span > 0 ? (std::log(x) - std::log(grid[lo])) / span : 0.0};
}

}  // namespace

double GemmCorrection::ratio(double mv, double nv, double kv) const {
    if (m.empty() || n.empty() || k.empty() || log_ratio.size() != m.size() * n.size() * k.size()) {
        return 1;
    }
    const auto [a, wa] = locate(m, mv);
    const auto [b, wb] = locate(n, nv);
    const auto [c, wc] = locate(k, kv);
    const auto at = [&](std::size_t i, std::size_t j, std::size_t l) {
        i = std::min(i, m.size() - 1);
        j = std::min(j, n.size() - 1);
        l = std::min(l, k.size() - 1);
        return log_ratio[(i * n.size() + j) * k.size() + l];
    };
    double sum = 0;
    for (int da = 0; da < 2; ++da) {
        for (int db = 0; db < 2; ++db) {
            for (int dc = 0; dc < 2; ++dc) {
                const double w = (da ? wa : 1 - wa) * (db ? wb : 1 - wb) * (dc ? wc : 1 - wc);
                if (w > 0) {
                    sum += w * at(a + da, b + db, c + dc);
                }
            }
        }
    }
    return std::exp(sum);
}

}  // namespace pipewright
