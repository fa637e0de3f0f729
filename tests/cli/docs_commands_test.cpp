// The docs' own commands, run: every `$ pipewright …` line of a console
// block in docs/ and the README whose inputs ship with the project and that
// writes no file is run from the top of the tree, and its output must show
// the lines the doc shows (issue 32: the docs had drifted from the product).
//
// Matching: the doc's lines must appear in order, each right after the one
// before, unless a line of "..." or "…" stands between them (any lines may be
// left out there); a doc line ending in "…" matches any line it starts; the
// planner's "Searched … in 896 µs." line, a wall-clock time, is compared with
// its digits left out. Commands of the backend (run, profile, import) measure
// this machine and are not compared.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli_test_support.h"

namespace pipewright {
namespace {

namespace fs = std::filesystem;
const fs::path kRoot = fs::path(PIPEWRIGHT_ASSETS_DIR).parent_path();

struct DocCommand {
    std::string file;
    int line = 0;
    std::vector<std::string> args;      // after "pipewright"
    std::vector<std::string> expected;  // the doc's output lines
};

std::vector<std::string> words(const std::string& text) {
    std::istringstream in(text);
    std::vector<std::string> out;
    for (std::string w; in >> w;) {
        out.push_back(w);
    }
    return out;
}

std::string rtrim(std::string s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())) != 0) {
        s.pop_back();
    }
    return s;
}

// Whether the command can run here as the doc shows it: a front-end command
// on shipped files, writing nothing.
bool runnable(const std::vector<std::string>& args) {
    static const std::vector<std::string> kFrontEnd{"simulate",  "plan",    "validate",
                                                    "schedules", "devices", "layers"};
    if (args.empty() || std::find(kFrontEnd.begin(), kFrontEnd.end(), args[0]) == kFrontEnd.end()) {
        return false;
    }
    for (const auto& a : args) {
        if (a == ">" || a == "|" || a == "\\" || a == "--trace" || a == "--timeline" ||
            a == "--apply" || a == "--export-csv" || a == "--profile") {
            return false;
        }
        if ((a.ends_with(".json") || a.ends_with(".csv")) && !fs::exists(kRoot / a)) {
            return false;
        }
    }
    return true;
}

std::vector<DocCommand> doc_commands() {
    std::vector<fs::path> files{kRoot / "README.md"};
    for (const auto& entry : fs::directory_iterator(kRoot / "docs")) {
        if (entry.path().extension() == ".md") {
            files.push_back(entry.path());
        }
    }
    std::vector<DocCommand> out;
    for (const auto& file : files) {
        std::ifstream in(file);
        bool inside = false;
        DocCommand* current = nullptr;
        int number = 0;
        for (std::string line; std::getline(in, line);) {
            ++number;
            if (line.starts_with("```")) {
                inside = !inside && (line == "```console" || line == "```text");
                current = nullptr;
                continue;
            }
            if (!inside) {
                continue;
            }
            if (line.starts_with("$ ")) {
                current = nullptr;
                auto args = words(line.substr(2));
                if (!args.empty() && args[0] == "pipewright") {
                    args.erase(args.begin());
                    if (runnable(args)) {
                        out.push_back({fs::relative(file, kRoot).string(), number, args, {}});
                        current = &out.back();
                    }
                }
                continue;
            }
            if (current != nullptr) {
                current->expected.push_back(rtrim(line));
            }
        }
    }
    return out;
}

std::string without_digits(std::string s) {
    s.erase(std::remove_if(s.begin(), s.end(),
                           [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }),
            s.end());
    return s;
}

bool same_line(const std::string& doc, const std::string& actual) {
    if (doc.ends_with("…")) {
        return actual.starts_with(doc.substr(0, doc.size() - std::string("…").size()));
    }
    if (doc.starts_with("Searched ")) {
        return without_digits(doc) == without_digits(actual);
    }
    return doc == actual;
}

// "" when the output shows the doc's lines; else the first that it lacks.
std::string first_missing(const std::vector<std::string>& expected,
                          const std::vector<std::string>& actual) {
    std::size_t at = 0;
    bool gap = false;
    for (const auto& doc : expected) {
        if (const auto first = doc.find_first_not_of(' ');
            first != std::string::npos &&
            (doc.substr(first) == "..." || doc.substr(first) == "…")) {
            gap = true;
            continue;
        }
        std::size_t found = at;
        while (found < actual.size() && !same_line(doc, actual[found]) && gap) {
            ++found;
        }
        if (found >= actual.size() || !same_line(doc, actual[found])) {
            return doc + "\n    (the output has \"" + (at < actual.size() ? actual[at] : "") +
                   "\" there)";
        }
        at = found + 1;
        gap = false;
    }
    return "";
}

TEST(DocsCommands, EveryShippedCommandPrintsWhatTheDocShows) {
    const fs::path before = fs::current_path();
    fs::current_path(kRoot);
    const auto commands = doc_commands();
    // The docs show a dozen such commands: finding none means the reader broke.
    EXPECT_GE(commands.size(), 10U);
    for (const auto& c : commands) {
        std::string shown;
        for (const auto& a : c.args) {
            shown += " " + a;
        }
        const auto r = testing::run_cli(c.args);
        EXPECT_EQ(r.code, 0) << c.file << ":" << c.line << ": pipewright" << shown << "\n" << r.err;
        std::vector<std::string> actual;
        std::istringstream out(r.out);
        for (std::string line; std::getline(out, line);) {
            actual.push_back(rtrim(line));
        }
        const std::string missing = first_missing(c.expected, actual);
        EXPECT_TRUE(missing.empty())
            << c.file << ":" << c.line << ": pipewright" << shown
            << "\n  the doc shows a line the output lacks:\n    " << missing;
    }
    fs::current_path(before);
}

}  // namespace
}  // namespace pipewright
