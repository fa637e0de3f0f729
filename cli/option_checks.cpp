#include "option_checks.h"

#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "pipewright/core/printable_name.h"

namespace pipewright::cli {

namespace {

std::string show(double value) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.15g", value);
    return buffer;
}

}  // namespace

CLI::Validator whole_number(std::int64_t min, std::int64_t max) {
    const std::string description = max == std::numeric_limits<int>::max()
                                        ? "at least " + std::to_string(min)
                                        : std::to_string(min) + " to " + std::to_string(max);
    return CLI::Validator(
        [min, max](std::string& text) -> std::string {
            std::int64_t value = 0;
            const char* end = text.data() + text.size();
            const auto [ptr, ec] = std::from_chars(text.data(), end, value);
            if (ec == std::errc::result_out_of_range) {
                return "must be at most " + std::to_string(max) + ", got " + text;
            }
            if (ec != std::errc() || ptr != end) {
                return "must be a whole number, got \"" + text + "\"";
            }
            if (value < min) {
                return "must be at least " + std::to_string(min) + ", got " + text;
            }
            if (value > max) {
                return "must be at most " + std::to_string(max) + ", got " + text;
            }
            return {};
        },
        description, "WHOLE_NUMBER");
}

CLI::Validator finite_number(double min, double max) {
    return CLI::Validator(
        [min, max](std::string& text) -> std::string {
            const std::string allowed = "a number from " + show(min) + " to " + show(max);
            char* end = nullptr;
            const double value = std::strtod(text.c_str(), &end);
            // strtod reads "nan" and "inf" too: refuse them with the range.
            if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(value) ||
                value < min || value > max) {
                return "must be " + allowed + ", got " + text;
            }
            return {};
        },
        show(min) + " to " + show(max), "FINITE_NUMBER");
}

CLI::Validator non_empty_path() {
    return CLI::Validator(
        [](std::string& text) -> std::string {
            return text.empty() ? "must name a file or folder, got an empty path" : "";
        },
        "PATH", "NON_EMPTY_PATH");
}

bool check_output_file(const std::string& what, const std::string& path, std::ostream& err) {
    namespace fs = std::filesystem;
    const fs::path p(path);
    const fs::path folder = p.has_parent_path() ? p.parent_path() : fs::path(".");
    std::error_code ec;
    std::string why;
    if (p.filename().empty() || fs::is_directory(p, ec)) {
        why = "it is a folder; give a file name such as " + (p / (what + ".json")).string();
    } else if (!fs::is_directory(folder, ec)) {
        why = "the folder " + folder.string() + " does not exist";
    } else if (::access(folder.c_str(), W_OK) != 0) {
        why = "the folder " + folder.string() + " is not writable";
    } else if (fs::exists(p, ec) && ::access(p.c_str(), W_OK) != 0) {
        why = "the file is not writable";
    } else if (fs::exists(p, ec) && !fs::is_regular_file(p, ec)) {
        why = "it is not a regular file";
    } else {
        // The file is written next to its target and renamed over it: a
        // folder that takes no new file (/sys, /proc, a read-only mount)
        // passes access() for root, so try it.
        std::string probe = (folder / ".pipewright-write-check-XXXXXX").string();
        const int fd = ::mkstemp(probe.data());
        if (fd < 0) {
            // ENOENT from a folder that exists (/proc) says nothing useful.
            const int error = errno;
            why =
                "the folder " + folder.string() + " takes no new files" +
                (error == ENOENT ? std::string() : " (" + std::string(std::strerror(error)) + ")");
        } else {
            ::close(fd);
            ::unlink(probe.c_str());
        }
    }
    if (!why.empty()) {
        err << "pipewright: cannot write the " << what << " " << path << ": " << why << '\n';
        return false;
    }
    return true;
}

namespace {
// The same file: one inode (through links, `..` or another spelling), or,
// for a file not written yet, the same path once made absolute.
bool same_file(const std::string& a, const std::string& b) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (fs::exists(a, ec) && fs::exists(b, ec)) {
        const bool same = fs::equivalent(a, b, ec);
        return !ec && same;
    }
    return fs::weakly_canonical(a, ec) == fs::weakly_canonical(b, ec) && !ec;
}
}  // namespace

bool check_outputs_spare_inputs(const std::vector<NamedFile>& inputs,
                                const std::vector<NamedFile>& outputs, std::ostream& err) {
    for (std::size_t i = 0; i < outputs.size(); ++i) {
        const NamedFile& out = outputs[i];
        if (out.path.empty()) {
            continue;
        }
        for (const NamedFile& in : inputs) {
            if (!in.path.empty() && same_file(out.path, in.path)) {
                err << "pipewright: " << out.role << " " << printable_name(out.path) << " is the "
                    << in.role << " this command reads"
                    << (out.path == in.path ? "" : " (" + printable_name(in.path) + ")")
                    << "; writing it would replace it: give another file name\n";
                return false;
            }
        }
        for (std::size_t j = 0; j < i; ++j) {
            if (!outputs[j].path.empty() && same_file(out.path, outputs[j].path)) {
                err << "pipewright: " << outputs[j].role << " and " << out.role
                    << " name the same file, " << printable_name(out.path)
                    << "; give each its own\n";
                return false;
            }
        }
    }
    return true;
}

}  // namespace pipewright::cli
