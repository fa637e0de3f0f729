#include "run/shared_run_folder.h"

#include "pipewright/backend/backend_error.h"
#include "pipewright/core/quantity_format.h"
#include "run/rendezvous.h"
#include "run/run_folder_preparation.h"

namespace pipewright::backend {

std::string prepare_shared_run_folder(c10d::Store& store, const std::string& wanted, int rank,
                                      const std::string& project_file, bool overwrite,
                                      std::chrono::milliseconds timeout,
                                      const std::vector<std::string>& keep) {
    if (rank == 0) {
        try {
            prepare_run_folder(wanted, project_file, overwrite, keep);
        } catch (const std::exception& e) {
            // The other ranks wait for this folder: they stop at once.
            try {
                set_text(store, keys::kFailed, "rank 0: " + std::string(e.what()));
            } catch (const std::exception&) {
                // the store is gone: the others learn it themselves
            }
            throw;
        }
        set_text(store, keys::kRunFolder, wanted);
        return wanted;
    }
    const auto folder = wait_for_text(store, keys::kRunFolder, keys::kFailed, timeout);
    if (!folder) {
        const auto failed = try_get_text(store, keys::kFailed);
        throw BackendError(failed
                               ? "stopped: " + *failed
                               : "rank 0 did not make the run folder within " +
                                     format_duration(static_cast<double>(timeout.count()) / 1000));
    }
    // A folder of its own inside rank 0's, which this rank alone writes:
    // an earlier run's files there are replaced.
    const std::string mine = *folder + "/rank-" + std::to_string(rank);
    prepare_run_folder(mine, project_file, true);
    return mine;
}

}  // namespace pipewright::backend
