#pragma once

// Assertions on Diagnostics shared by the core tests.

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

#include "pipewright/core/diagnostics.h"

namespace pipewright::testing {

inline bool contains(const std::string& text, const std::string& fragment) {
    return text.find(fragment) != std::string::npos;
}

// Succeeds when some diagnostic has exactly `path` and a message holding every fragment.
inline ::testing::AssertionResult has_diagnostic(
    const Diagnostics& d, const std::string& path,
    std::initializer_list<std::string> fragments = {}) {
    for (const auto& item : d.items()) {
        if (item.path != path) {
            continue;
        }
        bool all = true;
        for (const auto& f : fragments) {
            all = all && contains(item.message, f);
        }
        if (all) {
            return ::testing::AssertionSuccess();
        }
    }
    std::string wanted;
    for (const auto& f : fragments) {
        wanted += " \"" + f + "\"";
    }
    return ::testing::AssertionFailure()
           << "no diagnostic at \"" << path << "\" containing" << wanted << "; got:\n"
           << d.format();
}

}  // namespace pipewright::testing
