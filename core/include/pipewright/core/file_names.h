#pragma once

// Names that come from a project file (the model's name) become parts of
// paths, such as a run's folder. A project is untrusted input: its names must
// never climb out of the folder they are meant for, nor carry control bytes
// into a file name.

#include <string>
#include <string_view>

namespace pipewright {

// `name` made safe as one path component: ASCII letters, digits, '-' and '_'
// kept, every other byte (including '/', '.', NUL and all non-ASCII) becomes
// '_', at most 64 bytes; "run" when nothing is left.
[[nodiscard]] std::string safe_file_stem(std::string_view name);

}  // namespace pipewright
