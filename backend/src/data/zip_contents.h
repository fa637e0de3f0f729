#pragma once

// What a zip archive (TorchScript modules and torch.save files are zips)
// unpacks to, read from its central directory before anything is loaded:
// a small file whose entries inflate to gigabytes is refused in words
// instead of filling the machine's memory.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace pipewright::backend {

// One entry of an archive and where its bytes lie in the file.
struct ZipEntry {
    std::string name;
    std::uint16_t method = 0;        // 0: stored as is, 8: deflated
    std::uint64_t data_offset = 0;   // past the entry's local header
    std::uint64_t packed_bytes = 0;  // in the file
    std::uint64_t unpacked_bytes = 0;
};

// The archive's entries in directory order; nullopt when the file is not a
// zip archive (or its directory or a local header cannot be read, or an
// entry's bytes would lie past the end of the file).
[[nodiscard]] std::optional<std::vector<ZipEntry>> zip_entries(const std::filesystem::path& file);

// The sum of the entries' uncompressed sizes; nullopt when the file is not
// a zip archive (or its directory cannot be read: the loader says why).
[[nodiscard]] std::optional<std::uint64_t> zip_unpacked_bytes(const std::filesystem::path& file);

// Throws BackendError naming `what` (e.g. "the TorchScript file m.pt") when
// the archive unpacks to more than `available_bytes` (0: unknown, no check).
void check_unpacked_size(const std::filesystem::path& file, const std::string& what,
                         double available_bytes);

}  // namespace pipewright::backend
