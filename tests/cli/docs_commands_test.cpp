// The docs' own commands, run: every `$ pipewright …` line of a console
// block in docs/ and the README whose inputs ship with the project and that
// writes no file is run from the top of the tree, and its output must show
// the lines the doc shows (issue 32: the docs had drifted from the product).
//
// Reading the blocks and matching their lines (docs_console_blocks.h): the
// doc's lines must appear in order, each right after the one before, unless
// a line of "..." or "…" stands between them; a doc line ending in "…"
// matches any line it starts. The planner's "Searched … in 896 µs." line, a
// wall-clock time, is compared with its numbers as placeholders. Every other
// block (the backend's run, profile, import, launch-files and compare, and
// commands that write files) is run by
// backend/docs_backend_commands_test.cpp, in a temporary folder.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "../docs_console_blocks.h"
#include "cli_test_support.h"

namespace pipewright {
namespace {

namespace fs = std::filesystem;
const fs::path kRoot = fs::path(PIPEWRIGHT_ASSETS_DIR).parent_path();

bool same_line(const std::string& doc, const std::string& actual) {
    if (doc.starts_with("Searched ")) {
        return docs::shows_with_placeholders(doc, actual);
    }
    return docs::shows(doc, actual);
}

TEST(DocsCommands, EveryShippedCommandPrintsWhatTheDocShows) {
    const fs::path before = fs::current_path();
    fs::current_path(kRoot);
    int ran = 0;
    for (const auto& block : docs::console_blocks(kRoot)) {
        for (const auto& c : block.commands) {
            if (c.words.empty() || c.words[0] != "pipewright") {
                continue;
            }
            const std::vector<std::string> args(c.words.begin() + 1, c.words.end());
            if (!docs::front_end_runnable(args, kRoot)) {
                continue;
            }
            ++ran;
            const auto r = testing::run_cli(args);
            EXPECT_EQ(r.code, 0) << block.file << ":" << c.line << ": " << c.text << "\n" << r.err;
            // As a terminal shows it: the warnings come before the report.
            const std::string missing =
                docs::first_missing(c.expected, docs::output_lines(r.err + r.out), same_line);
            EXPECT_TRUE(missing.empty())
                << block.file << ":" << c.line << ": " << c.text
                << "\n  the doc shows a line the output lacks:\n    " << missing;
        }
    }
    // The docs show a dozen such commands: finding none means the reader broke.
    EXPECT_GE(ran, 10);
    fs::current_path(before);
}

}  // namespace
}  // namespace pipewright
