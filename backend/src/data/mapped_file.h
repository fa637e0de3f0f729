#pragma once

// A file mapped read-only into memory: its pages come from the page cache
// and are shared with every other process that maps or reads the same file,
// so a large `run --data` tensor costs the machine its size once, not once
// per rank.

#include <cstdint>
#include <filesystem>
#include <memory>

namespace pipewright::backend {

class MappedFile {
  public:
    // Maps all of `file`; throws BackendError saying why it cannot (the
    // file cannot be opened, is empty, or mmap fails).
    static std::shared_ptr<const MappedFile> open(const std::filesystem::path& file);

    ~MappedFile();
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    [[nodiscard]] const unsigned char* data() const { return data_; }
    [[nodiscard]] std::uint64_t size() const { return size_; }

  private:
    MappedFile(const unsigned char* data, std::uint64_t size) : data_(data), size_(size) {}

    const unsigned char* data_;
    std::uint64_t size_;
};

}  // namespace pipewright::backend
