#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pipewright {

// Element types of tensors. Compute precision of training and the model input
// type are both expressed with it.
enum class DType { float32, float16, bfloat16, int64 };

[[nodiscard]] int dtype_bytes(DType t);
[[nodiscard]] std::string_view to_string(DType t);
[[nodiscard]] std::optional<DType> parse_dtype(std::string_view s);

// Shape of one sample (the batch dimension is never included).
using Shape = std::vector<std::int64_t>;

[[nodiscard]] std::int64_t numel(const Shape& s);
// "[3, 128, 128]"
[[nodiscard]] std::string to_string(const Shape& s);

}  // namespace pipewright
