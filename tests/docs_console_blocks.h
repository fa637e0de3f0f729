#pragma once

// The docs' console blocks, and the comparison of what a block shows with
// what its commands print (issue 32). Shared by cli/docs_commands_test.cpp,
// which runs the front end's commands that write nothing and compares their
// output as shown, and backend/docs_backend_commands_test.cpp, which runs
// every other block in a temporary folder and compares its figures as
// placeholders, since they measure the machine.
//
// A console block is a ```console or ```text fence of README.md or
// docs/*.md; each "$ " line in it is a command (a line ending in "\" goes on
// on the next, a word starting with "#" begins a comment) and the lines up
// to the next command are what the doc shows it printing.
//
// Matching: the doc's lines must appear in the output in order, each right
// after the one before, unless a line of "..." or "…" stands between them
// (any lines may be left out there); a doc line ending in "…" matches any
// line it starts.

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pipewright::docs {

namespace fs = std::filesystem;

struct DocCommand {
    int line = 0;                       // of its "$ " line
    std::string text;                   // after "$ ", without a comment
    std::vector<std::string> words;     // of `text`, split at spaces
    std::vector<std::string> expected;  // the doc's output lines
};

struct DocBlock {
    std::string file;  // relative to the tree's top: "docs/cli.md"
    int line = 0;      // of its opening fence
    std::vector<DocCommand> commands;
};

inline std::vector<std::string> words(const std::string& text) {
    std::istringstream in(text);
    std::vector<std::string> out;
    for (std::string w; in >> w;) {
        out.push_back(w);
    }
    return out;
}

inline std::string rtrim(std::string s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())) != 0) {
        s.pop_back();
    }
    return s;
}

// A command's output, line by line, without trailing spaces.
inline std::vector<std::string> output_lines(const std::string& output) {
    std::vector<std::string> out;
    std::istringstream in(output);
    for (std::string line; std::getline(in, line);) {
        out.push_back(rtrim(line));
    }
    return out;
}

// README.md, then docs/*.md in name order.
inline std::vector<fs::path> doc_files(const fs::path& root) {
    std::vector<fs::path> docs;
    for (const auto& entry : fs::directory_iterator(root / "docs")) {
        if (entry.path().extension() == ".md") {
            docs.push_back(entry.path());
        }
    }
    std::sort(docs.begin(), docs.end());
    std::vector<fs::path> out{root / "README.md"};
    for (auto& d : docs) {
        out.push_back(std::move(d));
    }
    return out;
}

// Every console block that shows at least one command, in file order.
inline std::vector<DocBlock> console_blocks(const fs::path& root) {
    std::vector<DocBlock> out;
    for (const auto& file : doc_files(root)) {
        std::ifstream in(file);
        bool fenced = false;
        bool console = false;
        bool continued = false;  // the command before ended in "\"
        DocBlock block;
        int number = 0;
        for (std::string line; std::getline(in, line);) {
            ++number;
            line = rtrim(line);
            if (line.starts_with("```")) {
                if (fenced && console && !block.commands.empty()) {
                    out.push_back(block);
                }
                console = !fenced && (line == "```console" || line == "```text");
                fenced = !fenced;
                block = {fs::relative(file, root).string(), number, {}};
                continued = false;
                continue;
            }
            if (!console) {
                continue;
            }
            if (continued || line.starts_with("$ ")) {
                const bool fresh = !continued;
                std::string text = fresh ? line.substr(2) : line;
                continued = text.ends_with("\\");
                if (continued) {
                    text.pop_back();
                }
                if (const auto comment = (" " + text).find(" #"); comment != std::string::npos) {
                    text = text.substr(0, comment);
                }
                if (fresh) {
                    block.commands.push_back({number, "", {}, {}});
                }
                auto& c = block.commands.back();
                c.words = words(c.text + " " + text);
                c.text.clear();
                for (const auto& w : c.words) {
                    c.text += (c.text.empty() ? "" : " ") + w;
                }
                continue;
            }
            if (!block.commands.empty()) {
                block.commands.back().expected.push_back(line);
            }
        }
    }
    return out;
}

// Whether cli/docs_commands_test.cpp runs a `pipewright ARGS` line of the
// docs: a front-end command on files that ship, writing nothing. The other
// commands' blocks are run by backend/docs_backend_commands_test.cpp.
inline bool front_end_runnable(const std::vector<std::string>& args, const fs::path& root) {
    static const std::vector<std::string> kFrontEnd{"simulate",  "plan",    "validate",
                                                    "schedules", "devices", "layers"};
    if (args.empty() || std::find(kFrontEnd.begin(), kFrontEnd.end(), args[0]) == kFrontEnd.end()) {
        return false;
    }
    for (const auto& a : args) {
        if (a == ">" || a == "|" || a == "\\" || a == "--trace" || a == "--timeline" ||
            a == "--apply" || a == "--export-csv" || a == "--profile" || a == "--calibration") {
            return false;
        }
        if ((a.ends_with(".json") || a.ends_with(".csv")) && !fs::exists(root / a)) {
            return false;
        }
    }
    return true;
}

// The doc's line as shown, or a doc line ending in "…" that `actual` starts.
inline bool shows(const std::string& doc, const std::string& actual) {
    constexpr std::string_view kEllipsis = "…";
    if (doc.ends_with(kEllipsis)) {
        return actual.starts_with(std::string_view(doc).substr(0, doc.size() - kEllipsis.size()));
    }
    return doc == actual;
}

// `line` with every number as "#", or with the unit after it as what it
// measures ("<time>", "<size>", "<size>/s", "<FLOP/s>", "<threads>"), and
// its spaces trimmed and each run of them as one: what a measurement
// prints, whatever it measured (72.0 ms and 1.20 s are both "<time>";
// 889 samples/s is "# samples/s"). A number is digits with "." or ","
// between them (1,234.5), with a sign when it begins a word (-99.5 %,
// +3.6 %), that is not part of a word (cpu0, gpt3-175b keep their digits;
// runs/mlp-20261202-114012 becomes runs/mlp-#-#). Its unit is a time (ns,
// µs, ms, s, min, h), a size (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB) or one
// a second, FLOP a second (TFLOP/s), or threads (a run gets the cores there
// are: "1 thread", "4 threads").
inline std::string with_placeholders(const std::string& line) {
    // Unit and placeholder, the longest unit first ("ms" before "s", "MiB/s"
    // before "MiB").
    static const std::vector<std::pair<std::string, std::string>> kUnits = [] {
        std::vector<std::pair<std::string, std::string>> units;
        for (const char* u : {"B", "KB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "TiB"}) {
            units.emplace_back(u, "<size>");
            units.emplace_back(std::string(u) + "/s", "<size>/s");
        }
        for (const char* u : {"FLOP/s", "GFLOP/s", "TFLOP/s", "PFLOP/s"}) {
            units.emplace_back(u, "<FLOP/s>");
        }
        for (const char* u : {"ns", "µs", "us", "ms", "s", "min", "h"}) {
            units.emplace_back(u, "<time>");
        }
        units.emplace_back("threads", "<threads>");
        units.emplace_back("thread", "<threads>");
        std::stable_sort(units.begin(), units.end(), [](const auto& x, const auto& y) {
            return x.first.size() > y.first.size();
        });
        return units;
    }();
    const auto digit = [&](std::size_t i) {
        return i < line.size() && std::isdigit(static_cast<unsigned char>(line[i])) != 0;
    };
    const auto word_char = [&](std::size_t i) {
        const auto c = static_cast<unsigned char>(line[i]);
        return std::isalnum(c) != 0 || c == '_' || c >= 0x80;
    };
    constexpr std::string_view kMinus = "−";
    std::string out;
    std::size_t i = 0;
    while (i < line.size()) {
        const bool after_word = i > 0 && (word_char(i - 1) || line[i - 1] == '.');
        std::size_t start = i;
        if (!after_word && (line[i] == '-' || line[i] == '+') && digit(i + 1)) {
            start = i + 1;
        } else if (!after_word && std::string_view(line).substr(i).starts_with(kMinus) &&
                   digit(i + kMinus.size())) {
            start = i + kMinus.size();
        }
        if (after_word || !digit(start)) {
            out += line[i++];
            continue;
        }
        std::size_t end = start;
        while (digit(end) || ((line[end] == '.' || line[end] == ',') && digit(end + 1))) {
            ++end;
        }
        std::size_t past = end;  // past the unit, when there is one
        std::string placeholder = "#";
        for (const auto& [unit, kind] : kUnits) {
            const std::size_t at = end < line.size() && line[end] == ' ' ? end + 1 : end;
            if (std::string_view(line).substr(at).starts_with(unit) &&
                (at + unit.size() == line.size() || !word_char(at + unit.size()))) {
                past = at + unit.size();
                placeholder = kind;
                break;
            }
        }
        if (past == end && end < line.size() && word_char(end)) {
            out.append(line, i, end - i);  // part of a word: 175b, 4d
            i = end;
            continue;
        }
        out += placeholder;
        i = past;
    }
    std::string collapsed;
    for (const char c : out) {
        if (c == ' ' || c == '\t') {
            if (!collapsed.empty() && collapsed.back() != ' ') {
                collapsed += ' ';
            }
        } else {
            collapsed += c;
        }
    }
    return rtrim(collapsed);
}

// `shows`, with the numbers of both lines as placeholders.
inline bool shows_with_placeholders(const std::string& doc, const std::string& actual) {
    return shows(with_placeholders(doc), with_placeholders(actual));
}

using SameLine = std::function<bool(const std::string& doc, const std::string& actual)>;

inline bool is_gap(const std::string& doc) {
    const auto first = doc.find_first_not_of(' ');
    return first != std::string::npos && (doc.substr(first) == "..." || doc.substr(first) == "…");
}

// "" when `actual` shows the doc's lines (`expected`), each compared by
// `same`; else the first doc line that no way of matching the ones before
// it can be followed by, and the output's line where it was looked for (or
// from, after a gap).
// Every way is tried: after a gap, a doc line that matches several output
// lines ("step #/# loss # #") may stand for any of them.
inline std::string first_missing(const std::vector<std::string>& expected,
                                 const std::vector<std::string>& actual, const SameLine& same) {
    // The output lines (ascending) right before which the doc's lines so
    // far can end.
    std::vector<std::size_t> reach{0};
    bool gap = false;
    for (const auto& doc : expected) {
        if (is_gap(doc)) {
            gap = true;
            continue;
        }
        std::vector<std::size_t> next;
        if (gap) {
            for (std::size_t p = reach.front(); p < actual.size(); ++p) {
                if (same(doc, actual[p])) {
                    next.push_back(p + 1);
                }
            }
        } else {
            for (const std::size_t p : reach) {
                if (p < actual.size() && same(doc, actual[p])) {
                    next.push_back(p + 1);
                }
            }
        }
        if (next.empty()) {
            const std::size_t at = reach.front();
            const std::string there = at < actual.size() ? actual[at] : std::string("");
            return doc + (gap ? "\n    (no line of the output from \"" + there + "\" on)"
                              : "\n    (the output has \"" + there + "\" there)");
        }
        reach = std::move(next);
        gap = false;
    }
    return "";
}

}  // namespace pipewright::docs
