#pragma once

#include <filesystem>
#include <string>

namespace pipewright::backend {

// A digest of a file's contents (64-bit FNV-1a, as hex): equal files, equal
// digests, wherever they lie; "unreadable" when the file cannot be read.
// It tells a changed or swapped file, not a forged one (TorchScript files
// are trusted code anyway).
[[nodiscard]] std::string file_digest(const std::filesystem::path& file);

}  // namespace pipewright::backend
