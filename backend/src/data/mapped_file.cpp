#include "data/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "pipewright/backend/backend_error.h"
#include "pipewright/core/printable_name.h"

namespace pipewright::backend {

std::shared_ptr<const MappedFile> MappedFile::open(const std::filesystem::path& file) {
    const auto failure = [&file](const std::string& what) {
        return BackendError("cannot map " + printable_name(file.string()) + " (" + what + ": " +
                            std::strerror(errno) + ")");
    };
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        throw failure("open");
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0 || st.st_size <= 0) {
        const auto error = failure(st.st_size <= 0 ? "empty" : "fstat");
        ::close(fd);
        throw error;
    }
    const auto size = static_cast<std::uint64_t>(st.st_size);
    // Private and read-only: nothing is ever written back, and a page is
    // resident only once something reads it. The mapping outlives the
    // descriptor.
    void* data = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    const int mmap_errno = errno;
    ::close(fd);
    if (data == MAP_FAILED) {
        errno = mmap_errno;
        throw failure("mmap");
    }
    return std::shared_ptr<const MappedFile>(
        new MappedFile(static_cast<const unsigned char*>(data), size));
}

MappedFile::~MappedFile() {
    ::munmap(const_cast<unsigned char*>(data_), size_);
}

}  // namespace pipewright::backend
