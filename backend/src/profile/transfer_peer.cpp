#include "profile/transfer_peer.h"

#include <charconv>
#include <exception>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "pipewright/backend/backend_error.h"
#include "profile/rank_thread_conditions.h"
#include "run/rendezvous.h"
#include "run/run_store.h"
#include "run/worker_processes.h"

namespace pipewright::backend::profiling {
namespace {

constexpr const char* kUpKey = "peer/up";
constexpr const char* kArrivedKey = "peer/arrived";
constexpr const char* kReadyKey = "peer/ready";

std::string joined(const std::vector<double>& values) {
    std::ostringstream out;
    out.precision(17);
    for (const double v : values) {
        out << v << ' ';
    }
    return out.str();
}

std::vector<double> split(const std::string& text) {
    std::istringstream in(text);
    std::vector<double> values;
    double v = 0;
    while (in >> v) {
        values.push_back(v);
    }
    return values;
}

// The whole of `text` as a number, or std::invalid_argument ("4k" is not 4).
std::int64_t whole_number(const std::string& text) {
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size()) {
        throw std::invalid_argument(text);
    }
    return value;
}

std::string joined_sizes(const std::vector<std::int64_t>& sizes) {
    std::string out;
    for (const std::int64_t s : sizes) {
        out += (out.empty() ? "" : ",") + std::to_string(s);
    }
    return out;
}

// What the peer said last, for the profiler's message.
std::string peer_words(const std::string& log) {
    const std::string last = last_reason_line(log);
    return last.empty() ? "" : " (it said: " + last + ")";
}

// "the transfer measurement's second process ended (exit code 1)", and
// what it said last.
std::string ended(const std::string& how, const std::string& log) {
    return "the transfer measurement's second process ended (" + how + ")" + peer_words(log);
}

// How the peer failed, if it has since the last look.
std::optional<std::string> failure(WorkerProcesses& peer) {
    for (const auto& failed : peer.reap()) {
        return describe_exit(failed.status);
    }
    return std::nullopt;
}

// Waits until the peer is in the store, and stops waiting as soon as it has
// exited instead.
void wait_for_peer(c10d::Store& store, WorkerProcesses& peer, const std::string& log,
                   std::chrono::milliseconds timeout) {
    const auto until = std::chrono::steady_clock::now() + timeout;
    while (!try_get_text(store, kUpKey)) {
        if (const auto how = failure(peer)) {
            throw BackendError(ended(*how, log));
        }
        if (peer.running() == 0) {
            throw BackendError("the transfer measurement's second process ended before it began" +
                               peer_words(log));
        }
        if (std::chrono::steady_clock::now() > until) {
            throw BackendError("the transfer measurement's second process did not start within " +
                               std::to_string(timeout.count() / 1000) + " s");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

}  // namespace

std::vector<std::string> transfer_peer_arguments(const TransferPeerOptions& o) {
    return {"--store",      o.store_file,
            "--host",       o.host,
            "--sizes",      joined_sizes(o.sizes),
            "--repeats",    std::to_string(o.repeats),
            "--timeout-ms", std::to_string(o.timeout.count()),
            "--bind",       o.bind ? "1" : "0"};
}

std::optional<TransferPeerOptions> parse_transfer_peer_arguments(
    const std::vector<std::string>& args, std::string& error) {
    TransferPeerOptions o;
    if (args.size() % 2 != 0) {
        error = "arguments come in pairs: --name value";
        return std::nullopt;
    }
    try {
        for (std::size_t i = 0; i < args.size(); i += 2) {
            const std::string& name = args[i];
            const std::string& value = args[i + 1];
            if (name == "--store") {
                o.store_file = value;
            } else if (name == "--host") {
                o.host = value;
            } else if (name == "--sizes") {
                std::istringstream in(value);
                for (std::string size; std::getline(in, size, ',');) {
                    o.sizes.push_back(whole_number(size));
                }
            } else if (name == "--repeats") {
                o.repeats = static_cast<int>(whole_number(value));
            } else if (name == "--timeout-ms") {
                o.timeout = std::chrono::milliseconds(whole_number(value));
            } else if (name == "--bind") {
                o.bind = value == "1";
            } else {
                error = "unknown argument " + name;
                return std::nullopt;
            }
        }
    } catch (const std::exception&) {
        error = "a number was expected";
        return std::nullopt;
    }
    if (o.store_file.empty() || o.sizes.empty() || o.repeats < 1) {
        error = "--store, --sizes and --repeats (at least 1) are needed";
        return std::nullopt;
    }
    return o;
}

}  // namespace pipewright::backend::profiling

namespace pipewright::backend {

int run_transfer_peer(const std::vector<std::string>& args, std::ostream& err) {
    using namespace profiling;
    std::string error;
    const auto o = parse_transfer_peer_arguments(args, error);
    if (!o) {
        err << "pipewright-backend transfer-peer: " << error << '\n';
        return 2;
    }
    try {
        torch::set_num_threads(1);
        RankThreadConditions conditions(1, o->bind);
        auto store = connect_private_store(o->store_file, o->timeout);
        set_text(*store, kUpKey, "1");
        auto transport = make_gloo_transport(store, o->host, 1, 2, o->timeout);
        conditions.transport_made();
        TransferStamps stamps;
        run_transfer_programme(*transport, o->sizes, o->repeats, stamps);
        set_text(*store, kReadyKey, joined(stamps.ready));
        set_text(*store, kArrivedKey, joined(stamps.arrived));
        return 0;
    } catch (const c10::Error& e) {
        err << "pipewright-backend transfer-peer: " << e.what_without_backtrace() << '\n';
    } catch (const std::exception& e) {
        err << "pipewright-backend transfer-peer: " << e.what() << '\n';
    }
    return 1;
}

}  // namespace pipewright::backend

namespace pipewright::backend::profiling {

TransferStamps time_transfers_in_two_processes(const TransferOptions& o,
                                               const std::vector<std::int64_t>& sizes,
                                               int repeats) {
    const auto timeout = std::chrono::milliseconds(static_cast<std::int64_t>(o.timeout_s * 1000));
    const RunStore meeting = open_private_store("pipewright-profile", timeout);
    const c10::intrusive_ptr<c10d::Store>& store = meeting.store;
    TransferPeerOptions peer;
    peer.store_file = meeting.store_file;
    peer.host = o.host;
    peer.sizes = sizes;
    peer.repeats = repeats;
    peer.timeout = timeout;
    peer.bind = bind_like_a_run();

    std::vector<std::string> command{o.peer_program.empty()
                                         ? std::filesystem::read_symlink("/proc/self/exe").string()
                                         : o.peer_program,
                                     transfer_peer_command};
    for (std::string& a : transfer_peer_arguments(peer)) {
        command.push_back(std::move(a));
    }
    const std::string log = (meeting.folder.path() / "peer.log").string();
    WorkerProcesses processes;
    (void)processes.start(1, command, log);
    wait_for_peer(*store, processes, log, timeout);

    TransferStamps stamps;
    try {
        RankThreadConditions conditions(0, peer.bind);
        auto transport = make_gloo_transport(store, o.host, 0, 2, timeout);
        conditions.transport_made();
        run_transfer_programme(*transport, sizes, repeats, stamps);
        stamps.arrived = split(get_text(*store, kArrivedKey));
        stamps.ready = split(get_text(*store, kReadyKey));
    } catch (const std::exception& e) {
        const std::string what = dynamic_cast<const c10::Error*>(&e) != nullptr
                                     ? static_cast<const c10::Error&>(e).what_without_backtrace()
                                     : e.what();
        // A peer that died shows here as a lost connection: say that it
        // ended, and how, rather than what the socket saw. Its sockets close
        // before its exit can be reaped, so give it a moment.
        for (int i = 0; i < 200 && processes.running() > 0; ++i) {
            if (const auto how = failure(processes)) {
                throw BackendError(ended(*how, log));
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        throw BackendError("the transfer measurement failed: " + what + peer_words(log));
    }
    return stamps;
}

}  // namespace pipewright::backend::profiling
