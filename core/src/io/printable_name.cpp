#include "pipewright/core/printable_name.h"

#include <cstdio>

namespace pipewright {

namespace {

std::string escape(std::string_view text, bool keep_newlines) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        char buffer[8];
        if (c == '\n' && keep_newlines) {
            out += '\n';
        } else if (c == '\n') {
            out += "\\n";
        } else if (c == '\r') {
            out += "\\r";
        } else if (c == '\t') {
            out += "\\t";
        } else if (c == 0) {
            out += "\\0";
        } else if (c < 0x20 || c == 0x7f) {
            std::snprintf(buffer, sizeof buffer, "\\x%02x", c);
            out += buffer;
        } else if (c == 0xc2 && i + 1 < text.size() &&
                   static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
                   static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
            // U+0080..U+009F: C1 controls (U+009B is a one-byte CSI).
            std::snprintf(buffer, sizeof buffer, "\\u%04x",
                          static_cast<unsigned>(static_cast<unsigned char>(text[i + 1])));
            out += buffer;
            ++i;
        } else {
            out += static_cast<char>(c);
        }
    }
    return out;
}

}  // namespace

std::string printable_name(std::string_view text) {
    return escape(text, false);
}

std::string printable_text(std::string_view text) {
    return escape(text, true);
}

}  // namespace pipewright
