// Every input file is read through read_text_file (issue 18): devices that
// never end and files over the limit end in a message, quickly.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "pipewright/core/input_file.h"
#include "pipewright/core/project_io.h"
#include "project_fixtures.h"

namespace pipewright {
namespace {

using testing::contains;

std::string failure_of(const std::filesystem::path& path, std::uintmax_t limit) {
    try {
        (void)read_text_file(path, limit);
    } catch (const std::runtime_error& e) {
        return e.what();
    }
    return "(no error)";
}

struct TempDir {
    std::filesystem::path path;
    TempDir() {
        std::string pattern = (std::filesystem::temp_directory_path() / "pw-input-XXXXXX").string();
        path = ::mkdtemp(pattern.data());
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
};

TEST(InputFile, DevZeroIsRefusedAtOnce) {
    const auto start = std::chrono::steady_clock::now();
    const std::string message = failure_of("/dev/zero", kMaxInputFileBytes);
    EXPECT_TRUE(contains(message, "/dev/zero: is a device")) << message;
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

TEST(InputFile, LoadingDevZeroAsAProjectIsAProblemNotAHang) {
    const LoadedProject loaded = load_project_file("/dev/zero");
    EXPECT_FALSE(loaded.project.has_value());
    EXPECT_TRUE(testing::has_diagnostic(loaded.diagnostics, "(file)", {"is a device"}));
}

TEST(InputFile, AFileOverTheLimitIsRefusedBeforeReading) {
    TempDir dir;
    const auto file = dir.path / "big.json";
    {
        std::ofstream out(file);
        out << std::string(2048, ' ');
    }
    const std::string message = failure_of(file, 1024);
    EXPECT_TRUE(contains(message, file.string() + ": larger than 1.00 KiB (1024 bytes)"))
        << message;
    EXPECT_EQ(read_text_file(file, 4096).size(), 2048U);
}

TEST(InputFile, ASparseFileOfGigabytesIsRefusedWithoutUsingMemory) {
    // The 3 GB file of NULs took 5.9 GB of memory; a sparse file of
    // that size costs no disk.
    TempDir dir;
    const auto file = dir.path / "zeros.json";
    { std::ofstream out(file); }
    std::filesystem::resize_file(file, std::uintmax_t{3} << 30);
    const std::string message = failure_of(file, kMaxInputFileBytes);
    EXPECT_TRUE(contains(message, "larger than 256 MiB (268435456 bytes)")) << message;
}

TEST(InputFile, AFifoIsReadUpToTheLimit) {
    TempDir dir;
    const auto fifo = dir.path / "pipe";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        std::ofstream out(fifo);
        out << std::string(4096, 'x');
        out.close();
        ::_exit(0);
    }
    const std::string message = failure_of(fifo, 1000);
    EXPECT_TRUE(contains(message, "larger than")) << message;
    int status = 0;
    ::waitpid(child, &status, 0);
}

TEST(InputFile, AFolderIsNamed) {
    TempDir dir;
    EXPECT_TRUE(contains(failure_of(dir.path, 100), "is a folder")) << failure_of(dir.path, 100);
}

}  // namespace
}  // namespace pipewright
