#include "run/stderr_capture.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <iostream>

namespace pipewright::backend {

StderrCapture::StderrCapture(const std::string& log_file) : terminal_(&buffer_) {
    std::cerr.flush();
    std::fflush(stderr);
    // Close-on-exec: the workers get their own logs, not the terminal.
    saved_ = ::fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
    const int file = ::open(log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
    if (saved_ >= 0 && file >= 0 && ::dup2(file, STDERR_FILENO) >= 0) {
        buffer_.fd = saved_;
    } else {
        buffer_.fd = STDERR_FILENO;
    }
    if (file >= 0) {
        ::close(file);
    }
}

StderrCapture::~StderrCapture() {
    terminal_.flush();
    std::cerr.flush();
    std::fflush(stderr);
    if (saved_ >= 0) {
        if (buffer_.fd == saved_) {
            ::dup2(saved_, STDERR_FILENO);
        }
        ::close(saved_);
    }
}

StderrCapture::FdBuffer::int_type StderrCapture::FdBuffer::overflow(int_type c) {
    if (traits_type::eq_int_type(c, traits_type::eof())) {
        return traits_type::not_eof(c);
    }
    const char ch = traits_type::to_char_type(c);
    return xsputn(&ch, 1) == 1 ? c : traits_type::eof();
}

std::streamsize StderrCapture::FdBuffer::xsputn(const char* s, std::streamsize n) {
    std::streamsize done = 0;
    while (done < n) {
        const ssize_t w = ::write(fd, s + done, static_cast<std::size_t>(n - done));
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            // The terminal or pipe is gone (SIGHUP, SIGPIPE): the log keeps
            // every line, so this write is dropped rather than retried.
            return done;
        }
        done += w;
    }
    return done;
}

}  // namespace pipewright::backend
