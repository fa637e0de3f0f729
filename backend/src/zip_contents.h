#pragma once

// What a zip archive (TorchScript modules and torch.save files are zips)
// unpacks to, read from its central directory before anything is loaded:
// a small file whose entries inflate to gigabytes is refused in words
// instead of filling the machine's memory.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace pipewright::backend {

// The sum of the entries' uncompressed sizes; nullopt when the file is not
// a zip archive (or its directory cannot be read: the loader says why).
[[nodiscard]] std::optional<std::uint64_t> zip_unpacked_bytes(const std::filesystem::path& file);

// Throws BackendError naming `what` (e.g. "the TorchScript file m.pt") when
// the archive unpacks to more than `available_bytes` (0: unknown, no check).
void check_unpacked_size(const std::filesystem::path& file, const std::string& what,
                         double available_bytes);

}  // namespace pipewright::backend
