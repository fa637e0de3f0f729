#pragma once

// A project written as JSON in a test, checked and analysed; a problem fails
// the test that asked.

#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "pipewright/core/analysis.h"
#include "pipewright/core/project_io.h"

namespace pipewright::testing {

inline AnalyzedProject analyzed_json(const nlohmann::json& j, const AnalysisOptions& options = {}) {
    Diagnostics d;
    auto project = project_from_json(j, d);
    EXPECT_TRUE(project) << d.format();
    auto analyzed = analyze_project(*project, options, d);
    EXPECT_TRUE(analyzed) << d.format();
    return *analyzed;
}

// One node "n" of one container "c" holding `devices` GPUs of catalog
// `spec`, named gpu0, gpu1, ... (the tensor-parallel group of a stage at
// n/c/gpu0).
inline nlohmann::json one_container_topology(const std::string& spec, int devices) {
    nlohmann::json list = nlohmann::json::array();
    for (int d = 0; d < devices; ++d) {
        list.push_back({{"name", "gpu" + std::to_string(d)}, {"spec", spec}});
    }
    return {{"nodes", {{{"name", "n"}, {"containers", {{{"name", "c"}, {"devices", list}}}}}}}};
}

}  // namespace pipewright::testing
