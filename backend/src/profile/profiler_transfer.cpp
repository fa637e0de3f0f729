// Transfer costs between two ranks for `pipewright profile`, measured over
// the same c10d transport a run uses (ProcessGroupGloo over TCP), not
// estimated: the profiler and a second process play rank 0 and rank 1 (see
// transfer_programme.h), and stamp a transfer's start and arrival on the
// clock the machine's processes share.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "pipewright/backend/backend_error.h"
#include "pipewright/backend/profiler.h"
#include "profile/profiler_timing.h"
#include "profile/transfer_peer.h"

namespace pipewright::backend {

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
    const profiling::TransferStamps stamps =
        profiling::time_transfers_in_two_processes(o, sizes, repeats);
    const std::size_t expected = sizes.size() * static_cast<std::size_t>(repeats);
    if (stamps.posted.size() != expected || stamps.arrived.size() != expected ||
        stamps.ready.size() != expected) {
        throw BackendError("the transfer measurement's second process sent " +
                           std::to_string(stamps.arrived.size()) + " arrival and " +
                           std::to_string(stamps.ready.size()) + " receive times where " +
                           std::to_string(expected) + " of each were expected");
    }
    std::vector<TransferSample> samples;
    for (std::size_t k = 0; k < sizes.size(); ++k) {
        std::vector<double> times;
        for (int i = 0; i < repeats; ++i) {
            const std::size_t at =
                k * static_cast<std::size_t>(repeats) + static_cast<std::size_t>(i);
            times.push_back(std::max(0.0, stamps.arrived[at] - stamps.posted[at]));
        }
        samples.push_back({static_cast<double>(std::max<std::int64_t>(1, sizes[k] / 4) * 4),
                           profiling::median(std::move(times))});
    }
    TransferFit fit = fit_transfer(std::move(samples));
    fit.ready_receive_us = profiling::median(stamps.ready) * 1e6;
    return fit;
}

}  // namespace pipewright::backend
