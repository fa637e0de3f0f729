#pragma once

// Writes JSON text piece by piece, byte for byte as nlohmann::json::dump()
// (compact) writes the same values, so that streamed outputs read and
// compare exactly like the documents they replace.

#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "pipewright/core/output_file.h"

namespace pipewright::detail {

// Whether a double is a whole number a JSON integer holds exactly (up to
// 2^53): timelines write those as integers ("bytes": 81920).
inline bool is_exact_integer(double v) {
    constexpr double kMaxExactInteger = 9007199254740992.0;
    return std::isfinite(v) && std::floor(v) == v && std::fabs(v) <= kMaxExactInteger;
}

class JsonTextWriter {
  public:
    explicit JsonTextWriter(TextSink& sink) : sink_(sink) { buffer_.reserve(kFlushBytes + 1024); }

    // Text as is: punctuation, keys and strings known to need no escaping.
    JsonTextWriter& raw(std::string_view text) {
        buffer_.append(text);
        return *this;
    }
    // A double as nlohmann writes one (shortest round trip, "1.0" for whole
    // numbers, null when not finite).
    JsonTextWriter& number(double v) {
        if (!std::isfinite(v)) {
            return raw("null");
        }
        std::array<char, 64> digits{};
        char* end = nlohmann::detail::to_chars(digits.data(), digits.data() + digits.size(), v);
        buffer_.append(digits.data(), end);
        return *this;
    }
    JsonTextWriter& integer(std::int64_t v) {
        std::array<char, 24> digits{};
        const auto result = std::to_chars(digits.data(), digits.data() + digits.size(), v);
        buffer_.append(digits.data(), result.ptr);
        return *this;
    }
    // Any string, escaped as nlohmann escapes it (throws on invalid UTF-8).
    JsonTextWriter& string(const std::string& s) { return raw(nlohmann::json(s).dump()); }

    // Hands what is gathered to the sink once it is large enough; call
    // between records.
    void maybe_flush() {
        if (buffer_.size() >= kFlushBytes) {
            flush();
        }
    }
    void flush() {
        sink_.write(buffer_);
        buffer_.clear();
    }
    [[nodiscard]] std::size_t pending() const { return buffer_.size(); }

  private:
    static constexpr std::size_t kFlushBytes = 256 * 1024;
    TextSink& sink_;
    std::string buffer_;
};

}  // namespace pipewright::detail
