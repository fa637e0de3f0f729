#pragma once

// Estimates the size of a streamed document from a sample of its records,
// so that a command can refuse an output too large before writing it.

#include <cstdint>

#include "timeline/json_text.h"

namespace pipewright::detail {

// Records formatted to estimate a size: blocks of consecutive records spread
// over the document. Consecutive, not every k-th: a timeline repeats a
// pattern of actions (F, SEND_F, RECV_B, B, …), and a stride that is a
// multiple of its period samples one kind only (a 1F1B trace was estimated
// at 9.0 GiB for 5.6 GiB written).
inline constexpr std::size_t kSizeBlocks = 64;
inline constexpr std::size_t kSizeBlockRecords = 64;

// About the bytes of `count` records, formatting a sample of them with
// `format(writer, index)` and scaling up; exact when there are few.
template <typename Format>
std::uint64_t sampled_bytes(std::size_t count, Format&& format) {
    CountingSink counted;
    JsonTextWriter w(counted);
    constexpr std::size_t kSample = kSizeBlocks * kSizeBlockRecords;
    if (count <= kSample) {
        for (std::size_t i = 0; i < count; ++i) {
            format(w, i);
        }
        w.flush();
        return counted.bytes();
    }
    for (std::size_t b = 0; b < kSizeBlocks; ++b) {
        const std::size_t first = b * (count - kSizeBlockRecords) / (kSizeBlocks - 1);
        for (std::size_t i = first; i < first + kSizeBlockRecords; ++i) {
            format(w, i);
        }
    }
    w.flush();
    const double per_record = static_cast<double>(counted.bytes()) / static_cast<double>(kSample);
    return static_cast<std::uint64_t>(std::ceil(per_record * static_cast<double>(count)));
}

}  // namespace pipewright::detail
