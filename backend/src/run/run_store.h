#pragma once

// Where the launcher and the workers of a run meet: the c10d store.
//
// LibTorch 1.13's TCPStore listens on every interface of the machine (its
// server takes a port, never an address), and anyone who reaches that port
// can read and write the run's keys. A run on one machine therefore needs no
// port at all: it meets through a c10d FileStore in a folder only this user
// can open, and its Gloo connections use the loopback interface. Only runs
// that span machines (or ask for a port) use a TCPStore.

#include <chrono>
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <torch/csrc/distributed/c10d/Store.hpp>

#include "pipewright/backend/launcher.h"
#include "run/rendezvous.h"

namespace pipewright::backend {

// The file store's folder: created 0700 by the launcher and removed with it.
class PrivateFolder {
  public:
    PrivateFolder() = default;
    // Throws BackendError when the folder cannot be made.
    static PrivateFolder make(const std::string& prefix);
    PrivateFolder(PrivateFolder&& other) noexcept;
    PrivateFolder& operator=(PrivateFolder&& other) noexcept;
    PrivateFolder(const PrivateFolder&) = delete;
    PrivateFolder& operator=(const PrivateFolder&) = delete;
    ~PrivateFolder();
    [[nodiscard]] const std::filesystem::path& path() const { return path_; }

  private:
    std::filesystem::path path_;
};

struct RunStore {
    c10::intrusive_ptr<c10d::Store> store;
    // How a worker reaches it: one of the two is set.
    std::string store_file;  // a private FileStore
    std::string master;      // HOST:PORT of a TCPStore
    std::string prefix;      // of every key, in a store shared with torchrun's agent
    // For messages: "a private file (no network port)" or "HOST:PORT".
    std::string where;
    // The port a TCPStore of this launcher listens on, and the one address
    // it listens on where the Torch build lets it bind one (empty: every
    // interface, as LibTorch 1.13's TCPStore binds).
    std::optional<int> listening_port;
    std::string listening_address;
    PrivateFolder folder;
};

// The launcher's store: a private file for a run on this machine alone; a
// TCPStore with --port or --master, hosted by node 0 (a taken port fails
// here, before any worker starts; port 0 asks for a free one) and reached by
// the other nodes. Under torchrun's static rendezvous every node connects to
// the agent's store on the master port, under the attempt's prefix. nullopt
// after writing the reason to `err`.
[[nodiscard]] std::optional<RunStore> open_run_store(const HostPort& master,
                                                     const RunOptions& options,
                                                     std::chrono::milliseconds timeout,
                                                     std::ostream& err);

// A store in a new private folder (`prefix` and a random tail, under the
// temporary folder), written once so that its file exists before anyone
// reads it; removed with the returned RunStore's folder.
[[nodiscard]] RunStore open_private_store(const std::string& prefix,
                                          std::chrono::milliseconds timeout);

// A worker's end of a private store.
[[nodiscard]] c10::intrusive_ptr<c10d::Store> connect_private_store(
    const std::string& file, std::chrono::milliseconds timeout);

// The address the Gloo connections of a run on one machine use.
inline constexpr const char* kLoopbackHost = "127.0.0.1";

}  // namespace pipewright::backend
