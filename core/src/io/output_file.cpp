#include "pipewright/core/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace pipewright {

namespace {

// Pieces are gathered up to this size before each write() system call.
constexpr std::size_t kBufferBytes = 1 << 20;

std::string errno_text() {
    return std::strerror(errno);
}

std::filesystem::path folder_of(const std::filesystem::path& path) {
    return path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
}

}  // namespace

// write_file_atomically (project_io.cpp) is this with the whole text at once.
OutputFile::OutputFile(std::filesystem::path path) : path_(std::move(path)) {
    struct stat existing {};
    replacing_ = ::stat(path_.c_str(), &existing) == 0 && S_ISREG(existing.st_mode);
    mode_ = replacing_ ? (existing.st_mode & 07777) : 0666;
    for (unsigned attempt = 0; fd_ < 0; ++attempt) {
        temp_ = (folder_of(path_) /
                 ("." + path_.filename().string() + "." + std::to_string(::getpid()) + "." +
                  std::to_string(attempt) + ".tmp"))
                    .string();
        fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
                     replacing_ ? 0600 : static_cast<mode_t>(mode_));
        if (fd_ < 0 && (errno != EEXIST || attempt >= 100)) {
            throw std::runtime_error("cannot write " + path_.string() + ": " + errno_text());
        }
    }
    buffer_.reserve(kBufferBytes);
}

OutputFile::~OutputFile() {
    if (fd_ >= 0) {
        ::close(fd_);
        ::unlink(temp_.c_str());
    }
}

void OutputFile::fail(const std::string& what) {
    const std::string reason = errno_text();
    ::close(fd_);
    ::unlink(temp_.c_str());
    fd_ = -1;
    throw std::runtime_error("cannot write " + path_.string() + ": " + what + " (" + reason +
                             "); the previous file is unchanged");
}

void OutputFile::write_through(std::string_view text) {
    std::size_t written = 0;
    while (written < text.size()) {
        const ssize_t n = ::write(fd_, text.data() + written, text.size() - written);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            fail("write failed");
        }
        written += static_cast<std::size_t>(n);
    }
}

void OutputFile::write(std::string_view text) {
    if (fd_ < 0) {
        throw std::runtime_error("cannot write " + path_.string() + ": already closed");
    }
    if (buffer_.size() + text.size() > kBufferBytes) {
        write_through(buffer_);
        buffer_.clear();
        if (text.size() >= kBufferBytes) {
            write_through(text);
            return;
        }
    }
    buffer_.append(text);
}

void OutputFile::commit() {
    if (fd_ < 0) {
        throw std::runtime_error("cannot write " + path_.string() + ": already closed");
    }
    write_through(buffer_);
    buffer_.clear();
    if (::fsync(fd_) != 0) {
        fail("flush to disk failed");
    }
    if (replacing_ && ::fchmod(fd_, static_cast<mode_t>(mode_)) != 0) {
        fail("cannot keep the file's permissions");
    }
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) {
        const std::string reason = errno_text();
        ::unlink(temp_.c_str());
        throw std::runtime_error("cannot write " + path_.string() + ": " + reason);
    }
    if (::rename(temp_.c_str(), path_.c_str()) != 0) {
        const std::string reason = errno_text();
        ::unlink(temp_.c_str());
        throw std::runtime_error("cannot replace " + path_.string() + ": " + reason);
    }
    // Make the rename itself durable; a failure here loses nothing already saved.
    const int dir = ::open(folder_of(path_).c_str(), O_RDONLY | O_DIRECTORY);
    if (dir >= 0) {
        ::fsync(dir);
        ::close(dir);
    }
}

}  // namespace pipewright
