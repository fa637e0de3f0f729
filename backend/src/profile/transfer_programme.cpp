#include "profile/transfer_programme.h"

#include <algorithm>
#include <thread>

#include "profile/profiler_timing.h"

namespace pipewright::backend::profiling {
namespace {

constexpr int kWarmupTransfers = 3;
// Long enough for the receiver to be waiting in its receive.
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

}  // namespace

void run_transfer_programme(Transport& t, const std::vector<std::int64_t>& sizes, int repeats,
                            TransferStamps& stamps) {
    for (std::size_t k = 0; k < sizes.size(); ++k) {
        const torch::Tensor source = message(sizes[k]);
        one_way(t, k, source, repeats, stamps);
    }
    t.barrier();
}

}  // namespace pipewright::backend::profiling
