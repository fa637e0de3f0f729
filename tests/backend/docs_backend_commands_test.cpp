// The docs' other commands, run (issue 32): every console block of docs/ and
// the README with a command that cli/docs_commands_test.cpp does not run (the
// backend's run, profile, import, launch-files and compare, and commands that
// write files) is run here by the real `pipewright`, command after command,
// and each command's output must show the lines the doc shows.
//
// Where: each doc file is one session in a temporary folder holding a copy
// of assets/ (a copy, since launch-files writes beside its project), its
// blocks run in order, each from the top of the folder (`$ cd DIR` moves
// within it). The paths the docs name resolve as they do at the top of the
// tree, what the commands write (--out files, runs/ folders, profile.json,
// sim.json, PROJECT-launch/) lands in the folder, and a later block reads
// what an earlier one wrote (getting-started's compare reads the run of its
// section 4).
//
// Matching (docs_console_blocks.h, shared with docs_commands_test): the
// doc's lines appear in order, each right after the one before, unless a
// line of "..." or "…" stands between them; a doc line ending in "…" matches
// any line it starts. These commands measure the machine, so every number
// of both lines is a placeholder, with the unit after it one of its kind
// (72.0 ms and 1.20 s are both "<time>", 173 MiB "<size>", "1 thread"
// "<threads>"; 889 samples/s is "# samples/s"), and runs of spaces count as
// one (columns are as wide as their figures). What differs from run to run
// is matched too: the session's folder is printed as "/…" (the doc's
// "/…/assets/examples/gpt3-175b-p4d.json"), this machine's name where
// profile prints it as the docs' "vm", a dated run folder a doc names
// (runs/mlp-20261202-114012) stands for the session's latest run of that
// model, a busy machine's warning and a long search's progress lines are
// left out, and a run whose ranks a busy machine left unbound reads as the
// docs' bound one.
//
// The runs are those the docs show, 20 steps of the 2-rank MLP, a few
// seconds each: --steps is not changed (the step counts shown are compared
// as placeholders anyway).
//
// Commands that cannot run here are listed in kSkips with the reason, and
// printed as skipped; a command that is neither run nor listed fails the
// test, as does a listed one that the docs no longer show, and fewer
// commands run than the docs show today.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <torch/cuda.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "../docs_console_blocks.h"
#include "pipewright/core/input_file.h"

namespace pipewright {
namespace {

namespace fs = std::filesystem;
const fs::path kRoot = fs::path(PIPEWRIGHT_ASSETS_DIR).parent_path();

// The commands the docs show that run here today: fewer means a block is
// skipped that should run (or the reader broke).
constexpr int kCommandsRun = 20;

bool no_cuda() {
    return !torch::cuda::is_available();
}

struct Skip {
    std::string file;
    std::string command;  // the doc's command starts with this
    std::string reason;
    std::function<bool()> applies = [] { return true; };
};

const std::vector<Skip>& skips() {
    static const std::vector<Skip> kSkips{
        {"docs/cli.md", "pipewright simulate p.json", "p.json is the reader's project; none ships"},
        {"docs/cli.md", "pipewright plan big.json", "big.json is the reader's project; none ships"},
        {"docs/cli.md", "python3 -m torch.distributed.run",
         "torchrun's command line (of p.json, the reader's project)"},
        {"docs/cli.md", "srun ", "Slurm's command line (of p.json, the reader's project)"},
        {"docs/cli.md", "pipewright run p.json", "p.json is the reader's project; none ships"},
        {"docs/cli.md", "pipewright calibrate --out h100.json",
         "calibrates a GPU (an H100); with no CUDA device it would measure this CPU", no_cuda},
        {"docs/cli.md",
         "pipewright simulate assets/examples/llama3.1-8b-h100-node.json --calibration",
         "h100.json is the GPU calibration above", no_cuda},
        {"docs/cli.md", "pipewright plan assets/examples/llama3.1-8b-h100-node.json --calibration",
         "h100.json is the GPU calibration above", no_cuda},
        {"docs/cli.md", "pipewright import resnet50.pt",
         "resnet50.pt is the reader's TorchScript file; none ships"},
        {"docs/cli.md", "pipewright simulate resnet50.json",
         "resnet50.json is the import of resnet50.pt above"},
        {"docs/cli.md", "pipewright launch-files p.json",
         "p.json is the reader's project; none ships"},
        {"docs/cli.md", "sbatch ", "Slurm's command line (of p.json's launch files)"},
        {"docs/cli.md", "pipewright compare sim.json runs/mlp-1 runs/mlp-2 runs/mlp-3",
         "three runs the doc does not make (its one run is compared the line before)"},
        {"docs/torchscript-import.md", "pipewright import resnet50.pt",
         "resnet50.pt is the reader's TorchScript file; none ships"},
        {"docs/torchscript-import.md", "pipewright simulate resnet50.json",
         "resnet50.json is the import of resnet50.pt"},
        {"docs/torchscript-import.md", "pipewright plan resnet50.json",
         "resnet50.json is the import of resnet50.pt"},
        {"docs/torchscript-import.md", "pipewright run resnet50.json",
         "resnet50.json is the import of resnet50.pt"},
        {"docs/torchscript-import.md", "pipewright profile gpt.json",
         "gpt.json is the reader's import of a GPT module; none ships"},
        {"docs/torchscript-import.md", "pipewright simulate gpt.json",
         "gpt.json is the reader's import of a GPT module; none ships"},
    };
    return kSkips;
}

// Whether docs_commands_test runs this command of a block.
bool run_by_front_end_test(const docs::DocCommand& c) {
    return !c.words.empty() && c.words[0] == "pipewright" &&
           docs::front_end_runnable({c.words.begin() + 1, c.words.end()}, kRoot);
}

std::string quoted(const std::string& s) {
    std::string out = "'";
    for (const char ch : s) {
        out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    }
    return out + "'";
}

void replace_all(std::string& s, const std::string& from, const std::string& to) {
    if (from.empty()) {
        return;
    }
    for (auto at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
        s.replace(at, from.size(), to);
    }
}

std::string host_name() {
    std::array<char, 256> name{};
    return ::gethostname(name.data(), name.size() - 1) == 0 ? std::string(name.data()) : "";
}

// One doc file's commands, in a folder of their own.
class Session {
  public:
    Session(const fs::path& dir, const fs::path& outputs) : dir_(dir), outputs_(outputs) {
        fs::create_directories(dir_);
        fs::copy(kRoot / "assets", dir_ / "assets", fs::copy_options::recursive);
    }

    [[nodiscard]] const fs::path& dir() const { return dir_; }

    struct Result {
        int code = -1;
        std::vector<std::string> lines;  // stdout and stderr into one file, as matched
        std::string output;
    };

    // Runs `pipewright ARGS` in `cwd` (relative to the session's folder).
    Result run(const std::vector<std::string>& args, const fs::path& cwd) {
        std::string cmd = "cd " + quoted((dir_ / cwd).string()) + " && timeout -k 10 240 " +
                          quoted(PIPEWRIGHT_CLI_PATH);
        for (const auto& a : args) {
            cmd += " " + quoted(stands_for(a, cwd));
        }
        const fs::path out = outputs_ / ("command-" + std::to_string(++count_) + ".txt");
        cmd += " > " + quoted(out.string()) + " 2>&1 < /dev/null";
        const int status = std::system(cmd.c_str());
        Result r;
        r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        r.output = read_text_file(out);
        std::string text = r.output;
        replace_all(text, fs::weakly_canonical(dir_).string(), "/…");
        replace_all(text, dir_.string(), "/…");
        if (const std::string host = host_name(); !host.empty()) {
            replace_all(text, ": measured on " + host + " (", ": measured on vm (");
        }
        // The docs show an idle machine's runs, whose ranks are bound to
        // cores of their own; on a machine busy with other tests they stay
        // unbound and say why at the end of the run's first line.
        static const std::regex kUnbound(", unbound: other work keeps [0-9.]+ cores busy$");
        for (auto& line : docs::output_lines(text)) {
            line = std::regex_replace(line, kUnbound, ", each rank on a core of its own");
            if (!line.starts_with("pipewright: warning: this machine is busy") &&
                !line.starts_with("pipewright: planning… ")) {
                r.lines.push_back(std::move(line));
            }
        }
        return r;
    }

  private:
    // A dated run folder that the session has not made
    // (runs/mlp-20261202-114012, as a doc shows it) stands for the session's
    // latest run of that model (runs/mlp-20261206-064058).
    [[nodiscard]] std::string stands_for(const std::string& arg, const fs::path& cwd) const {
        static const std::regex kDated(R"(runs/(.+)-\d{8}-\d{6}(-\d+)?/?)");
        static const std::regex kStamp(R"(\d{8}-\d{6}(-\d+)?)");
        std::smatch m;
        if (!std::regex_match(arg, m, kDated) || fs::exists(dir_ / cwd / arg) ||
            !fs::is_directory(dir_ / cwd / "runs")) {
            return arg;
        }
        const std::string model = m[1].str() + "-";
        std::string latest;
        for (const auto& entry : fs::directory_iterator(dir_ / cwd / "runs")) {
            const std::string name = entry.path().filename().string();
            if (name.starts_with(model) && std::regex_match(name.substr(model.size()), kStamp) &&
                name > latest) {
                latest = name;
            }
        }
        return latest.empty() ? arg : "runs/" + latest;
    }

    fs::path dir_;
    fs::path outputs_;
    int count_ = 0;
};

// Lines as matched, numbers as placeholders, for a failure's message.
std::string as_matched(const std::vector<std::string>& lines) {
    std::string out;
    for (const auto& l : lines) {
        out += "      " + docs::with_placeholders(l) + "\n";
    }
    return out;
}

TEST(DocsBackendCommands, EveryRunnableBlockPrintsWhatTheDocShows) {
    const fs::path top =
        fs::temp_directory_path() / ("pipewright-docs-commands-" + std::to_string(::getpid()));
    fs::remove_all(top);
    fs::create_directories(top / "outputs");
    std::map<std::string, Session> sessions;
    std::vector<int> skips_used(skips().size(), 0);
    int ran = 0;
    for (const auto& block : docs::console_blocks(kRoot)) {
        if (std::all_of(block.commands.begin(), block.commands.end(), run_by_front_end_test)) {
            continue;  // docs_commands_test's
        }
        auto session = sessions.find(block.file);
        if (session == sessions.end()) {
            const std::string name = fs::path(block.file).stem().string();
            session = sessions.try_emplace(block.file, top / name, top / "outputs").first;
        }
        fs::path cwd = ".";
        for (const auto& c : block.commands) {
            const std::string where = block.file + ":" + std::to_string(c.line) + ": ";
            const auto skip = std::find_if(skips().begin(), skips().end(), [&](const Skip& s) {
                return s.file == block.file && c.text.starts_with(s.command) && s.applies();
            });
            if (skip != skips().end()) {
                ++skips_used[skip - skips().begin()];
                std::cout << "[ skipped  ] " << where << "$ " << c.text << "\n             "
                          << skip->reason << "\n";
                continue;
            }
            if (c.words.size() == 2 && c.words[0] == "cd") {
                cwd /= c.words[1];
                ASSERT_TRUE(fs::is_directory(session->second.dir() / cwd)) << where << c.text;
                continue;
            }
            ASSERT_TRUE(!c.words.empty() && c.words[0] == "pipewright")
                << where << "$ " << c.text
                << "\n  a command this test can neither run nor skips (add it to kSkips with "
                   "the reason)";
            ++ran;
            const auto r = session->second.run({c.words.begin() + 1, c.words.end()}, cwd);
            EXPECT_EQ(r.code, 0) << where << "$ " << c.text << "\n" << r.output;
            const std::string missing =
                docs::first_missing(c.expected, r.lines, docs::shows_with_placeholders);
            EXPECT_TRUE(missing.empty())
                << where << "$ " << c.text << "\n  the doc shows a line the output lacks:\n    "
                << missing << "\n  numbers as placeholders, the doc's lines read\n"
                << as_matched(c.expected) << "  and the output's\n"
                << as_matched(r.lines);
        }
    }
    for (std::size_t i = 0; i < skips().size(); ++i) {
        EXPECT_TRUE(skips_used[i] > 0 || !skips()[i].applies())
            << "kSkips lists a command the docs no longer show: " << skips()[i].file << ": "
            << skips()[i].command;
    }
    EXPECT_GE(ran, kCommandsRun) << "fewer of the docs' commands ran than the docs show today";
    std::cout << "[ ran      ] " << ran << " of the docs' commands\n";
    if (::testing::Test::HasFailure()) {
        std::cout << "[ kept     ] " << top.string() << " (the sessions' folders and outputs)\n";
    } else {
        fs::remove_all(top);
    }
}

}  // namespace
}  // namespace pipewright
