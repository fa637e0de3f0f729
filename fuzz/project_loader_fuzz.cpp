// libFuzzer target for the user-facing loaders: project files and schedule
// CSVs built from arbitrary bytes must never crash, hang or leak. Only the
// documented exceptions are caught; anything else escapes and the fuzzer
// reports it.
//
// Input layout: the bytes before the first NUL are a project file; the bytes
// after it (the whole input when there is no NUL) are a schedule CSV. A
// project that names a CSV schedule is given that CSV, written to a private
// temporary folder, instead of a path of its choosing: the fuzzer must not
// read whatever file an input names (/dev/stdin would block, /dev/zero never
// ends).

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

#include "pipewright/core/analysis.h"
#include "pipewright/core/diagnostics.h"
#include "pipewright/core/project_io.h"
#include "pipewright/core/schedule.h"
#include "pipewright/core/schedule_check.h"
#include "pipewright/core/schedule_csv.h"
#include "pipewright/core/schedule_generators.h"

namespace {

constexpr const char* kCsvName = "schedule.csv";

std::filesystem::path g_scratch;  // removed at exit

void remove_scratch() {
    std::error_code ignored;
    std::filesystem::remove_all(g_scratch, ignored);
}

const std::filesystem::path& scratch_dir() {
    if (g_scratch.empty()) {
        std::error_code ec;
        const std::filesystem::path tmp = std::filesystem::temp_directory_path(ec);
        std::string pattern =
            ((ec ? std::filesystem::path("/tmp") : tmp) / "pipewright-fuzz.XXXXXX").string();
        if (::mkdtemp(pattern.data()) == nullptr) {
            std::perror("project_loader_fuzz: mkdtemp");
            std::abort();
        }
        g_scratch = pattern;
        std::atexit(remove_scratch);
    }
    return g_scratch;
}

// A broken promise of the API: report it like a crash.
void require(bool condition, const char* what) {
    if (!condition) {
        std::fprintf(stderr, "project_loader_fuzz: contract violated: %s\n", what);
        std::abort();
    }
}

void fuzz_project(const std::string& text, const std::string& csv) {
    pipewright::LoadedProject loaded = pipewright::parse_project_text(text);  // never throws
    require(loaded.project.has_value() || !loaded.diagnostics.empty(),
            "parse_project_text returned no project and no diagnostic");
    if (!loaded.project || !loaded.diagnostics.empty()) {
        return;
    }
    pipewright::Project& project = *loaded.project;
    pipewright::AnalysisOptions options;  // builtin catalog, the project's own settings
    if (project.training.schedule.from_csv()) {
        const std::filesystem::path file = scratch_dir() / kCsvName;
        std::ofstream out(file, std::ios::binary | std::ios::trunc);
        out.write(csv.data(), static_cast<std::streamsize>(csv.size()));
        out.close();
        require(!out.fail(), "cannot write the scratch schedule CSV");
        project.training.schedule.csv_path = kCsvName;
        options.base_dir = scratch_dir();
    }
    pipewright::Diagnostics problems;
    const std::optional<pipewright::AnalyzedProject> analyzed =
        pipewright::analyze_project(project, options, problems);
    require(analyzed.has_value() == problems.empty(),
            "analyze_project must return a project exactly when it reports no problem");
}

void fuzz_schedule_csv(const std::string& text) {
    pipewright::Schedule schedule;
    try {
        schedule = pipewright::schedule_from_csv(text);
    } catch (const pipewright::InputError&) {
        return;  // documented: malformed cells, misplaced stages
    }
    const pipewright::Diagnostics problems = pipewright::check_schedule(schedule);
    if (problems.empty()) {
        // A sound schedule stays sound once its sends and receives are added.
        const pipewright::Schedule lowered = pipewright::add_communication(schedule);
        require(pipewright::check_schedule(lowered).empty(),
                "check_schedule accepts a schedule but rejects add_communication of it");
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view all(reinterpret_cast<const char*>(data), size);
    const std::size_t nul = all.find('\0');
    const std::string project_text(all.substr(0, nul));
    const std::string csv_text(nul == std::string_view::npos ? all : all.substr(nul + 1));
    fuzz_project(project_text, csv_text);
    fuzz_schedule_csv(csv_text);
    return 0;
}
