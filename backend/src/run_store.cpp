#include "run_store.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <system_error>

#include <torch/csrc/distributed/c10d/FileStore.hpp>

#include "pipewright/backend/modules.h"

namespace pipewright::backend {

PrivateFolder PrivateFolder::make(const std::string& prefix) {
    const char* tmp = std::getenv("TMPDIR");
    const std::filesystem::path base = tmp != nullptr && *tmp != 0 ? tmp : "/tmp";
    std::string pattern = (base / (prefix + "-XXXXXX")).string();
    // mkdtemp makes the folder 0700 whatever the umask: only this user's
    // processes can open the store inside it.
    if (::mkdtemp(pattern.data()) == nullptr) {
        throw BackendError("cannot make a private folder for the rendezvous in " + base.string() +
                           ": " + std::strerror(errno) + " (set TMPDIR to a writable folder)");
    }
    PrivateFolder folder;
    folder.path_ = pattern;
    return folder;
}

PrivateFolder::PrivateFolder(PrivateFolder&& other) noexcept : path_(std::move(other.path_)) {
    other.path_.clear();
}

PrivateFolder& PrivateFolder::operator=(PrivateFolder&& other) noexcept {
    if (this != &other) {
        std::error_code ec;
        if (!path_.empty()) {
            std::filesystem::remove_all(path_, ec);
        }
        path_ = std::move(other.path_);
        other.path_.clear();
    }
    return *this;
}

PrivateFolder::~PrivateFolder() {
    if (!path_.empty()) {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
}

c10::intrusive_ptr<c10d::Store> connect_private_store(const std::string& file,
                                                      std::chrono::milliseconds timeout) {
    // numWorkers -1: no instance deletes the file on exit; the launcher
    // removes the whole folder when the run ends.
    auto store = c10::make_intrusive<c10d::FileStore>(file, -1);
    store->setTimeout(timeout);
    return store;
}

RunStore open_private_store(std::chrono::milliseconds timeout) {
    RunStore run;
    run.folder = PrivateFolder::make("pipewright-rendezvous");
    const std::string file = (run.folder.path() / "store").string();
    run.store = connect_private_store(file, timeout);
    run.worker_args = {"--store-file", file};
    run.gloo_host = kLoopbackHost;
    run.where = "a private file (no network port)";
    return run;
}

}  // namespace pipewright::backend
