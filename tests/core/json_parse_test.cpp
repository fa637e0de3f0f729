// Untrusted JSON (issue 18): nesting is bounded before anything deep is built,
// and a key given twice is reported like an unknown key, never silently kept.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "pipewright/core/json_parse.h"
#include "pipewright/core/project_io.h"
#include "project_fixtures.h"

namespace pipewright {
namespace {

using testing::contains;
using testing::has_diagnostic;

std::string nested_arrays(int depth) {
    return std::string(static_cast<std::size_t>(depth), '[') +
           std::string(static_cast<std::size_t>(depth), ']');
}

std::string dummy_text() {
    return testing::dummy_json().dump(2);
}

TEST(JsonParse, SixtyThousandLevelsAreRefusedWithTheLimit) {
    // Before the limit, building the message and copying the value recursed
    // 60,000 deep and crashed with SIGSEGV.
    const ParsedJson parsed = parse_json(nested_arrays(60'000));
    EXPECT_FALSE(parsed.value.has_value());
    EXPECT_TRUE(has_diagnostic(parsed.problems, "(document)", {"nested deeper than 64 levels"}));
}

TEST(JsonParse, TheLimitIsExactlySixtyFourLevels) {
    EXPECT_TRUE(parse_json(nested_arrays(kMaxJsonDepth)).problems.empty());
    EXPECT_FALSE(parse_json(nested_arrays(kMaxJsonDepth + 1)).value.has_value());
}

TEST(JsonParse, DeepNestingInsideALayerParameterIsAProjectProblem) {
    std::string text = dummy_text();
    const std::string anchor = "\"in_features\": 20";
    const auto at = text.find(anchor);
    ASSERT_NE(at, std::string::npos);
    text.replace(at, anchor.size(), "\"in_features\": " + nested_arrays(60'000));
    const LoadedProject loaded = parse_project_text(text);
    EXPECT_FALSE(loaded.project.has_value());
    EXPECT_TRUE(has_diagnostic(loaded.diagnostics, "(document)", {"64 levels"}));
}

TEST(JsonParse, DuplicateKeysAreReportedWithTheirPath) {
    const ParsedJson parsed =
        parse_json(R"({"a": {"b": 1, "b": 2}, "list": [{"x": 1}, {"x": 1, "x": 2}], "c": 1,
                       "c": {}})");
    ASSERT_TRUE(parsed.value.has_value());
    EXPECT_EQ(parsed.problems.size(), 3U) << parsed.problems.format();
    EXPECT_TRUE(has_diagnostic(parsed.problems, "a.b", {"appears twice"}));
    EXPECT_TRUE(has_diagnostic(parsed.problems, "list[1].x", {"appears twice"}));
    EXPECT_TRUE(has_diagnostic(parsed.problems, "c", {"appears twice"}));
}

TEST(JsonParse, TheSameKeyInDifferentObjectsIsFine) {
    const ParsedJson parsed = parse_json(R"([{"a": 1}, {"a": 2}, {"b": {"a": 3}, "a": 4}])");
    EXPECT_TRUE(parsed.problems.empty()) << parsed.problems.format();
}

TEST(JsonParse, DuplicateBatchSizeInAProjectIsReported) {
    std::string text = dummy_text();
    const std::string anchor = "\"batch_size\": 32";
    const auto at = text.find(anchor);
    ASSERT_NE(at, std::string::npos);
    text.replace(at, anchor.size(), "\"batch_size\": 64, \"batch_size\": 32");
    const LoadedProject loaded = parse_project_text(text);
    EXPECT_TRUE(has_diagnostic(loaded.diagnostics, "training.batch_size", {"appears twice"}));
}

TEST(JsonParse, TwoTrainingObjectsAreReported) {
    std::string text = dummy_text();
    const auto last = text.rfind('}');
    text.insert(last, ", \"training\": {\"batch_size\": 8}\n");
    const LoadedProject loaded = parse_project_text(text);
    EXPECT_TRUE(has_diagnostic(loaded.diagnostics, "training", {"appears twice"}));
}

TEST(JsonParse, ParsingIsLinearInTheNumberOfObjects) {
    // nlohmann's parser callback scans the enclosing array at every object's
    // end: 200,000 events would take minutes. Built by parse_json, well
    // under a second; the bound leaves room for sanitizers and busy machines.
    std::string text = "[";
    for (int i = 0; i < 200'000; ++i) {
        text += i == 0 ? "{\"a\": 1}" : ", {\"a\": 1}";
    }
    text += "]";
    const auto start = std::chrono::steady_clock::now();
    const ParsedJson parsed = parse_json(text);
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
    ASSERT_TRUE(parsed.value.has_value());
    EXPECT_EQ(parsed.value->size(), 200'000U);
}

TEST(JsonParse, SyntaxErrorsStillNameLineAndColumn) {
    const ParsedJson parsed = parse_json("{\n  \"a\": 1,\n  oops\n}");
    EXPECT_FALSE(parsed.value.has_value());
    ASSERT_EQ(parsed.problems.size(), 1U);
    EXPECT_TRUE(contains(parsed.problems.items()[0].message, "line 3")) << parsed.problems.format();
}

TEST(JsonParse, SyntaxErrorsSayWhatWasExpectedWithoutTheParsersDecorations) {
    const ParsedJson parsed = parse_json("{\n  \"layers\": [ }\n}");
    ASSERT_EQ(parsed.problems.size(), 1U);
    EXPECT_EQ(parsed.problems.items()[0].message,
              "not valid JSON at line 2, column 15: unexpected '}'; expected '[', '{', or a "
              "literal");
    // A line break inside a string: said in words, not as "<U+000A>" text.
    const ParsedJson broken = parse_json("{\"name\": \"two\nlines\"}");
    ASSERT_EQ(broken.problems.size(), 1U);
    const std::string& message = broken.problems.items()[0].message;
    EXPECT_EQ(message.find("<U+"), std::string::npos) << message;
    EXPECT_EQ(message.find("json.exception"), std::string::npos) << message;
    EXPECT_TRUE(contains(message,
                         "not valid JSON at line 1, column 14: invalid string: control "
                         "character U+000A (LF) must be escaped"))
        << message;
}

}  // namespace
}  // namespace pipewright
