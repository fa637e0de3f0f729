#pragma once

// Reads one JSON object field by field, reporting every problem with its path
// instead of throwing, so a malformed file yields a complete list of errors.

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "pipewright/core/diagnostics.h"

namespace pipewright::detail {

class ObjectReader {
  public:
    static constexpr double kMaxNumber = 1e15;
    static constexpr std::int64_t kMaxInteger = 1'000'000'000'000;

    ObjectReader(const nlohmann::json& j, std::string path, Diagnostics& diagnostics);

    [[nodiscard]] bool is_object() const { return object_ != nullptr; }
    [[nodiscard]] const std::string& path() const { return path_; }
    [[nodiscard]] std::string field_path(const std::string& key) const;
    [[nodiscard]] bool has(const std::string& key) const;
    [[nodiscard]] const nlohmann::json* get(const std::string& key) const;

    std::optional<std::string> string(const std::string& key, bool required);
    // Finite numbers only; `max` bounds what later sums and products meet.
    std::optional<double> number(const std::string& key, bool required, double min_exclusive,
                                 double max = kMaxNumber);
    std::optional<double> non_negative(const std::string& key, bool required,
                                       double max = kMaxNumber);
    // From `min` to `max`, both included (a positive minimum keeps a divisor
    // such as a bandwidth from making a time infinite).
    std::optional<double> in_range(const std::string& key, bool required, double min, double max);
    // Whole numbers; fields stored as int pass INT_MAX as `max`.
    std::optional<std::int64_t> integer(const std::string& key, bool required, std::int64_t min,
                                        std::int64_t max = kMaxInteger);
    std::optional<bool> boolean(const std::string& key);
    const nlohmann::json* array(const std::string& key, bool required);
    const nlohmann::json* object(const std::string& key, bool required);

    // Reports keys that are not in `known` (typos would otherwise be ignored).
    void reject_unknown(std::initializer_list<const char*> known);

    void error(const std::string& key, const std::string& message);

  private:
    const nlohmann::json* object_ = nullptr;
    std::string path_;
    Diagnostics& diagnostics_;
};

// "[1, 2]" for a JSON value in a message, shortened when long.
[[nodiscard]] std::string describe(const nlohmann::json& value);

// A limit in a message: "1048576", "0.001", "1e-06".
[[nodiscard]] std::string show_limit(double value);

}  // namespace pipewright::detail
