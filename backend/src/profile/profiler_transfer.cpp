// Transfer cost between two ranks for `pipewright profile`, measured over the
// same c10d transport a run uses (ProcessGroupGloo over TCP), not
// estimated: two threads of this process play rank 0 and rank 1.
#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "pipewright/backend/profiler.h"
#include "pipewright/backend/transport.h"
#include "profile/profiler_timing.h"
#include "profile/profiler_two_ranks.h"

namespace pipewright::backend {
namespace {

using profiling::median;
using profiling::now_s;

constexpr int kWarmupRoundTrips = 3;

// Rank 0 sends and waits for the echo; rank 1 echoes. Half the round trip is
// one transfer as a pipeline sees it: from posting the send until the tensor
// is in the receiver's hands. Returns rank 0's median per size.
std::vector<double> ping_pong(Transport& t, const std::vector<std::int64_t>& sizes, int repeats) {
    std::vector<double> one_way;
    const int rank = t.rank();
    const int peer = 1 - rank;
    t.barrier();
    for (std::size_t k = 0; k < sizes.size(); ++k) {
        const std::int64_t elements = std::max<std::int64_t>(1, sizes[k] / 4);
        const torch::Tensor message = torch::ones({elements}, torch::kFloat32);
        const int tag = static_cast<int>(k);
        std::vector<double> times;
        for (int i = 0; i < kWarmupRoundTrips + repeats; ++i) {
            if (rank == 0) {
                const double start = now_s();
                auto sent = t.send(message, peer, tag);
                (void)t.recv(message, peer, tag);
                const double round_trip = now_s() - start;
                sent->wait();
                if (i >= kWarmupRoundTrips) {
                    times.push_back(round_trip / 2);
                }
            } else {
                const torch::Tensor got = t.recv(message, peer, tag);
                t.send(got, peer, tag)->wait();
            }
        }
        one_way.push_back(median(std::move(times)));
    }
    t.barrier();
    return one_way;
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
    const std::vector<double> one_way = profiling::on_two_ranks(
        o.timeout_s,
        [&](int rank, c10::intrusive_ptr<c10d::Store> store, std::chrono::milliseconds timeout) {
            auto transport = make_gloo_transport(std::move(store), o.host, rank, 2, timeout);
            return ping_pong(*transport, sizes, std::max(1, o.repeats));
        });
    std::vector<TransferSample> samples;
    for (std::size_t k = 0; k < sizes.size(); ++k) {
        samples.push_back(
            {static_cast<double>(std::max<std::int64_t>(1, sizes[k] / 4) * 4), one_way[k]});
    }
    return fit_transfer(std::move(samples));
}

}  // namespace pipewright::backend
