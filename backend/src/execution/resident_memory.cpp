#include "execution/resident_memory.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <array>
#include <cstdlib>

namespace pipewright::backend {

ResidentMemory::ResidentMemory()
    : fd_(::open("/proc/self/statm", O_RDONLY | O_CLOEXEC)), page_bytes_(::sysconf(_SC_PAGESIZE)) {}

ResidentMemory::~ResidentMemory() {
    if (fd_ >= 0) {
        ::close(fd_);
    }
}

std::int64_t ResidentMemory::bytes() const {
    if (fd_ < 0) {
        return 0;
    }
    // "size resident shared text lib data dt", in pages.
    std::array<char, 128> text{};
    const ssize_t n = ::pread(fd_, text.data(), text.size() - 1, 0);
    if (n <= 0) {
        return 0;
    }
    char* end = nullptr;
    std::strtoll(text.data(), &end, 10);                        // size
    const long long resident = std::strtoll(end, nullptr, 10);  // resident
    return static_cast<std::int64_t>(resident) * page_bytes_;
}

std::int64_t peak_resident_bytes() {
    rusage usage{};
    ::getrusage(RUSAGE_SELF, &usage);
    return static_cast<std::int64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

}  // namespace pipewright::backend
