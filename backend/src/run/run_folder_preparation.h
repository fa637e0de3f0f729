#pragma once

// The folder a run writes into. A run never mixes its outputs with an earlier
// run's (compare would read the old timeline after a failed run), and never
// deletes what it did not write. (The studio's own studio_core/processes/run_folder.h
// finds the folders that runs leave behind.)

#include <string>
#include <vector>

namespace pipewright::backend {

// runs/<model>-<YYYYmmdd-HHMMSS>[-N] under the current folder
// (core/run_folder_names.h).
[[nodiscard]] std::string default_run_folder(const std::string& model_name);

// Makes `dir` ready: created when missing; an empty folder is used as it is.
// A folder with files is refused unless `overwrite`, and then only when every
// file in it is a run's output, which is removed first. The project file
// being run may lie in the folder (the studio writes it there) and is kept,
// as are the entries named in `keep` (the folder of checkpoints the run
// saves into or resumes from). Throws BackendError saying what to do.
void prepare_run_folder(const std::string& dir, const std::string& project_file, bool overwrite,
                        const std::vector<std::string>& keep = {});

}  // namespace pipewright::backend
