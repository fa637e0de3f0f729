#include "run/run_folder_preparation.h"

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <system_error>
#include <vector>

#include "pipewright/backend/modules.h"
#include "pipewright/core/run_folder_names.h"

namespace pipewright::backend {
namespace fs = std::filesystem;

std::string default_run_folder(const std::string& model_name) {
    const std::time_t now = std::time(nullptr);
    std::tm local{};
    localtime_r(&now, &local);
    return first_free_run_folder("runs/" + run_folder_stem(model_name, local),
                                 [](const std::string& dir) { return fs::exists(dir); });
}

void prepare_run_folder(const std::string& dir, const std::string& project_file, bool overwrite,
                        const std::vector<std::string>& keep) {
    std::error_code ec;
    if (!fs::exists(dir, ec)) {
        fs::create_directories(dir, ec);
        if (ec) {
            throw BackendError("cannot create " + dir + ": " + ec.message());
        }
        return;
    }
    if (!fs::is_directory(dir, ec)) {
        throw BackendError("--out " + dir + " is a file, not a folder");
    }
    std::vector<fs::path> entries;
    const fs::path project = fs::weakly_canonical(project_file, ec);
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        std::error_code same;
        const std::string name = it->path().filename().string();
        if (!fs::equivalent(it->path(), project, same) &&
            std::find(keep.begin(), keep.end(), name) == keep.end()) {
            entries.push_back(it->path());
        }
    }
    if (ec) {
        throw BackendError("cannot read " + dir + ": " + ec.message());
    }
    if (entries.empty()) {
        return;
    }
    std::sort(entries.begin(), entries.end());
    if (!overwrite) {
        throw BackendError(
            "--out " + dir + " already holds files (" + entries.front().filename().string() +
            (entries.size() > 1 ? " and " + std::to_string(entries.size() - 1) + " more" : "") +
            "); choose an empty or new folder, or give --overwrite to replace "
            "the run in it");
    }
    for (const auto& e : entries) {
        if (!is_run_output(e.filename().string()) || !fs::is_regular_file(e, ec)) {
            throw BackendError("--overwrite: " + dir + " holds " + e.filename().string() +
                               ", which no run writes; refusing to clear it (choose another "
                               "--out)");
        }
    }
    for (const auto& e : entries) {
        if (!fs::remove(e, ec) && ec) {
            throw BackendError("--overwrite: cannot remove " + e.string() + ": " + ec.message());
        }
    }
}

}  // namespace pipewright::backend
