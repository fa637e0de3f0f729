#pragma once
// What a run's folder is called, and which files in it a run wrote: one
// answer for the backend (which makes the folder, and clears only a run's
// own files on --overwrite) and the studio (which names the folders it runs
// into and lists the past ones).
#include <ctime>
#include <functional>
#include <string>
#include <string_view>

namespace pipewright {

// "<model>-<YYYYmmdd-HHMMSS>" for a run started at `local` (a local time),
// the model's name made safe as a file name (a project cannot steer it
// elsewhere).
[[nodiscard]] std::string run_folder_stem(std::string_view model_name, const std::tm& local);

// `stem`, else `stem-2`, `stem-3`, …: the first that `taken` says is free.
[[nodiscard]] std::string first_free_run_folder(
    const std::string& stem, const std::function<bool(const std::string&)>& taken);

// The file `run --save-params` writes a stage's parameters to:
// params-stage-S.pt, with -replica-R past the first replica and -tensor-K
// past a tensor-parallel group's first member.
[[nodiscard]] std::string params_file_name(int stage, int replica = 0, int member = 0);

// Whether a file name is one that a run writes (run.log, metrics.json,
// rank-3.json, params-stage-0.pt, …, or an unfinished atomic write of one).
[[nodiscard]] bool is_run_output(const std::string& file_name);

}  // namespace pipewright
