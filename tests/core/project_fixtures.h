#pragma once

// The dummy example as JSON and shortcuts to parse it, for the core tests.

#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "diagnostic_matchers.h"
#include "pipewright/core/project_io.h"

namespace pipewright::testing {

inline nlohmann::json dummy_json() {
    return nlohmann::json::parse(read_text_file(std::filesystem::path(PIPEWRIGHT_ASSETS_DIR) /
                                                "examples" / "dummy-2gpu.json"));
}

inline Diagnostics diagnose(const nlohmann::json& j) {
    Diagnostics d;
    (void)project_from_json(j, d);
    return d;
}

inline Project parse_ok(const nlohmann::json& j) {
    Diagnostics d;
    auto p = project_from_json(j, d);
    EXPECT_TRUE(d.empty()) << d.format();
    EXPECT_TRUE(p.has_value());
    return p.value_or(Project{});
}

}  // namespace pipewright::testing
