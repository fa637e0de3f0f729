#pragma once

// LibTorch, c10d and Gloo write their own warnings straight to file
// descriptor 2 ("WARNING: Logging before InitGoogleLogging()", socket errors
// of a peer that went away). In a launcher they came before, and buried, the
// message that says what happened. While a run is supervised, descriptor 2
// goes to the run's log; the launcher's own lines go to the terminal through
// the stream this class keeps, and to the log as well.

#include <ostream>
#include <streambuf>
#include <string>

namespace pipewright::backend {

class StderrCapture {
  public:
    // Appends descriptor 2 to `log_file` (created if missing). When that
    // fails, descriptor 2 stays where it was.
    explicit StderrCapture(const std::string& log_file);
    ~StderrCapture();  // descriptor 2 back to where it was
    StderrCapture(const StderrCapture&) = delete;
    StderrCapture& operator=(const StderrCapture&) = delete;

    // Where descriptor 2 pointed before: the user's terminal or pipe.
    [[nodiscard]] std::ostream& terminal() { return terminal_; }

  private:
    class FdBuffer : public std::streambuf {
      public:
        int fd = -1;

      protected:
        int_type overflow(int_type c) override;
        std::streamsize xsputn(const char* s, std::streamsize n) override;
    };
    int saved_ = -1;
    FdBuffer buffer_;
    std::ostream terminal_;
};

}  // namespace pipewright::backend
