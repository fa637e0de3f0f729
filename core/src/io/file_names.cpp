#include "pipewright/core/file_names.h"

namespace pipewright {

std::string safe_file_stem(std::string_view name) {
    constexpr std::size_t kMaxBytes = 64;
    std::string out;
    for (const char c : name.substr(0, kMaxBytes)) {
        const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                          (c >= '0' && c <= '9') || c == '-' || c == '_';
        out += keep ? c : '_';
    }
    return out.empty() ? "run" : out;
}

}  // namespace pipewright
