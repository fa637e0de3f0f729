#pragma once

// The ranges Pipewright accepts for physical quantities in its input files
// (projects, device catalogs, profiles) and on the command line. Each bound is
// far beyond any real hardware or model, and far enough inside what doubles
// and 64-bit byte counts hold that sums and products over every layer,
// micro-batch and device stay exact and finite: a tiny bandwidth would make a
// transfer take forever ("inf min"), a huge memory size would wrap a byte
// count negative. docs/project-format.md lists them.

#include <cstdint>

namespace pipewright::limits {

inline constexpr double kMaxMemoryGiB = 1024.0 * 1024.0;  // 1 PiB per device
inline constexpr double kMinMemoryGiB = 0.001;            // about 1 MiB
inline constexpr double kMinPeakTflops = 1e-6;            // 1 MFLOP/s
inline constexpr double kMaxPeakTflops = 1e6;             // 1 ZFLOP/s
inline constexpr double kMinBandwidthGBps = 1e-3;         // 1 MB/s
inline constexpr double kMaxBandwidthGBps = 1e6;          // 1 PB/s
inline constexpr double kMaxLatencyUs = 1e9;              // 1000 s
inline constexpr double kMinLinkEfficiency = 0.01;
inline constexpr double kMaxMilliseconds = 1e9;  // 11.6 days per layer
// Bytes one layer keeps per micro-batch: 1 TB (also the largest whole number
// a project field takes).
inline constexpr std::int64_t kMaxActivationBytes = 1'000'000'000'000;

}  // namespace pipewright::limits
