#include "pipewright/core/json_reader.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

namespace pipewright {
namespace {

using nlohmann::json;

// What reading `doc` with `read` reports, one "path: problem" a line.
template <typename Read>
std::string problems(const json& doc, Read read) {
    Diagnostics d;
    read(JsonObject(doc, d));
    return d.format();
}

TEST(JsonReader, ValuesAreNamedWithTheirType) {
    EXPECT_EQ(describe_json(json(7)), "the number 7");
    EXPECT_EQ(describe_json(json(-0.5)), "the number -0.5");
    EXPECT_EQ(describe_json(json("7")), "the string \"7\"");
    EXPECT_EQ(describe_json(json(nullptr)), "null");
    EXPECT_EQ(describe_json(json(false)), "false");
    EXPECT_EQ(describe_json(json::array({1, 2})), "an array [1,2]");
    EXPECT_EQ(describe_json(json{{"a", 1}}), "an object {\"a\":1}");
    const std::string shown = describe_json(json(std::string(500, 'x')));
    EXPECT_LT(shown.size(), 80U) << shown;
    EXPECT_EQ(shown.substr(shown.size() - 3), "...");
    // Not valid UTF-8 (a document built by a program): shown, not thrown.
    EXPECT_NO_THROW((void)describe_json(json(std::string("\xff\xfe"))));
}

TEST(JsonReader, TypedFieldsSayWhatWasExpectedAndWhatCame) {
    const json doc = {{"layers", json::array({json{{"type", 7}}})},
                      {"n", "32"},
                      {"x", true},
                      {"flag", 1},
                      {"list", json::object()}};
    const std::string text = problems(doc, [](const JsonObject& r) {
        auto layers = r.array("layers", Need::required);
        ASSERT_TRUE(layers.has_value());
        (void)JsonObject(layers->element(0)).string("type", Need::required);
        (void)r.integer("n", Need::required, 1, 10);
        (void)r.number("x", Need::required);
        (void)r.boolean("flag", Need::required);
        (void)r.array("list", Need::required);
        (void)r.object("n", Need::optional);
        (void)r.string("absent", Need::required);
        (void)r.number("absent_too", Need::optional);
    });
    EXPECT_EQ(text,
              "layers[0].type: expected a string, got the number 7\n"
              "n: expected a whole number, got the string \"32\"\n"
              "x: expected a number, got true\n"
              "flag: expected true or false, got the number 1\n"
              "list: expected an array, got an object {}\n"
              "n: expected a JSON object, got the string \"32\"\n"
              "absent: missing (a string is required)");
}

TEST(JsonReader, RangesAreSaidWithTheValue) {
    const json doc = {{"ms", -1},           {"lr", 0},      {"big", 3000000000LL}, {"neg", -5},
                      {"huge", 1ULL << 63}, {"whole", 2.0}, {"ok", 0.25},          {"count", 4}};
    Diagnostics d;
    const JsonObject r(doc, d);
    EXPECT_FALSE(r.number("ms", Need::required, {0, 1e9}).has_value());
    EXPECT_FALSE(r.number("lr", Need::required, {0, 1e15, true}).has_value());
    EXPECT_FALSE(r.integer("big", Need::required, 1, std::numeric_limits<int>::max()));
    EXPECT_FALSE(r.integer("neg", Need::required, 0, 10));
    EXPECT_FALSE(r.integer("huge", Need::required, 0, std::numeric_limits<std::int64_t>::max()));
    EXPECT_FALSE(r.integer("whole", Need::required, 0, 10));
    EXPECT_EQ(r.number("ok", Need::required, {0, 1}), 0.25);
    EXPECT_EQ(r.integer("count", Need::required, 1, 4), 4);
    EXPECT_EQ(d.format(),
              "ms: must be a number from 0 to 1000000000, got -1\n"
              "lr: must be greater than 0, got 0\n"
              "big: must be at most 2147483647, got 3000000000\n"
              "neg: must be at least 0, got -5\n"
              "huge: must be at most 9223372036854775807, got 9223372036854775808\n"
              "whole: expected a whole number, got the number 2.0");
}

TEST(JsonReader, ProgramBuiltInfinitiesAreNotNumbers) {
    const json doc = {{"t", std::numeric_limits<double>::infinity()}};
    Diagnostics d;
    EXPECT_FALSE(JsonObject(doc, d).number("t", Need::required, {0, 1}).has_value());
    ASSERT_EQ(d.size(), 1U);
    EXPECT_EQ(d.items()[0].path, "t");
}

TEST(JsonReader, ChoicesListTheAllowedStrings) {
    enum class Kind { a, b, c };
    const json doc = {{"two", "x"}, {"three", "y"}, {"one", "b"}};
    Diagnostics d;
    const JsonObject r(doc, d);
    EXPECT_FALSE(r.one_of<Kind>("two", Need::required, {{"a", Kind::a}, {"b", Kind::b}}));
    EXPECT_FALSE(
        r.one_of<Kind>("three", Need::required, {{"a", Kind::a}, {"b", Kind::b}, {"c", Kind::c}}));
    EXPECT_EQ(r.one_of<Kind>("one", Need::required, {{"a", Kind::a}, {"b", Kind::b}}), Kind::b);
    EXPECT_EQ(d.format(),
              "two: must be \"a\" or \"b\", got \"x\"\n"
              "three: must be \"a\", \"b\" or \"c\", got \"y\"");
}

TEST(JsonReader, UnknownKeysAreReportedWithTheKnownOnes) {
    const json doc = {{"name", "x"}, {"nmae", "y"}};
    EXPECT_EQ(problems(doc,
                       [](const JsonObject& r) {
                           r.reject_unknown({"name", "type"});
                       }),
              "nmae: unknown field (expected one of: name, type)");
}

TEST(JsonReader, FormatAndVersionStopAnotherKindOfFile) {
    const auto check = [](const json& doc) {
        return problems(doc, [](const JsonObject& r) {
            EXPECT_FALSE(r.expect_format("pipewright-profile", 1));
        });
    };
    EXPECT_EQ(check(json{{"format", "pipewright-timeline"}, {"version", 1}}),
              "format: must be \"pipewright-profile\", got \"pipewright-timeline\"");
    EXPECT_EQ(check(json{{"format", "pipewright-profile"}, {"version", 2}}),
              "version: this Pipewright reads version 1 of pipewright-profile, got version 2");
    EXPECT_EQ(check(json{{"format", "pipewright-profile"}}),
              "version: missing (a whole number is required)");
    EXPECT_EQ(check(json{{"layers", 1}}),
              "format: missing: not a pipewright-profile file (it would say \"format\": "
              "\"pipewright-profile\")");
    EXPECT_EQ(check(json::array()), "(document): expected a JSON object, got an array []");
    Diagnostics d;
    EXPECT_TRUE(JsonObject(json{{"format", "pipewright-profile"}, {"version", 1}}, d)
                    .expect_format("pipewright-profile", 1));
    EXPECT_TRUE(d.empty());
}

TEST(JsonReader, ProblemsStopAtTheLimit) {
    json events = json::array();
    for (int i = 0; i < 1000; ++i) {
        events.push_back("not a number");
    }
    Diagnostics d;
    const JsonValue list(events, "events", d);
    ASSERT_TRUE(list.array());
    std::size_t read = 0;
    for (std::size_t i = 0; i < list.size() && !list.full(); ++i, ++read) {
        (void)list.element(i).number();
    }
    EXPECT_EQ(d.size(), kMaxJsonProblems);
    EXPECT_EQ(read, kMaxJsonProblems);
    EXPECT_EQ(d.items()[3].path, "events[3]");
}

}  // namespace
}  // namespace pipewright
