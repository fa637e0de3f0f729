#pragma once

// What both halves of the profiler (layers and transfer) time with.

#include <algorithm>
#include <chrono>
#include <vector>

namespace pipewright::backend::profiling {

inline double now_s() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// Medians, not means: one burst of load from elsewhere moves a mean.
inline double median(std::vector<double> v) {
    if (v.empty()) {
        return 0;
    }
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace pipewright::backend::profiling
