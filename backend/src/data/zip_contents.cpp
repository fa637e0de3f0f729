#include "data/zip_contents.h"

#include <algorithm>
#include <array>
#include <fstream>
#include <vector>

#include "pipewright/backend/backend_error.h"
#include "pipewright/core/printable_name.h"
#include "pipewright/core/quantity_format.h"

namespace pipewright::backend {
namespace {

constexpr std::uint32_t kEndOfDirectory = 0x06054b50;
constexpr std::uint32_t kZip64Locator = 0x07064b50;
constexpr std::uint32_t kZip64EndOfDirectory = 0x06064b50;
constexpr std::uint32_t kDirectoryEntry = 0x02014b50;
constexpr std::uint32_t kLocalHeader = 0x04034b50;
constexpr std::uint16_t kZip64Extra = 0x0001;

// Little-endian fields of `bytes` at `at` (0 past the end: the caller's
// bounds checks turn that into "not a zip").
std::uint64_t field(const std::vector<unsigned char>& bytes, std::size_t at, int width) {
    std::uint64_t v = 0;
    for (int i = width - 1; i >= 0; --i) {
        const std::size_t k = at + static_cast<std::size_t>(i);
        v = (v << 8) | (k < bytes.size() ? bytes[k] : 0U);
    }
    return v;
}

std::vector<unsigned char> read_range(std::ifstream& in, std::uint64_t offset, std::uint64_t size) {
    std::vector<unsigned char> out(static_cast<std::size_t>(size));
    in.clear();
    in.seekg(static_cast<std::streamoff>(offset));
    in.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(size));
    out.resize(static_cast<std::size_t>(std::max<std::streamsize>(in.gcount(), 0)));
    return out;
}

struct DirectoryEntry {
    ZipEntry entry;
    std::uint64_t local_header = 0;
};

// The central directory's entries of the archive `in` of `size` bytes;
// nullopt when it is not a zip archive.
std::optional<std::vector<DirectoryEntry>> read_directory(std::ifstream& in, std::uint64_t size) {
    if (size < 22) {
        return std::nullopt;
    }
    // The end-of-directory record: 22 bytes and a comment of up to 64 KiB.
    const std::uint64_t tail_size = std::min<std::uint64_t>(size, 22 + 65535);
    const auto tail = read_range(in, size - tail_size, tail_size);
    std::optional<std::size_t> end;
    for (std::size_t i = tail.size() >= 22 ? tail.size() - 22 : 0;; --i) {
        if (field(tail, i, 4) == kEndOfDirectory) {
            end = i;
            break;
        }
        if (i == 0) {
            break;
        }
    }
    if (!end) {
        return std::nullopt;
    }
    std::uint64_t entries = field(tail, *end + 10, 2);
    std::uint64_t directory_size = field(tail, *end + 12, 4);
    std::uint64_t directory_offset = field(tail, *end + 16, 4);
    if ((entries == 0xffff || directory_offset == 0xffffffff) && *end >= 20 &&
        field(tail, *end - 20, 4) == kZip64Locator) {
        const auto record = read_range(in, field(tail, *end - 20 + 8, 8), 56);
        if (field(record, 0, 4) != kZip64EndOfDirectory) {
            return std::nullopt;
        }
        entries = field(record, 32, 8);
        directory_size = field(record, 40, 8);
        directory_offset = field(record, 48, 8);
    }
    if (directory_offset > size || directory_size > size - directory_offset) {
        return std::nullopt;
    }
    const auto directory = read_range(in, directory_offset, directory_size);
    std::vector<DirectoryEntry> out;
    std::size_t at = 0;
    for (std::uint64_t e = 0; e < entries; ++e) {
        if (at + 46 > directory.size() || field(directory, at, 4) != kDirectoryEntry) {
            return std::nullopt;
        }
        DirectoryEntry d;
        d.entry.method = static_cast<std::uint16_t>(field(directory, at + 10, 2));
        d.entry.packed_bytes = field(directory, at + 20, 4);
        d.entry.unpacked_bytes = field(directory, at + 24, 4);
        d.local_header = field(directory, at + 42, 4);
        const std::size_t name = field(directory, at + 28, 2);
        const std::size_t extra = field(directory, at + 30, 2);
        const std::size_t comment = field(directory, at + 32, 2);
        if (at + 46 + name > directory.size()) {
            return std::nullopt;
        }
        d.entry.name.assign(reinterpret_cast<const char*>(directory.data()) + at + 46, name);
        // Zip64: the extra field holds, in this order, the 8-byte values of
        // the fields that read 0xffffffff above.
        for (std::size_t x = at + 46 + name; x + 4 <= at + 46 + name + extra;) {
            const std::size_t length = field(directory, x + 2, 2);
            if (field(directory, x, 2) == kZip64Extra) {
                std::size_t v = x + 4;
                for (std::uint64_t* value :
                     {&d.entry.unpacked_bytes, &d.entry.packed_bytes, &d.local_header}) {
                    if (*value == 0xffffffff && v + 8 <= x + 4 + length) {
                        *value = field(directory, v, 8);
                        v += 8;
                    }
                }
                break;
            }
            x += 4 + length;
        }
        out.push_back(std::move(d));
        at += 46 + name + extra + comment;
    }
    return out;
}

}  // namespace

std::optional<std::vector<ZipEntry>> zip_entries(const std::filesystem::path& file) {
    std::error_code ec;
    const std::uint64_t size = std::filesystem::file_size(file, ec);
    std::ifstream in(file, std::ios::binary);
    if (ec || !in) {
        return std::nullopt;
    }
    auto directory = read_directory(in, size);
    if (!directory) {
        return std::nullopt;
    }
    std::vector<ZipEntry> out;
    out.reserve(directory->size());
    for (auto& d : *directory) {
        // The local header repeats the name and has an extra field of its own
        // (torch.save pads there to align the bytes that follow): the bytes
        // start after both.
        const auto header = read_range(in, d.local_header, 30);
        if (header.size() < 30 || field(header, 0, 4) != kLocalHeader) {
            return std::nullopt;
        }
        d.entry.data_offset = d.local_header + 30 + field(header, 26, 2) + field(header, 28, 2);
        if (d.entry.data_offset > size || d.entry.packed_bytes > size - d.entry.data_offset) {
            return std::nullopt;
        }
        out.push_back(std::move(d.entry));
    }
    return out;
}

std::optional<std::uint64_t> zip_unpacked_bytes(const std::filesystem::path& file) {
    std::error_code ec;
    const std::uint64_t size = std::filesystem::file_size(file, ec);
    std::ifstream in(file, std::ios::binary);
    if (ec || !in) {
        return std::nullopt;
    }
    const auto directory = read_directory(in, size);
    if (!directory) {
        return std::nullopt;
    }
    std::uint64_t total = 0;
    for (const auto& d : *directory) {
        total += d.entry.unpacked_bytes;
    }
    return total;
}

void check_unpacked_size(const std::filesystem::path& file, const std::string& what,
                         double available_bytes) {
    const auto unpacked = zip_unpacked_bytes(file);
    if (!unpacked || available_bytes <= 0 || static_cast<double>(*unpacked) <= available_bytes) {
        return;
    }
    std::error_code ec;
    const auto packed = std::filesystem::file_size(file, ec);
    throw BackendError(what + " unpacks to " + format_bytes(static_cast<double>(*unpacked)) +
                       (ec ? std::string() : " from " + format_bytes(static_cast<double>(packed))) +
                       ", more than the " + format_bytes(available_bytes) +
                       " this machine has available; it was not loaded");
}

}  // namespace pipewright::backend
