#include "torchscript/file_digest.h"

#include <array>
#include <cstdint>
#include <cstdio>
#include <fstream>

namespace pipewright::backend {

std::string file_digest(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) {
        return "unreadable";
    }
    std::uint64_t h = 0xcbf29ce484222325ULL;
    std::array<char, 1 << 16> buffer{};
    while (in.read(buffer.data(), buffer.size()) || in.gcount() > 0) {
        for (std::streamsize i = 0; i < in.gcount(); ++i) {
            h ^= static_cast<unsigned char>(buffer[static_cast<std::size_t>(i)]);
            h *= 0x100000001b3ULL;
        }
    }
    std::array<char, 17> hex{};
    std::snprintf(hex.data(), hex.size(), "%016llx", static_cast<unsigned long long>(h));
    return hex.data();
}

}  // namespace pipewright::backend
