#include "backend_handoff.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <system_error>

#include "commands.h"
#include "pipewright/core/printable_name.h"

namespace pipewright::cli {

namespace fs = std::filesystem;

namespace {

constexpr const char* kBackendName = "pipewright-backend";

bool is_executable_file(const fs::path& p) {
    std::error_code ec;
    return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

}  // namespace

fs::path this_program() {
    std::error_code ec;
    fs::path self = fs::read_symlink("/proc/self/exe", ec);
    return ec ? fs::path() : self;
}

BackendLocation locate_backend(const fs::path& front_end) {
    BackendLocation found;
    if (const char* env = std::getenv("PIPEWRIGHT_BACKEND"); env != nullptr && *env != '\0') {
        const fs::path chosen(env);
        found.tried.push_back(chosen);
        if (is_executable_file(chosen)) {
            found.program = chosen;
        } else {
            found.problem = "PIPEWRIGHT_BACKEND is set to " + printable_name(chosen.string()) +
                            ", which is not an executable file";
        }
        return found;
    }
    if (front_end.empty()) {
        return found;
    }
    const fs::path dir = front_end.parent_path();
    // A build tree keeps both programs in one folder; an install puts the
    // backend under libexec, at the same place relative to bin/.
    for (const fs::path& candidate :
         {dir / kBackendName, (dir / PIPEWRIGHT_BACKEND_FROM_BINDIR / kBackendName)}) {
        const fs::path normal = candidate.lexically_normal();
        found.tried.push_back(normal);
        if (is_executable_file(normal)) {
            found.program = normal;
            return found;
        }
    }
    return found;
}

int hand_over_to_backend(int argc, const char* const* argv, const std::string& command,
                         std::ostream& err, const std::vector<std::string>& extra) {
    const BackendLocation where = locate_backend(this_program());
    if (where.program.empty()) {
        err << "pipewright: " << command
            << ": the LibTorch backend was not built or is not installed";
        if (!where.problem.empty()) {
            err << ": " << where.problem << '\n';
            return kInvalidInput;
        }
        err << " (no " << kBackendName;
        for (std::size_t i = 0; i < where.tried.size(); ++i) {
            err << (i == 0 ? " at " : " or ") << printable_name(where.tried[i].string());
        }
        err << "). Install the pipewright-backend package, or build with "
               "-DPIPEWRIGHT_BUILD_BACKEND=ON and LibTorch installed; set PIPEWRIGHT_BACKEND "
               "to use a backend program elsewhere.\n";
        return kInvalidInput;
    }
    const std::string program = where.program.string();
    std::vector<char*> args;
    args.push_back(const_cast<char*>(program.c_str()));
    for (int i = 1; i < argc; ++i) {
        args.push_back(const_cast<char*>(argv[i]));
    }
    for (const std::string& e : extra) {
        args.push_back(const_cast<char*>(e.c_str()));
    }
    args.push_back(nullptr);
    err.flush();
    ::execv(program.c_str(), args.data());
    err << "pipewright: " << command << ": cannot start the backend " << printable_name(program)
        << ": " << std::strerror(errno) << '\n';
    return kInvalidInput;
}

}  // namespace pipewright::cli
