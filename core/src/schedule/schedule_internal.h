#pragma once

// Helpers shared by the schedule sources; not part of the public API.

#include <cstddef>
#include <string>

#include "pipewright/core/schedule.h"

namespace pipewright::detail {

inline constexpr int kActionTypeCount = 11;

// The rank running `stage`, or -1 when the stage is outside the pipeline, so
// that malformed hand-written schedules never index out of bounds.
inline int rank_of_stage(const Schedule& s, int stage) {
    if (stage < 0 || static_cast<std::size_t>(stage) >= s.stage_rank.size()) {
        return -1;
    }
    return s.stage_rank[static_cast<std::size_t>(stage)];
}

// "1 micro-batch", "4 micro-batches": messages name numbers in plain words.
inline std::string count_of(long long n, const std::string& singular, const std::string& plural) {
    return std::to_string(n) + " " + (n == 1 ? singular : plural);
}

}  // namespace pipewright::detail
