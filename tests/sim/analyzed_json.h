#pragma once

// A project written as JSON in a test, checked and analysed; a problem fails
// the test that asked.

#include <gtest/gtest.h>

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

}  // namespace pipewright::testing
