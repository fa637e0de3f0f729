// The front end links no LibTorch and hands `run`, `profile` and `worker`
// over to the backend program; where there is none, it says so.

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "backend_handoff.h"
#include "cli_test_support.h"

namespace pipewright {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

struct Output {
    int code = -1;
    std::string text;  // stdout and stderr
};

Output shell(const std::string& command) {
    FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
    Output r;
    if (pipe == nullptr) {
        return r;
    }
    char buffer[4096];
    while (std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) {
        r.text.append(buffer, n);
    }
    const int status = ::pclose(pipe);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

void write_text(const fs::path& p, const std::string& text) {
    std::ofstream(p) << text;
}

// A copy of the front end in a folder of its own: no backend beside it, and
// none in ../libexec/pipewright.
fs::path lone_front_end(const TempDir& dir) {
    const fs::path bin = dir / "bin";
    fs::create_directories(bin);
    fs::copy_file(PIPEWRIGHT_CLI_PATH, bin / "pipewright");
    return bin / "pipewright";
}

TEST(FrontEnd, LinksNoTorch) {
    const Output ldd = shell("ldd '" + std::string(PIPEWRIGHT_CLI_PATH) + "'");
    ASSERT_EQ(ldd.code, 0) << ldd.text;
    ASSERT_NE(ldd.text.find("libc.so"), std::string::npos) << ldd.text;
    EXPECT_EQ(ldd.text.find("libtorch"), std::string::npos) << ldd.text;
    EXPECT_EQ(ldd.text.find("libc10"), std::string::npos) << ldd.text;
}

TEST(FrontEnd, WithoutABackendRunAndProfileSayWhatToInstall) {
    TempDir dir;
    const fs::path front_end = lone_front_end(dir);
    for (const std::string command : {"run", "profile"}) {
        const Output r = shell("env -u PIPEWRIGHT_BACKEND '" + front_end.string() + "' " + command +
                               " " + testing::example("mlp-cpu.json"));
        EXPECT_EQ(r.code, 1) << r.text;
        EXPECT_NE(r.text.find("pipewright: " + command +
                              ": the LibTorch backend was not built or is not installed"),
                  std::string::npos)
            << r.text;
        // Both places it looked, so that a packager can see what is missing.
        EXPECT_NE(r.text.find((dir / "bin" / "pipewright-backend").string()), std::string::npos)
            << r.text;
        EXPECT_NE(r.text.find((dir / "libexec" / "pipewright" / "pipewright-backend").string()),
                  std::string::npos)
            << r.text;
        EXPECT_NE(r.text.find("Install the pipewright-backend package"), std::string::npos)
            << r.text;
    }
}

TEST(FrontEnd, UsageErrorsAndHelpOfRunNeedNoBackend) {
    TempDir dir;
    const fs::path front_end = lone_front_end(dir);
    const Output help = shell("'" + front_end.string() + "' run --help");
    EXPECT_EQ(help.code, 0) << help.text;
    EXPECT_NE(help.text.find("--nnodes"), std::string::npos) << help.text;
    const Output usage = shell("'" + front_end.string() + "' run " +
                               testing::example("mlp-cpu.json") + " --steps 0");
    EXPECT_EQ(usage.code, 2) << usage.text;
    EXPECT_EQ(usage.text.find("backend"), std::string::npos) << usage.text;
}

TEST(FrontEnd, ABackendNamedByTheEnvironmentMustBeAProgram) {
    TempDir dir;
    const fs::path not_a_program = dir / "backend.txt";
    write_text(not_a_program, "not a program");
    const Output r =
        shell("PIPEWRIGHT_BACKEND='" + not_a_program.string() + "' '" +
              std::string(PIPEWRIGHT_CLI_PATH) + "' run " + testing::example("mlp-cpu.json"));
    EXPECT_EQ(r.code, 1) << r.text;
    EXPECT_NE(r.text.find("PIPEWRIGHT_BACKEND is set to " + not_a_program.string() +
                          ", which is not an executable file"),
              std::string::npos)
        << r.text;
}

TEST(FrontEnd, TheBackendIsFoundBesideTheFrontEndThenInLibexec) {
    TempDir dir;
    const fs::path bin = dir / "bin";
    const fs::path libexec = dir / "libexec" / "pipewright";
    fs::create_directories(bin);
    fs::create_directories(libexec);
    const auto make_program = [](const fs::path& p) {
        write_text(p, "#!/bin/sh\n");
        fs::permissions(p, fs::perms::owner_all);
    };
    ::unsetenv("PIPEWRIGHT_BACKEND");
    make_program(libexec / "pipewright-backend");
    EXPECT_EQ(cli::locate_backend(bin / "pipewright").program, libexec / "pipewright-backend");
    make_program(bin / "pipewright-backend");
    EXPECT_EQ(cli::locate_backend(bin / "pipewright").program, bin / "pipewright-backend");
    // A file that is not executable does not count.
    fs::permissions(bin / "pipewright-backend", fs::perms::owner_read | fs::perms::owner_write);
    EXPECT_EQ(cli::locate_backend(bin / "pipewright").program, libexec / "pipewright-backend");
}

}  // namespace
}  // namespace pipewright
