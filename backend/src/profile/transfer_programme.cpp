#include "profile/transfer_programme.h"

#include <algorithm>
#include <thread>

#include "profile/profiler_timing.h"

namespace pipewright::backend::profiling {
namespace {

constexpr int kWarmupTransfers = 3;
// Long enough for the receiver to be waiting in its receive, or for a
// message to land while it computes.
constexpr auto kReceiverSettles = std::chrono::microseconds(300);

torch::Tensor message(std::int64_t bytes) {
    return torch::ones({std::max<std::int64_t>(1, bytes / 4)}, torch::kFloat32);
}

void one_way(Transport& t, std::size_t k, const torch::Tensor& source, int repeats,
             TransferStamps& stamps) {
    for (int i = 0; i < kWarmupTransfers + repeats; ++i) {
        const bool timed = i >= kWarmupTransfers;
        const int tag = static_cast<int>(k) * 100'000 + i;
        if (t.rank() == 0) {
            const torch::Tensor fresh = source.clone();
            t.barrier();
            std::this_thread::sleep_for(kReceiverSettles);
            const double posted = now_s();
            t.send(fresh, 1, tag)->wait();
            if (timed) {
                stamps.posted.push_back(posted);
            }
        } else {
            t.barrier();
            (void)t.recv(source, 0, tag);
            const double arrived = now_s();
            if (timed) {
                stamps.arrived.push_back(arrived);
            }
        }
    }
}

// A run's rank computes while its next message comes in, and its transport's
// threads (batch work on its core) take the message off the socket only when
// the rank lets them; spinning keeps the core as busy. (Sleeping instead, the
// rank took its message in 23-45 µs here, median 31, where runs' receives of
// the kind took 15-28 µs; spinning 20-38 µs, median 22.)
void computes_for(std::chrono::microseconds span) {
    const double until = now_s() + std::chrono::duration<double>(span).count();
    while (now_s() < until) {
    }
}

// Tags of the ready receives: after every one-way tag of `sizes` sizes.
int ready_tag(std::size_t sizes, std::size_t k, int i) {
    return static_cast<int>(sizes + k) * 100'000 + i;
}

// Rank 1 times `repeats` receives of messages that came in while it computed;
// one more message than the receives timed, so that every receive posted
// ahead is matched.
void ready_receives(Transport& t, std::size_t sizes, std::size_t k, const torch::Tensor& source,
                    int repeats, TransferStamps& stamps) {
    const int messages = kWarmupTransfers + repeats + 1;
    if (t.rank() == 0) {
        for (int i = 0; i < messages; ++i) {
            const torch::Tensor fresh = source.clone();
            t.send(fresh, 1, ready_tag(sizes, k, i))->wait();
            t.barrier();
        }
        return;
    }
    std::unique_ptr<PendingRecv> ahead = t.post_recv(source, 0, ready_tag(sizes, k, 0));
    for (int i = 0; i + 1 < messages; ++i) {
        t.barrier();  // rank 0's send of message i has completed
        computes_for(kReceiverSettles);
        const double start = now_s();
        std::unique_ptr<PendingRecv> next =
            t.post_recv(torch::empty_like(source), 0, ready_tag(sizes, k, i + 1));
        (void)ahead->wait();
        const double end = now_s();
        if (i >= kWarmupTransfers) {
            stamps.ready.push_back(end - start);
        }
        ahead = std::move(next);
    }
    t.barrier();
    (void)ahead->wait();
}

}  // namespace

void run_transfer_programme(Transport& t, const std::vector<std::int64_t>& sizes, int repeats,
                            TransferStamps& stamps) {
    for (std::size_t k = 0; k < sizes.size(); ++k) {
        const torch::Tensor source = message(sizes[k]);
        one_way(t, k, source, repeats, stamps);
    }
    for (std::size_t k = 0; k < sizes.size(); ++k) {
        ready_receives(t, sizes.size(), k, message(sizes[k]), repeats, stamps);
    }
    t.barrier();
}

}  // namespace pipewright::backend::profiling
