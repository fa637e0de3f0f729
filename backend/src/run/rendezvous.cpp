#include "run/rendezvous.h"

#include <cstdlib>
#include <thread>

#include "pipewright/backend/modules.h"

namespace pipewright::backend {

HostPort parse_host_port(const std::string& text, const std::string& option) {
    const auto colon = text.rfind(':');
    const auto bad = [&](const std::string& why) {
        return BackendError(option + " must be HOST:PORT (" + why + "), got \"" + text + "\"");
    };
    if (colon == std::string::npos || colon == 0) {
        throw bad("no host or no port");
    }
    std::string host = text.substr(0, colon);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
        host = host.substr(1, host.size() - 2);
    }
    const std::string digits = text.substr(colon + 1);
    char* end = nullptr;
    const long port = digits.empty() ? -1 : std::strtol(digits.c_str(), &end, 10);
    if (digits.empty() || *end != 0 || port < 0 || port > 65535) {
        throw bad("the port must be a number from 0 to 65535");
    }
    return {host, static_cast<int>(port)};
}

namespace keys {
std::string joined(int rank) {
    return "joined/" + std::to_string(rank);
}
std::string record(int rank) {
    return "record/" + std::to_string(rank);
}
std::string progress(int step) {
    return "progress/" + std::to_string(step);
}
std::string loss_finite(int step) {
    return "loss-finite/" + std::to_string(step);
}
std::string node_claim(int node) {
    return "node-claim/" + std::to_string(node);
}
std::string node(int node) {
    return "node/" + std::to_string(node);
}
std::string node_done(int node) {
    return "node-done/" + std::to_string(node);
}
std::string alive(int rank) {
    return "alive/" + std::to_string(rank);
}
std::string failure(int rank) {
    return "failure/" + std::to_string(rank);
}
std::string failure_order(int rank) {
    return "failure-order/" + std::to_string(rank);
}
}  // namespace keys

void set_text(c10d::Store& store, const std::string& key, const std::string& text) {
    store.set(key, std::vector<std::uint8_t>(text.begin(), text.end()));
}

std::string get_text(c10d::Store& store, const std::string& key) {
    const auto bytes = store.get(key);
    return {bytes.begin(), bytes.end()};
}

std::optional<std::string> try_get_text(c10d::Store& store, const std::string& key) {
    if (!store.check({key})) {
        return std::nullopt;
    }
    return get_text(store, key);
}

std::optional<std::string> wait_for_text(c10d::Store& store, const std::string& key,
                                         const std::string& failed_key,
                                         std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
        if (auto text = try_get_text(store, key)) {
            return text;
        }
        if (store.check({failed_key})) {
            return std::nullopt;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return std::nullopt;
}

std::vector<int> missing_ranks(c10d::Store& store, int world) {
    std::vector<int> missing;
    for (int r = 0; r < world; ++r) {
        if (!store.check({keys::joined(r)})) {
            missing.push_back(r);
        }
    }
    return missing;
}

std::vector<int> wait_for_ranks(c10d::Store& store, int world, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
        auto missing = missing_ranks(store, world);
        if (missing.empty() || std::chrono::steady_clock::now() >= deadline) {
            return missing;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

std::string list_ranks(const std::vector<int>& ranks) {
    std::string s;
    for (std::size_t i = 0; i < ranks.size(); ++i) {
        if (i > 0) {
            s += i + 1 == ranks.size() ? " and " : ", ";
        }
        s += std::to_string(ranks[i]);
    }
    return s;
}

std::string counted(const std::string& noun, const std::vector<int>& numbers) {
    return noun + (numbers.size() == 1 ? " " : "s ") + list_ranks(numbers);
}

}  // namespace pipewright::backend
