// Keeps the command line and its documentation in step: every subcommand that
// `pipewright --help` lists has a section in docs/cli.md and in the man page
// docs/man/pipewright.1, and every long option its `--help` lists is named in
// that section (global options such as --version anywhere in the file).

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_test_support.h"

namespace pipewright {
namespace {

namespace fs = std::filesystem;
using testing::run_cli;

// The assets folder sits at the top of the source tree, next to docs/.
const fs::path kDocs = fs::path(PIPEWRIGHT_ASSETS_DIR).parent_path() / "docs";
const fs::path kCliMd = kDocs / "cli.md";
const fs::path kManPage = kDocs / "man" / "pipewright.1";

std::vector<std::string> read_lines(const fs::path& path) {
    std::ifstream in(path);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) {
        lines.push_back(line);
    }
    return lines;
}

std::string join(const std::vector<std::string>& lines) {
    std::string text;
    for (const auto& l : lines) {
        text += l;
        text += '\n';
    }
    return text;
}

std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t");
    if (b == std::string::npos) {
        return "";
    }
    return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

// Subcommand names listed under "Subcommands:" in the main help.
std::vector<std::string> subcommands_of(const std::string& help) {
    std::vector<std::string> names;
    std::istringstream in(help);
    bool inside = false;
    for (std::string line; std::getline(in, line);) {
        if (trim(line) == "Subcommands:") {
            inside = true;
            continue;
        }
        if (!inside) {
            continue;
        }
        if (trim(line).empty() || line.front() != ' ') {
            break;
        }
        const std::string t = trim(line);
        names.push_back(t.substr(0, t.find_first_of(" \t")));
    }
    return names;
}

// Long options of the option lines ("  -m,--microbatches INT  ...",
// "  --json  ..."): the names in the first column only, so that an option
// merely mentioned in a description does not count.
std::vector<std::string> long_options_of(const std::string& help) {
    std::vector<std::string> options;
    std::istringstream in(help);
    for (std::string line; std::getline(in, line);) {
        const std::string t = trim(line);
        if (t.empty() || t.front() != '-' || line.front() != ' ') {
            continue;
        }
        std::istringstream names(t.substr(0, t.find_first_of(" \t")));
        for (std::string name; std::getline(names, name, ',');) {
            if (name.rfind("--", 0) == 0 && name.size() > 2) {
                options.push_back(name);
            }
        }
    }
    return options;
}

// True when `text` contains `word` not followed by another name character,
// so that "--out" is not found in "--output".
bool mentions(const std::string& text, const std::string& word) {
    for (auto pos = text.find(word); pos != std::string::npos; pos = text.find(word, pos + 1)) {
        const auto end = pos + word.size();
        const char next = end < text.size() ? text[end] : ' ';
        const bool name_char = std::isalnum(static_cast<unsigned char>(next)) != 0 || next == '-' ||
                               next == '_' || (next == '\\' && text.compare(end, 2, "\\-") == 0);
        if (!name_char) {
            return true;
        }
    }
    return false;
}

// In roff a hyphen is usually written "\-": "--json" appears as "\-\-json".
bool man_mentions(const std::string& text, const std::string& option) {
    std::string escaped;
    for (char c : option) {
        escaped += c == '-' ? std::string("\\-") : std::string(1, c);
    }
    return mentions(text, option) || mentions(text, escaped);
}

// The lines of a section: from the heading that `is_heading` accepts to the
// next line that `ends` accepts. Empty when there is no such heading.
template <typename IsHeading, typename Ends>
std::string section(const std::vector<std::string>& lines, IsHeading is_heading, Ends ends) {
    std::string text;
    bool inside = false;
    for (const auto& line : lines) {
        if (!inside) {
            inside = is_heading(line);
            if (inside) {
                text += line + '\n';
            }
            continue;
        }
        if (ends(line)) {
            break;
        }
        text += line + '\n';
    }
    return text;
}

bool starts_with(const std::string& s, const std::string& prefix) {
    return s.rfind(prefix, 0) == 0;
}

// "## simulate" in the Markdown reference.
std::string markdown_section(const std::vector<std::string>& lines, const std::string& sub) {
    return section(
        lines, [&](const std::string& l) { return trim(l) == "## " + sub; },
        [](const std::string& l) { return starts_with(l, "## ") || starts_with(l, "# "); });
}

// ".SS simulate" (optionally quoted, optionally followed by its synopsis) in
// the man page.
std::string man_section(const std::vector<std::string>& lines, const std::string& sub) {
    return section(
        lines,
        [&](const std::string& l) {
            if (!starts_with(l, ".SS ")) {
                return false;
            }
            std::string title = trim(l.substr(4));
            if (!title.empty() && title.front() == '"') {
                title.erase(0, 1);
            }
            for (const char* font : {"\\fB", "\\fI", "\\fR", "\\fP"}) {
                for (auto p = title.find(font); p != std::string::npos; p = title.find(font)) {
                    title.erase(p, 3);
                }
            }
            return title == sub || starts_with(title, sub + " ") || starts_with(title, sub + "\"");
        },
        [](const std::string& l) { return starts_with(l, ".SS") || starts_with(l, ".SH"); });
}

struct Command {
    std::string name;
    std::vector<std::string> options;
};

class HelpDocs : public ::testing::Test {
  protected:
    void SetUp() override {
        ASSERT_TRUE(fs::exists(kCliMd)) << kCliMd;
        ASSERT_TRUE(fs::exists(kManPage)) << kManPage;
        cli_md_ = read_lines(kCliMd);
        man_ = read_lines(kManPage);

        const auto main_help = run_cli({"--help"});
        ASSERT_EQ(main_help.code, 0) << main_help.err;
        global_options_ = long_options_of(main_help.out);
        for (const auto& name : subcommands_of(main_help.out)) {
            const auto help = run_cli({name, "--help"});
            ASSERT_EQ(help.code, 0) << name << " --help: " << help.err;
            commands_.push_back({name, long_options_of(help.out)});
        }
    }

    [[nodiscard]] bool is_global(const std::string& option) const {
        return std::find(global_options_.begin(), global_options_.end(), option) !=
               global_options_.end();
    }

    std::vector<std::string> cli_md_;
    std::vector<std::string> man_;
    std::vector<std::string> global_options_;
    std::vector<Command> commands_;
};

TEST_F(HelpDocs, TheHelpIsReadAsExpected) {
    // Guards the parsing above: a change of help layout must not make the
    // other tests pass vacuously.
    std::set<std::string> names;
    for (const auto& c : commands_) {
        names.insert(c.name);
    }
    for (const char* expected :
         {"simulate", "plan", "run", "compare", "validate", "schedules", "devices", "layers"}) {
        EXPECT_TRUE(names.count(expected)) << "`pipewright --help` no longer lists " << expected;
    }
    EXPECT_FALSE(names.count("worker")) << "the internal worker subcommand should stay hidden";
    EXPECT_TRUE(is_global("--help"));
    EXPECT_TRUE(is_global("--version"));
    for (const auto& c : commands_) {
        if (c.name == "simulate") {
            for (const char* o : {"--schedule", "--microbatches", "--batch-size", "--trace",
                                  "--export-csv", "--json"}) {
                EXPECT_NE(std::find(c.options.begin(), c.options.end(), o), c.options.end())
                    << "simulate --help should list " << o;
            }
        }
    }
}

TEST_F(HelpDocs, EverySubcommandHasASectionInBothDocuments) {
    for (const auto& c : commands_) {
        EXPECT_FALSE(markdown_section(cli_md_, c.name).empty())
            << "docs/cli.md has no section \"## " << c.name << "\" for the subcommand " << c.name;
        EXPECT_FALSE(man_section(man_, c.name).empty())
            << "docs/man/pipewright.1 has no \".SS " << c.name << "\" for the subcommand "
            << c.name;
    }
}

TEST_F(HelpDocs, EveryOptionOfEverySubcommandIsDocumented) {
    const std::string whole_md = join(cli_md_);
    const std::string whole_man = join(man_);
    for (const auto& c : commands_) {
        const std::string md = markdown_section(cli_md_, c.name);
        const std::string man = man_section(man_, c.name);
        for (const auto& option : c.options) {
            if (is_global(option)) {
                EXPECT_TRUE(mentions(whole_md, option))
                    << "docs/cli.md does not mention " << option;
                EXPECT_TRUE(man_mentions(whole_man, option))
                    << "docs/man/pipewright.1 does not mention " << option;
                continue;
            }
            EXPECT_TRUE(mentions(md, option))
                << "docs/cli.md does not document " << c.name << " " << option
                << " (in its section \"## " << c.name << "\")";
            EXPECT_TRUE(man_mentions(man, option))
                << "docs/man/pipewright.1 does not document " << c.name << " " << option
                << " (in its section \".SS " << c.name << "\", as \\-\\-" << option.substr(2)
                << ")";
        }
    }
}

TEST_F(HelpDocs, TheGlobalOptionsAreDocumented) {
    const std::string whole_md = join(cli_md_);
    const std::string whole_man = join(man_);
    for (const auto& option : global_options_) {
        EXPECT_TRUE(mentions(whole_md, option)) << "docs/cli.md does not mention " << option;
        EXPECT_TRUE(man_mentions(whole_man, option))
            << "docs/man/pipewright.1 does not mention " << option;
    }
}

}  // namespace
}  // namespace pipewright
