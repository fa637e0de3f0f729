#pragma once

#include <cstdint>

namespace pipewright::backend {

// The resident set size of this process, read from /proc/self/statm. The
// file stays open, so a sample is one pread (a few microseconds): cheap
// enough to take at every action boundary of a run.
class ResidentMemory {
  public:
    ResidentMemory();
    ~ResidentMemory();
    ResidentMemory(const ResidentMemory&) = delete;
    ResidentMemory& operator=(const ResidentMemory&) = delete;

    // Bytes resident now; 0 where /proc is not available.
    [[nodiscard]] std::int64_t bytes() const;

  private:
    int fd_ = -1;
    std::int64_t page_bytes_ = 4096;
};

// The highest resident set size this process ever had (getrusage).
[[nodiscard]] std::int64_t peak_resident_bytes();

}  // namespace pipewright::backend
