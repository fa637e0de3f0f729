#pragma once

// Ranks inside the profiler's process: each in its own thread, meeting in
// an in-memory c10d store (so profiling opens no port; the Gloo connections
// themselves are real).

#include <chrono>
#include <exception>
#include <future>
#include <vector>

#include <torch/csrc/distributed/c10d/HashStore.hpp>

namespace pipewright::backend::profiling {

// Runs rank_main(rank, store, timeout) for ranks 0 to ranks − 1 and returns
// rank 0's result. Every wait inside is bounded by the timeout, so a failing
// rank ends the others with an error, not a hang; the first failure is
// rethrown.
template <class RankMain>
auto on_ranks(int ranks, double timeout_s, RankMain rank_main) {
    const auto timeout = std::chrono::milliseconds(static_cast<std::int64_t>(timeout_s * 1000));
    auto store = c10::make_intrusive<c10d::HashStore>();
    store->setTimeout(timeout);
    std::vector<std::future<decltype(rank_main(0, store, timeout))>> others;
    for (int rank = 1; rank < ranks; ++rank) {
        others.push_back(std::async(std::launch::async, rank_main, rank, store, timeout));
    }
    decltype(rank_main(0, store, timeout)) result;
    std::exception_ptr failure;
    try {
        result = rank_main(0, store, timeout);
    } catch (...) {
        failure = std::current_exception();
    }
    for (auto& other : others) {
        try {
            (void)other.get();
        } catch (...) {
            if (!failure) {
                failure = std::current_exception();
            }
        }
    }
    if (failure) {
        std::rethrow_exception(failure);
    }
    return result;
}

template <class RankMain>
auto on_two_ranks(double timeout_s, RankMain rank_main) {
    return on_ranks(2, timeout_s, std::move(rank_main));
}

}  // namespace pipewright::backend::profiling
