#pragma once

// Helpers of the planner's tests (planner_test.cpp, planner_exact_test.cpp).

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pipewright/core/analysis.h"
#include "pipewright/sim/simulation.h"

namespace pipewright::testing {

inline SimulationReport simulate(const Project& project) {
    Diagnostics problems;
    auto analyzed = analyze_project(project, {}, problems);
    EXPECT_TRUE(problems.empty()) << problems.format();
    return simulate_project(*analyzed);
}

inline std::vector<std::string> layer_names(const Project& p) {
    std::vector<std::string> names;
    for (const auto& l : p.model.layers) {
        names.push_back(l.name);
    }
    return names;
}

}  // namespace pipewright::testing
