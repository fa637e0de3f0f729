#pragma once

// The one way Pipewright reads its JSON files (project, timeline, profile,
// device catalog, layer hyper-parameters) once json_parse.h has made a
// document of the text. A value knows its JSON path, so every problem is
// reported as "path: problem" in the same words in every file:
//
//   model.layers[3].type: expected a string, got the number 7
//   layers[2].forward_ms: must be a number from 0 to 1000000000, got -1
//   training.optimzer: unknown field (expected one of: batch_size, ...)
//
// Problems are collected, not thrown, so that a broken file is reported in
// one pass; a getter that finds a problem returns nothing and the caller
// keeps its default. A reader for a new file format (e.g. a run folder's
// metrics) is a function of a JsonValue: see profile.cpp for a small one.

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipewright/core/diagnostics.h"

namespace pipewright {

// Past this many problems the rest of a broken file adds nothing useful (and
// a file of a million bad events would otherwise make a million lines).
inline constexpr std::size_t kMaxJsonProblems = 50;

// How a value is named after "got": the number 7, the string "7", null,
// true, an array [1, 2], an object {"a":1}; long values are shortened.
[[nodiscard]] std::string describe_json(const nlohmann::json& value);

// A limit in a message: "1048576", "0.001", "1e-06".
[[nodiscard]] std::string show_limit(double value);

// The numbers a field accepts. Bounds keep later sums and products finite;
// an exclusive minimum keeps a divisor (a learning rate, a bandwidth) from
// being zero.
struct NumberRange {
    double min = 0;
    double max = 1e15;
    bool exclusive_min = false;
};

enum class Need { required, optional };

class JsonObject;

// One value of a document and where it is. Cheap to copy: it refers to the
// document and to the caller's Diagnostics, both of which must outlive it.
class JsonValue {
  public:
    JsonValue(const nlohmann::json& value, std::string path, Diagnostics& diagnostics);

    [[nodiscard]] const nlohmann::json& json() const { return *value_; }
    [[nodiscard]] const std::string& path() const { return path_; }
    // The path as a message shows it: "(document)" for the whole document.
    [[nodiscard]] std::string where() const;
    [[nodiscard]] Diagnostics& diagnostics() const { return *diagnostics_; }

    // Reports "path: message" (nothing past kMaxJsonProblems).
    void error(const std::string& message) const;
    // Whether the problem limit is reached: loops over large arrays stop.
    [[nodiscard]] bool full() const;

    [[nodiscard]] std::optional<std::string> string() const;
    [[nodiscard]] std::optional<double> number(NumberRange range = {}) const;
    // Whole numbers only (not 2.0): counts and sizes are written as such.
    [[nodiscard]] std::optional<std::int64_t> integer(std::int64_t min, std::int64_t max) const;
    [[nodiscard]] std::optional<bool> boolean() const;
    // One of a few strings, e.g. {{"mse", Loss::mse}, {"cross_entropy", ...}}:
    // `must be "mse" or "cross_entropy", got "l1"`.
    template <typename T>
    [[nodiscard]] std::optional<T> one_of(
        std::initializer_list<std::pair<std::string_view, T>> choices) const;

    // Whether it is an array (reported when not); then size() and element(i).
    [[nodiscard]] bool array() const;
    [[nodiscard]] std::size_t size() const;
    [[nodiscard]] JsonValue element(std::size_t i) const;
    // The value as an object; check ok() on the result (reported when not).
    [[nodiscard]] JsonObject object() const;

  private:
    void type_error(const char* expected) const;
    void choice_error(const std::vector<std::string_view>& names, const std::string& got) const;

    const nlohmann::json* value_;
    std::string path_;
    Diagnostics* diagnostics_;
};

// An object of a document, read field by field.
class JsonObject {
  public:
    // Reports the value when it is not an object; ok() says which.
    explicit JsonObject(const JsonValue& value);
    // The whole document (path "(document)" in messages).
    JsonObject(const nlohmann::json& document, Diagnostics& diagnostics);

    [[nodiscard]] bool ok() const { return ok_; }
    [[nodiscard]] const JsonValue& value() const { return value_; }
    [[nodiscard]] const std::string& path() const { return value_.path(); }
    [[nodiscard]] std::string field_path(std::string_view key) const;
    [[nodiscard]] bool has(std::string_view key) const;

    // The field as a value, or nothing when absent (reported as "missing"
    // when required).
    [[nodiscard]] std::optional<JsonValue> field(std::string_view key, Need need) const;

    // Typed fields; a required one that is absent reads "missing (a string
    // is required)".
    [[nodiscard]] std::optional<std::string> string(std::string_view key, Need need) const;
    [[nodiscard]] std::optional<double> number(std::string_view key, Need need,
                                               NumberRange range = {}) const;
    [[nodiscard]] std::optional<std::int64_t> integer(std::string_view key, Need need,
                                                      std::int64_t min, std::int64_t max) const;
    [[nodiscard]] std::optional<bool> boolean(std::string_view key, Need need) const;
    template <typename T>
    [[nodiscard]] std::optional<T> one_of(
        std::string_view key, Need need,
        std::initializer_list<std::pair<std::string_view, T>> choices) const;
    // The field when it is an array (reported otherwise).
    [[nodiscard]] std::optional<JsonValue> array(std::string_view key, Need need) const;
    // The field when it is an object (reported otherwise).
    [[nodiscard]] std::optional<JsonObject> object(std::string_view key, Need need) const;

    // `"format": "<format>", "version": <version>`, as every Pipewright file
    // begins. False (with the problem reported) when the document is not
    // that kind of file or not that version: the caller should read no
    // further, since the rest of another file's fields would only be noise.
    [[nodiscard]] bool expect_format(std::string_view format, std::int64_t version) const;

    // Reports each key that is not in `known` (a typo would otherwise be
    // ignored silently).
    void reject_unknown(std::initializer_list<std::string_view> known) const;

    void error(std::string_view key, const std::string& message) const;

  private:
    [[nodiscard]] std::optional<JsonValue> typed_field(std::string_view key, Need need,
                                                       const char* kind) const;

    JsonValue value_;
    bool ok_ = false;
};

template <typename T>
std::optional<T> JsonValue::one_of(
    std::initializer_list<std::pair<std::string_view, T>> choices) const {
    auto text = string();
    if (!text) {
        return std::nullopt;
    }
    std::vector<std::string_view> names;
    for (const auto& [name, value] : choices) {
        if (name == *text) {
            return value;
        }
        names.push_back(name);
    }
    choice_error(names, *text);
    return std::nullopt;
}

template <typename T>
std::optional<T> JsonObject::one_of(
    std::string_view key, Need need,
    std::initializer_list<std::pair<std::string_view, T>> choices) const {
    auto v = typed_field(key, need, "a string");
    return v ? v->one_of(choices) : std::nullopt;
}

}  // namespace pipewright
