#include "run/run_store.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <system_error>

#include <torch/version.h>
#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

// Upstream Torch 2.1 and later take the store's listening socket from the
// caller (TCPStoreOptions::masterListenFd), so it can be bound to the
// master's address alone; 1.13 binds every interface.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
#define PIPEWRIGHT_STORE_BINDS_ADDRESS 1
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#endif

#include "pipewright/backend/modules.h"
#include "pipewright/backend/transport.h"

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

namespace {

#ifdef PIPEWRIGHT_STORE_BINDS_ADDRESS
// Whether `host` names every interface rather than one address.
bool is_wildcard(const std::string& host) {
    return host.empty() || host == "0.0.0.0" || host == "::" || host == "*";
}

// A socket listening on `host`:`port` (port 0: one the system picks), for
// the TCPStore to take over; throws std::system_error with the reason.
int listening_socket(const std::string& host, int port) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    addrinfo* found = nullptr;
    const std::string service = std::to_string(port);
    if (const int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0) {
        throw std::runtime_error(host + " is not an address of this machine (" +
                                 ::gai_strerror(rc) + ")");
    }
    int error = 0;
    for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
        const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) {
            error = errno;
            continue;
        }
        const int on = 1;
        ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
        if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, SOMAXCONN) == 0) {
            ::freeaddrinfo(found);
            return fd;
        }
        error = errno;
        ::close(fd);
    }
    ::freeaddrinfo(found);
    throw std::system_error(error, std::generic_category());
}
#endif

}  // namespace

RunStore open_private_store(const std::string& prefix, std::chrono::milliseconds timeout) {
    RunStore run;
    run.folder = PrivateFolder::make(prefix);
    const std::string file = (run.folder.path() / "store").string();
    run.store = connect_private_store(file, timeout);
    // c10d's FileStore creates its file on the first write, and a read before
    // that waits for the file and throws after the timeout. The launcher (or
    // the profiler) reads the store while its workers are still starting
    // (slow on a loaded machine, or under a sanitizer), so it writes first.
    // Nobody reads the key.
    set_text(*run.store, "opened", "1");
    run.store_file = file;
    run.where = "a private file (no network port)";
    return run;
}

std::optional<RunStore> open_run_store(const HostPort& master, const RunOptions& o,
                                       std::chrono::milliseconds timeout, std::ostream& err) {
    if (!o.master && !o.port) {
        try {
            return open_private_store("pipewright-rendezvous", timeout);
        } catch (const std::exception& e) {
            err << "pipewright: " << e.what() << '\n';
            return std::nullopt;
        }
    }
    RunStore run;
    int port = master.port;
    const bool agent_store = o.environment && o.environment->agent_store;
    if (o.node_rank == 0 && !agent_store) {
        try {
            c10d::TCPStoreOptions so;
            so.port = static_cast<std::uint16_t>(master.port);
            so.isServer = true;
            so.waitWorkers = false;
            so.timeout = timeout;
#ifdef PIPEWRIGHT_STORE_BINDS_ADDRESS
            if (!is_wildcard(master.host)) {
                const int fd = listening_socket(master.host, master.port);
                so.masterListenFd = fd;
                // The port the system chose for port 0: the store checks
                // the socket's port against its own.
                sockaddr_storage bound{};
                socklen_t length = sizeof bound;
                if (::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length) == 0) {
                    so.port = ntohs(bound.ss_family == AF_INET6
                                        ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                        : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
                }
                run.listening_address = master.host;
            }
#endif
            auto store = c10::make_intrusive<c10d::TCPStore>(master.host, so);
            port = store->getPort();
            run.store = store;
            run.listening_port = port;
        } catch (const std::exception& e) {
            const std::string why = e.what();
            err << "pipewright: cannot listen on " << master.host << ":" << master.port << ": "
                << (why.find("in use") != std::string::npos ||
                            why.find("EADDRINUSE") != std::string::npos
                        ? "the port is already in use"
                        : why.substr(0, why.find('\n')))
                << "; choose another with "
                << (o.environment ? "MASTER_PORT"
                    : o.master    ? "--master"
                                  : "--port")
                << (o.nnodes > 1 ? "" : ", or leave it out to pick a free one") << '\n';
            return std::nullopt;
        }
    } else {
        try {
            run.store = connect_rendezvous_store(master.host, master.port, timeout);
        } catch (const std::exception&) {
            err << "pipewright: cannot reach the master " << master.host << ":" << master.port
                << " within " << o.settings.timeout_s << " s"
                << (agent_store ? " (nothing answered there: is torchrun's agent running?)\n"
                    : o.environment
                        ? " (nothing answered there: is rank 0 running, with the same "
                          "MASTER_ADDR and MASTER_PORT, and is the port open?)\n"
                        : " (nothing answered there: is the launcher of node 0 running, with "
                          "the same --master, and is the port open?)\n");
            return std::nullopt;
        }
        if (agent_store) {
            run.prefix = o.environment->store_prefix;
            run.store = c10::make_intrusive<c10d::PrefixStore>(run.prefix, run.store);
        }
    }
    run.where = master.host + ":" + std::to_string(port);
    run.master = run.where;
    return run;
}

}  // namespace pipewright::backend
