#include "pipewright/core/input_file.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "pipewright/core/quantity_format.h"

namespace pipewright {

namespace {

std::string too_large(const std::filesystem::path& path, std::uintmax_t max_bytes) {
    return path.string() + ": larger than " + format_bytes(static_cast<double>(max_bytes)) + " (" +
           std::to_string(max_bytes) + " bytes), the most Pipewright reads from one file";
}

// Closes the descriptor on every path out, exceptions included.
struct Fd {
    int fd;
    ~Fd() {
        if (fd >= 0) {
            ::close(fd);
        }
    }
};

}  // namespace

std::string read_text_file(const std::filesystem::path& path, std::uintmax_t max_bytes) {
    // O_NONBLOCK: opening a device must not wait before we know what it is.
    Fd file{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
    if (file.fd < 0) {
        throw std::runtime_error(path.string() + ": cannot open (" + std::strerror(errno) + ")");
    }
    struct stat st {};
    if (::fstat(file.fd, &st) != 0) {
        throw std::runtime_error(path.string() + ": cannot open (" + std::strerror(errno) + ")");
    }
    if (S_ISDIR(st.st_mode)) {
        throw std::runtime_error(path.string() + ": is a folder, not a file");
    }
    // A device (/dev/zero, /dev/urandom, a terminal) or socket may never end.
    if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) {
        throw std::runtime_error(path.string() +
                                 ": is a device or socket, not a file (it may never end)");
    }
    if (S_ISREG(st.st_mode) && static_cast<std::uintmax_t>(st.st_size) > max_bytes) {
        throw std::runtime_error(too_large(path, max_bytes));
    }
    if (S_ISFIFO(st.st_mode)) {
        // Wait, as `cat` does, for a writer to connect: on Linux, poll() on a
        // FIFO that no writer has opened since it was opened here waits,
        // where a read would see an end of file at once. The descriptor
        // stays the one opened first: opening the FIFO again lost a writer
        // that connected to it, wrote and left in between, and then waited
        // for another one for ever.
        pollfd ready{file.fd, POLLIN, 0};
        while (::poll(&ready, 1, -1) < 0 && errno == EINTR) {
        }
    }
    const int flags = ::fcntl(file.fd, F_GETFL);
    if (flags >= 0) {
        ::fcntl(file.fd, F_SETFL, flags & ~O_NONBLOCK);
    }
    std::string text;
    if (S_ISREG(st.st_mode)) {
        text.reserve(static_cast<std::size_t>(st.st_size));
    }
    char buffer[65536];
    for (;;) {
        const ssize_t n = ::read(file.fd, buffer, sizeof buffer);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            throw std::runtime_error(path.string() + ": read failed (" + std::strerror(errno) +
                                     ")");
        }
        if (n == 0) {
            break;
        }
        // A file can grow while it is read, and a FIFO has no size up front.
        if (text.size() + static_cast<std::size_t>(n) > max_bytes) {
            throw std::runtime_error(too_large(path, max_bytes));
        }
        text.append(buffer, static_cast<std::size_t>(n));
    }
    return text;
}

}  // namespace pipewright
