#include "pipewright/core/tensor.h"

namespace pipewright {

int dtype_bytes(DType t) {
    switch (t) {
        case DType::float32:
            return 4;
        case DType::float16:
        case DType::bfloat16:
            return 2;
        case DType::int64:
            return 8;
    }
    return 4;
}

std::string_view to_string(DType t) {
    switch (t) {
        case DType::float32:
            return "float32";
        case DType::float16:
            return "float16";
        case DType::bfloat16:
            return "bfloat16";
        case DType::int64:
            return "int64";
    }
    return "float32";
}

std::optional<DType> parse_dtype(std::string_view s) {
    if (s == "float32" || s == "fp32") {
        return DType::float32;
    }
    if (s == "float16" || s == "fp16") {
        return DType::float16;
    }
    if (s == "bfloat16" || s == "bf16") {
        return DType::bfloat16;
    }
    if (s == "int64") {
        return DType::int64;
    }
    return std::nullopt;
}

std::int64_t numel(const Shape& s) {
    std::int64_t n = 1;
    for (auto d : s) {
        n *= d;
    }
    return n;
}

std::string to_string(const Shape& s) {
    std::string out = "[";
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (i > 0) {
            out += ", ";
        }
        out += std::to_string(s[i]);
    }
    return out + "]";
}

}  // namespace pipewright
