#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace pipewright {

// Receives a document piece by piece, so that large outputs (traces and
// timelines of millions of actions) never exist in memory whole (issue 18).
class TextSink {
  public:
    virtual ~TextSink() = default;
    virtual void write(std::string_view text) = 0;
};

// Keeps the text: for tests and for small documents.
class StringSink final : public TextSink {
  public:
    void write(std::string_view text) override { text_.append(text); }
    [[nodiscard]] const std::string& text() const { return text_; }

  private:
    std::string text_;
};

// Counts the bytes and drops them: the size of a document without it.
class CountingSink final : public TextSink {
  public:
    void write(std::string_view text) override { bytes_ += text.size(); }
    [[nodiscard]] std::uint64_t bytes() const { return bytes_; }

  private:
    std::uint64_t bytes_ = 0;
};

// Writes a file in pieces with the guarantees of write_file_atomically: the
// text goes to a temporary file in the same folder, which commit() flushes to
// disk and renames over the target; a file replaced keeps its permissions, a
// new one gets 0666 less the umask. Without commit() (an exception while
// writing), the destructor removes the temporary file and the target stays
// as it was. Throws std::runtime_error with the reason.
class OutputFile final : public TextSink {
  public:
    explicit OutputFile(std::filesystem::path path);
    ~OutputFile() override;
    OutputFile(const OutputFile&) = delete;
    OutputFile& operator=(const OutputFile&) = delete;

    void write(std::string_view text) override;
    void commit();

  private:
    [[noreturn]] void fail(const std::string& what);
    void write_through(std::string_view text);

    std::filesystem::path path_;
    std::string temp_;
    int fd_ = -1;
    bool replacing_ = false;
    unsigned mode_ = 0;
    std::string buffer_;
};

}  // namespace pipewright
