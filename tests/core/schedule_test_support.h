#pragma once

// Helpers for the schedule generator tests: placements, and expectations on
// action lists and on the errors of rejected configurations.

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "pipewright/core/schedule_generators.h"

namespace pipewright::testing {

inline std::string join(const std::vector<Action>& actions) {
    std::string out;
    for (const auto& a : actions) {
        out += (out.empty() ? "" : " ") + to_string(a);
    }
    return out;
}

// Stage s on device s.
inline std::vector<int> straight(int p) {
    std::vector<int> v(static_cast<std::size_t>(p));
    for (int i = 0; i < p; ++i) {
        v[static_cast<std::size_t>(i)] = i;
    }
    return v;
}

// `chunks` stages per device, stage s on device s mod p.
inline std::vector<int> looped(int p, int chunks) {
    std::vector<int> v;
    for (int i = 0; i < p * chunks; ++i) {
        v.push_back(i % p);
    }
    return v;
}

// Down the p devices and back: stage s and stage 2p-1-s on device s.
inline std::vector<int> v_shape(int p) {
    std::vector<int> v;
    for (int s = 0; s < 2 * p; ++s) {
        v.push_back(s < p ? s : 2 * p - 1 - s);
    }
    return v;
}

// A placement over p devices that `info` accepts: one stage per device, a V
// for ZB-V and DualPipeV, two stages per device in a loop for the other multi-stage ones.
inline std::vector<int> placement_for(const ScheduleInfo& info, int p) {
    if (info.kind == ScheduleKind::zbv || info.kind == ScheduleKind::dualpipev) {
        return v_shape(p);
    }
    return info.multiple_stages_per_rank ? looped(p, 2) : straight(p);
}

inline void expect_ranks(const Schedule& s, std::initializer_list<const char*> expected) {
    ASSERT_EQ(s.ranks.size(), expected.size());
    std::size_t r = 0;
    for (const char* line : expected) {
        EXPECT_EQ(join(s.ranks[r]), line) << s.name << " rank " << r;
        ++r;
    }
}

// Expects a ScheduleError whose message contains every fragment.
inline void expect_error(std::string_view name, const std::vector<int>& stage_rank, int m,
                         std::initializer_list<const char*> fragments) {
    try {
        (void)generate_schedule(name, stage_rank, m);
        ADD_FAILURE() << name << " did not throw";
    } catch (const ScheduleError& e) {
        const std::string message = e.what();
        for (const char* f : fragments) {
            EXPECT_NE(message.find(f), std::string::npos) << "\"" << f << "\" not in: " << message;
        }
    }
}

}  // namespace pipewright::testing
