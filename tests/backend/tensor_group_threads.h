#pragma once
// A tensor-parallel group of `size` members as threads of the test, each
// with its own Gloo group over one in-memory store, for the in-process tests
// of the layers and losses that talk over the group.
#include <chrono>
#include <exception>
#include <functional>
#include <latch>
#include <string>
#include <thread>
#include <vector>

#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include "pipewright/backend/transport.h"

namespace pipewright::test {

// Runs `body(member)` in one thread per member; returns each member's
// failure ("" where it passed).
inline std::vector<std::string> on_tensor_group(
    int size, const std::function<void(const backend::TensorGroup&)>& body,
    std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
    auto store = c10::make_intrusive<c10d::HashStore>();
    std::vector<std::string> errors(static_cast<std::size_t>(size));
    std::vector<std::thread> threads;
    // A member that finished closes its Gloo connections as its group goes:
    // under load a peer still using the group then fails with "Connection
    // closed by peer". Each keeps its group until every member is done.
    std::latch done(size);
    for (int r = 0; r < size; ++r) {
        threads.emplace_back([&, r] {
            bool arrived = false;
            try {
                backend::TensorGroup group{
                    backend::make_gloo_group(store, "tp/", "127.0.0.1", r, size, timeout), r, size};
                body(group);
                arrived = true;
                done.arrive_and_wait();
            } catch (const std::exception& e) {
                errors[static_cast<std::size_t>(r)] = e.what();
                if (!arrived) {
                    done.count_down();
                }
            }
        });
    }
    for (auto& t : threads) {
        t.join();
    }
    return errors;
}

}  // namespace pipewright::test
