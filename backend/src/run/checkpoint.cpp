#include "run/checkpoint.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <system_error>

#include "pipewright/backend/backend_error.h"
#include "pipewright/backend/modules.h"
#include "pipewright/core/launch_files.h"
#include "pipewright/core/project_io.h"
#include "run/run_configuration.h"

namespace pipewright::backend {
namespace fs = std::filesystem;
namespace {

constexpr const char* kFormat = "pipewright-checkpoint";
constexpr int kVersion = 1;

// The steps done by a step folder's name ("step-000004"), or nullopt.
std::optional<int> step_of_name(const std::string& name) {
    static const std::regex pattern(R"(step-([0-9]{6,9}))");
    std::smatch m;
    if (!std::regex_match(name, m, pattern)) {
        return std::nullopt;
    }
    return std::stoi(m[1].str());
}

// The step folders in `dir`, newest first.
std::vector<std::pair<int, fs::path>> step_folders(const fs::path& dir) {
    std::vector<std::pair<int, fs::path>> found;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        if (const auto step = step_of_name(it->path().filename().string());
            step && it->is_directory(ec)) {
            found.emplace_back(*step, it->path());
        }
    }
    std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a > b; });
    return found;
}

bool has_manifest(const fs::path& folder) {
    std::error_code ec;
    return fs::is_regular_file(folder / kCheckpointManifest, ec);
}

nlohmann::json read_manifest(const fs::path& folder) {
    const fs::path file = folder / kCheckpointManifest;
    std::ifstream in(file);
    if (!in) {
        throw BackendError(folder.string() + " is torn: it has no " + kCheckpointManifest +
                           " (a save that never finished, or a folder damaged since)");
    }
    nlohmann::json manifest;
    try {
        manifest = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception&) {
        throw BackendError(file.string() + " is not JSON: the checkpoint is damaged");
    }
    if (!manifest.is_object() || manifest.value("format", "") != kFormat ||
        !manifest.contains("step") || !manifest.at("step").is_number_integer() ||
        !manifest.contains("world_size") || !manifest.at("world_size").is_number_integer() ||
        !manifest.contains("ranks") || !manifest.at("ranks").is_array() ||
        !manifest.contains("layout") || !manifest.contains("fingerprint")) {
        throw BackendError(file.string() + " is not a Pipewright checkpoint manifest (format " +
                           kFormat + " with step, world_size, ranks, layout and fingerprint)");
    }
    if (manifest.value("version", 0) != kVersion) {
        throw BackendError(file.string() + " has version " +
                           manifest.value("version", nlohmann::json()).dump() + "; this " +
                           "Pipewright reads version " + std::to_string(kVersion));
    }
    return manifest;
}

// The older complete checkpoints beside `folder`, as a hint.
std::string older_hint(const fs::path& folder) {
    const int mine = step_of_name(folder.filename().string()).value_or(0);
    for (const auto& [step, path] : step_folders(folder.parent_path())) {
        if (step < mine && has_manifest(path)) {
            return "; the older " + path.string() + " has a manifest: give --resume " +
                   path.string() + " to continue from it";
        }
    }
    return "";
}

// Throws when the checkpoint in `folder` is torn or of another run.
int check_checkpoint(const fs::path& folder, const nlohmann::json& layout, int world_size,
                     NodeRanks ranks) {
    nlohmann::json manifest;
    try {
        manifest = read_manifest(folder);
    } catch (const BackendError& e) {
        throw BackendError(e.what() + older_hint(folder));
    }
    const int saved_world = manifest.at("world_size").get<int>();
    if (saved_world != world_size) {
        throw BackendError(folder.string() + " was saved by a run of " +
                           std::to_string(saved_world) + " ranks; this one has " +
                           std::to_string(world_size) +
                           ": a checkpoint resumes only the layout that saved it");
    }
    if (manifest.at("fingerprint") != layout_fingerprint(layout)) {
        const std::string diff = configuration_difference(layout, manifest.at("layout"));
        throw BackendError(folder.string() + " is of another project or layout (" +
                           (diff.empty() ? std::string("its fingerprint differs") : diff) +
                           "; \"here\" is this run, \"there\" the checkpoint)");
    }
    std::map<int, nlohmann::json> listed;
    for (const auto& r : manifest.at("ranks")) {
        if (r.is_object() && r.contains("rank") && r.at("rank").is_number_integer()) {
            listed[r.at("rank").get<int>()] = r;
        }
    }
    for (int r = ranks.first; r < ranks.first + ranks.count; ++r) {
        const auto entry = listed.find(r);
        if (entry == listed.end() || !entry->second.contains("bytes") ||
            !entry->second.at("bytes").is_number_unsigned()) {
            throw BackendError(folder.string() + " is torn: its manifest lists no file of rank " +
                               std::to_string(r) + older_hint(folder));
        }
        const fs::path file = folder / rank_checkpoint_file(r);
        const auto want = entry->second.at("bytes").get<std::uintmax_t>();
        std::error_code ec;
        const std::uintmax_t size = fs::file_size(file, ec);
        if (ec) {
            throw BackendError(folder.string() + " is torn: " + file.filename().string() +
                               " is missing" + older_hint(folder));
        }
        if (size != want) {
            throw BackendError(folder.string() + " is torn: " + file.filename().string() + " has " +
                               std::to_string(size) + " bytes, the manifest says " +
                               std::to_string(want) + older_hint(folder));
        }
    }
    return manifest.at("step").get<int>();
}

// The precision as projects spell it ("float64"), for the refusals.
std::string dtype_name(torch::Dtype dtype) {
    switch (dtype) {
        case torch::kFloat64:
            return "float64";
        case torch::kFloat32:
            return "float32";
        case torch::kBFloat16:
            return "bfloat16";
        case torch::kFloat16:
            return "float16";
        default:
            return c10::toString(dtype);
    }
}

void sync_folder(const fs::path& folder) {
    const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        ::fsync(fd);
        ::close(fd);
    }
}

}  // namespace

nlohmann::json checkpoint_layout(const AnalyzedProject& p, const RunSettings& s) {
    nlohmann::json project = training_definition(p);
    // How long a run trains changes nothing of a step it takes, and the
    // schedule only the order of a step's work: the state a rank holds is
    // its stages' (stage_ranks below), whichever schedule ran them.
    if (project.contains("training") && project.at("training").is_object()) {
        for (const char* key : {"steps", "schedule", "schedule_csv"}) {
            project.at("training").erase(key);
        }
    }
    nlohmann::json layout = {{"world_size", run_process_count(p)},
                             {"ranks", p.num_ranks()},
                             {"stages", p.schedule.num_stages},
                             {"stage_ranks", p.schedule.stage_rank},
                             {"microbatches", p.microbatches},
                             {"batch_size", p.microbatches * p.microbatch_size},
                             {"dtype", dtype_name(run_dtype(p, s.dtype))},
                             {"data_parallel", p.data_parallel()},
                             {"zero_stage", p.project.data_parallel.zero_stage},
                             {"tensor_parallel", p.project.tensor_parallel.size},
                             {"project", project}};
    // Which experts a rank holds (only when split: the layouts of runs
    // without experts keep the fingerprint their checkpoints were saved with).
    if (p.project.expert_parallel.size > 1) {
        layout["expert_parallel"] = p.project.expert_parallel.size;
    }
    return layout;
}

std::string layout_fingerprint(const nlohmann::json& layout) {
    std::uint64_t hash = 14695981039346656037ULL;
    for (const unsigned char c : layout.dump()) {
        hash = (hash ^ c) * 1099511628211ULL;
    }
    char text[17];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
    return text;
}

std::string checkpoint_folder_name(int steps_done) {
    char name[32];
    std::snprintf(name, sizeof name, "step-%06d", steps_done);
    return name;
}

std::string rank_checkpoint_file(int rank) {
    return "rank-" + std::to_string(rank) + ".pt";
}

CheckpointChoice choose_checkpoint(const std::string& dir, const nlohmann::json& layout,
                                   int world_size, NodeRanks ranks) {
    std::error_code ec;
    const fs::path given = fs::absolute(dir, ec).lexically_normal();
    if (!fs::is_directory(given, ec)) {
        throw BackendError(dir + " is not a folder of checkpoints");
    }
    fs::path folder = given;
    if (!has_manifest(given) && !step_of_name(given.filename().string())) {
        const auto found = step_folders(given);
        if (found.empty()) {
            throw BackendError(dir + " holds no checkpoint (no step-NNNNNN folder, no " +
                               kCheckpointManifest + ")");
        }
        folder = found.front().second;  // the newest: refused below if torn
    }
    CheckpointChoice c;
    c.steps_done = check_checkpoint(folder, layout, world_size, ranks);
    c.folder = folder.string();
    return c;
}

bool holds_checkpoint(const std::string& dir) {
    const auto found = step_folders(dir);
    return std::any_of(found.begin(), found.end(),
                       [](const auto& f) { return has_manifest(f.second); });
}

std::string restart_from_environment() {
    for (const char* variable : {"TORCHELASTIC_RESTART_COUNT", "SLURM_RESTART_COUNT"}) {
        const char* value = std::getenv(variable);
        if (value == nullptr) {
            continue;
        }
        char* end = nullptr;
        const long count = std::strtol(value, &end, 10);
        if (end != value && *end == '\0' && count > 0) {
            return std::string(variable) + "=" + value;
        }
    }
    return "";
}

void finish_checkpoint(const std::string& dir, const std::string& partial, int steps_done,
                       const nlohmann::json& layout, int world_size) {
    nlohmann::json files = nlohmann::json::array();
    for (int r = 0; r < world_size; ++r) {
        const fs::path file = fs::path(partial) / rank_checkpoint_file(r);
        std::error_code ec;
        const std::uintmax_t size = fs::file_size(file, ec);
        if (ec) {
            throw BackendError("checkpoint: rank " + std::to_string(r) + " saved its state, but " +
                               file.string() +
                               " is not there as rank 0 sees it: --checkpoint-dir must be a "
                               "folder that every node shares");
        }
        files.push_back({{"rank", r}, {"file", rank_checkpoint_file(r)}, {"bytes", size}});
    }
    const nlohmann::json manifest{{"format", kFormat},
                                  {"version", kVersion},
                                  {"step", steps_done},
                                  {"world_size", world_size},
                                  {"fingerprint", layout_fingerprint(layout)},
                                  {"ranks", files},
                                  {"layout", layout}};
    write_file_atomically(fs::path(partial) / kCheckpointManifest, manifest.dump(2) + "\n");
    const fs::path target = fs::path(dir) / checkpoint_folder_name(steps_done);
    const fs::path old = target.string() + ".old";
    std::error_code ec;
    fs::remove_all(old, ec);
    // A folder of the same step (a resume from an older one saves it
    // again) goes aside first: a step folder is always one whole save.
    if (fs::exists(target, ec)) {
        fs::rename(target, old, ec);
        if (ec) {
            throw BackendError("checkpoint: cannot move " + target.string() +
                               " aside: " + ec.message());
        }
    }
    fs::rename(partial, target, ec);
    if (ec) {
        throw BackendError("checkpoint: cannot rename " + partial + " to " + target.string() +
                           ": " + ec.message());
    }
    sync_folder(dir);
    fs::remove_all(old, ec);
    // The last kCheckpointsKept complete saves up to this one stay. Later
    // ones are of an attempt this run left behind (it resumed from an older
    // save): a resume must not take them for this run's newest.
    int kept = 0;
    for (const auto& [step, path] : step_folders(dir)) {
        if (step <= steps_done && kept < kCheckpointsKept && has_manifest(path)) {
            ++kept;
            continue;
        }
        fs::remove_all(path, ec);
    }
}

void remove_unfinished_checkpoints(const std::string& dir) {
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        for (const std::string suffix : {".partial", ".old"}) {
            if (name.size() > suffix.size() && name.ends_with(suffix) &&
                step_of_name(name.substr(0, name.size() - suffix.size()))) {
                std::error_code ignored;
                fs::remove_all(it->path(), ignored);
            }
        }
    }
}

}  // namespace pipewright::backend
