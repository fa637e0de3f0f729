#pragma once

// Runs the command line in-process and gives tests a private temporary folder.

#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "commands.h"

namespace pipewright::testing {

struct CliResult {
    int code = 0;
    std::string out;
    std::string err;
};

inline CliResult run_cli(const std::vector<std::string>& args) {
    std::vector<const char*> argv{"pipewright"};
    for (const auto& a : args) {
        argv.push_back(a.c_str());
    }
    std::ostringstream out;
    std::ostringstream err;
    CliResult r;
    r.code = cli::run(static_cast<int>(argv.size()), argv.data(), out, err);
    r.out = out.str();
    r.err = err.str();
    return r;
}

inline std::string example(const std::string& name) {
    return (std::filesystem::path(PIPEWRIGHT_ASSETS_DIR) / "examples" / name).string();
}

class TempDir {
  public:
    TempDir() {
        path_ = std::filesystem::temp_directory_path() /
                ("pipewright-cli-test-" + std::to_string(::getpid()) + "-" +
                 std::to_string(counter_++));
        std::filesystem::create_directories(path_);
    }
    ~TempDir() { std::filesystem::remove_all(path_); }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    [[nodiscard]] std::filesystem::path operator/(const std::string& name) const {
        return path_ / name;
    }

  private:
    static inline int counter_ = 0;
    std::filesystem::path path_;
};

}  // namespace pipewright::testing
