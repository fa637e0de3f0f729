#pragma once

// Names in a project (model, layers, devices) and JSON keys are untrusted
// text. Printed raw, a NUL, a newline or an escape sequence could forge lines
// or drive the user's terminal; every message that shows one escapes it.

#include <string>
#include <string_view>

namespace pipewright {

// `text` with every control character shown as an escape a reader can type:
// "\n", "\r", "\t", "\\0" for NUL, "\x1b" for ESC and other C0 bytes, "\x7f",
// and "\u009b" for the C1 controls encoded in UTF-8. Everything else,
// including other UTF-8 text, is unchanged.
[[nodiscard]] std::string printable_name(std::string_view text);

// The same for a multi-line message of ours that quotes names: line breaks
// are kept, every other control character is escaped.
[[nodiscard]] std::string printable_text(std::string_view text);

}  // namespace pipewright
