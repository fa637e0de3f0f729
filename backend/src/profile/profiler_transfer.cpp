// Transfer cost between two ranks for `pipewright profile`, measured over the
// same c10d transport a run uses (ProcessGroupGloo over TCP), not
// estimated: two threads of this process play rank 0 and rank 1, and stamp
// a transfer's start and arrival on the clock they share.
#include <algorithm>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "pipewright/backend/profiler.h"
#include "pipewright/backend/transport.h"
#include "profile/profiler_timing.h"
#include "profile/profiler_two_ranks.h"

namespace pipewright::backend {
namespace {

using profiling::median;
using profiling::now_s;

constexpr int kWarmupTransfers = 3;
constexpr auto kReceiverSettles = std::chrono::microseconds(300);

// The moments one transfer began and ended, on the clock both ranks (threads
// of this process) share.
struct Stamps {
    std::mutex mutex;
    std::vector<double> posted;   // rank 0: the send posted
    std::vector<double> arrived;  // rank 1: the tensor in its hands
};

// One transfer as a pipeline sees it: rank 1 has posted its receive and
// waits, and rank 0 sends a tensor made just before (each micro-batch's
// activation is a new one: sending the same buffer again measured 56 µs for
// 256 KiB here, where runs take 100-150 µs). The time runs from posting the
// send until the waiting receiver holds the tensor.
void one_way(Transport& t, const std::vector<std::int64_t>& sizes, int repeats, Stamps& stamps) {
    const int rank = t.rank();
    for (std::size_t k = 0; k < sizes.size(); ++k) {
        const std::int64_t elements = std::max<std::int64_t>(1, sizes[k] / 4);
        const torch::Tensor source = torch::ones({elements}, torch::kFloat32);
        const int tag = static_cast<int>(k);
        for (int i = 0; i < kWarmupTransfers + repeats; ++i) {
            const bool timed = i >= kWarmupTransfers;
            if (rank == 0) {
                const torch::Tensor fresh = source.clone();
                t.barrier();
                // Long enough for rank 1 to be waiting in its receive.
                std::this_thread::sleep_for(kReceiverSettles);
                const double posted = now_s();
                t.send(fresh, 1, tag)->wait();
                if (timed) {
                    const std::scoped_lock lock(stamps.mutex);
                    stamps.posted.push_back(posted);
                }
            } else {
                t.barrier();
                (void)t.recv(source, 0, tag);
                const double arrived = now_s();
                if (timed) {
                    const std::scoped_lock lock(stamps.mutex);
                    stamps.arrived.push_back(arrived);
                }
            }
        }
    }
    t.barrier();
}

}  // namespace

std::vector<std::int64_t> default_transfer_sizes() {
    return {4 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20};
}

TransferFit fit_transfer(std::vector<TransferSample> samples) {
    if (samples.size() < 2) {
        throw std::invalid_argument("a transfer fit needs at least two message sizes");
    }
    // Weighted least squares on the relative error (weights 1 / seconds²):
    // a plain fit is ruled by the largest message and can be off many times
    // over at the small sizes a pipeline boundary often has.
    double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (const auto& s : samples) {
        const double w = s.seconds > 0 ? 1.0 / (s.seconds * s.seconds) : 0.0;
        sw += w;
        sx += w * s.bytes;
        sy += w * s.seconds;
        sxx += w * s.bytes * s.bytes;
        sxy += w * s.bytes * s.seconds;
    }
    const double det = sw * sxx - sx * sx;
    if (!(sw > 0) || !(det > 0)) {
        throw std::invalid_argument("a transfer fit needs at least two different message sizes");
    }
    double slope = (sw * sxy - sx * sy) / det;  // seconds per byte
    double intercept = (sy - slope * sx) / sw;
    if (intercept < 0) {
        // Never negative time at zero bytes: refit the line through the origin.
        intercept = 0;
        slope = sxy / sxx;
    }
    // Noise can tilt the line down: a transfer never gets cheaper with size.
    slope = std::max(slope, 1e-15);
    TransferFit fit;
    fit.link.bandwidth_GBps = 1.0 / slope / 1e9;
    fit.link.latency_us = intercept * 1e6;
    fit.samples = std::move(samples);
    return fit;
}

TransferFit measure_transfer(const TransferOptions& o) {
    const std::vector<std::int64_t> sizes =
        o.message_bytes.empty() ? default_transfer_sizes() : o.message_bytes;
    const int repeats = std::max(1, o.repeats);
    Stamps stamps;
    (void)profiling::on_two_ranks(o.timeout_s, [&](int rank, c10::intrusive_ptr<c10d::Store> store,
                                                   std::chrono::milliseconds timeout) {
        auto transport = make_gloo_transport(std::move(store), o.host, rank, 2, timeout);
        one_way(*transport, sizes, repeats, stamps);
        return 0;
    });
    std::vector<TransferSample> samples;
    for (std::size_t k = 0; k < sizes.size(); ++k) {
        std::vector<double> times;
        for (int i = 0; i < repeats; ++i) {
            const std::size_t at =
                k * static_cast<std::size_t>(repeats) + static_cast<std::size_t>(i);
            times.push_back(std::max(0.0, stamps.arrived.at(at) - stamps.posted.at(at)));
        }
        samples.push_back({static_cast<double>(std::max<std::int64_t>(1, sizes[k] / 4) * 4),
                           median(std::move(times))});
    }
    return fit_transfer(std::move(samples));
}

}  // namespace pipewright::backend
