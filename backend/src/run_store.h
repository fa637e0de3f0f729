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
#include <string>
#include <vector>

#include <torch/csrc/distributed/c10d/Store.hpp>

#include "rendezvous.h"

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
    // The arguments that tell a worker how to reach it.
    std::vector<std::string> worker_args;
    // The address the Gloo connections of this node use to find each other.
    std::string gloo_host;
    // For messages: "a private file (no network port)" or "HOST:PORT".
    std::string where;
    PrivateFolder folder;
};

// A store of this machine only: a FileStore in a fresh private folder.
[[nodiscard]] RunStore open_private_store(std::chrono::milliseconds timeout);

// A worker's end of a private store.
[[nodiscard]] c10::intrusive_ptr<c10d::Store> connect_private_store(
    const std::string& file, std::chrono::milliseconds timeout);

// The address the Gloo connections of a run on one machine use.
inline constexpr const char* kLoopbackHost = "127.0.0.1";

}  // namespace pipewright::backend
