#include "option_checks.h"

#include <unistd.h>

#include <filesystem>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

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
    }
    if (!why.empty()) {
        err << "pipewright: cannot write the " << what << " " << path << ": " << why << '\n';
        return false;
    }
    return true;
}

}  // namespace pipewright::cli
