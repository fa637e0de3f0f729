// What data parallelism's collectives cost between two ranks for `pipewright
// profile`: the all-reduce that averages gradients and the all-gather of
// updated weight shards under ZeRO-1, timed over the same c10d transport a
// run's replicas use (a Gloo group), two threads of this process playing
// rank 0 and rank 1.

#include <algorithm>

#include "pipewright/backend/profiler.h"
#include "pipewright/backend/transport.h"
#include "profile/profiler_timing.h"
#include "profile/profiler_two_ranks.h"

namespace pipewright::backend {
namespace {

using profiling::median;
using profiling::now_s;

constexpr int kWarmup = 2;

struct Timings {
    std::vector<double> all_reduce;
    std::vector<double> all_gather;
};

// Rank 0's median time of each collective at each size: from a barrier,
// which both ranks leave together, until its own wait returns.
Timings time_collectives(CollectiveGroup& group, const std::vector<std::int64_t>& elements,
                         int repeats, std::chrono::milliseconds timeout) {
    Timings out;
    const auto timed = [&](auto&& launch) {
        std::vector<double> times;
        for (int i = 0; i < kWarmup + repeats; ++i) {
            group.barrier()->wait(timeout);
            const double start = now_s();
            launch()->wait(timeout);
            if (i >= kWarmup) {
                times.push_back(now_s() - start);
            }
        }
        return median(std::move(times));
    };
    for (const std::int64_t n : elements) {
        std::vector<torch::Tensor> buffer{torch::ones({n}, torch::kFloat32)};
        out.all_reduce.push_back(timed([&] {
            c10d::AllreduceOptions options;
            options.reduceOp = c10d::ReduceOp::SUM;
            options.timeout = timeout;
            return group.allreduce(buffer, options);
        }));
        std::vector<torch::Tensor> shard{torch::ones({n / 2}, torch::kFloat32)};
        std::vector<std::vector<torch::Tensor>> gathered(1);
        for (int r = 0; r < 2; ++r) {
            gathered[0].push_back(torch::empty_like(shard[0]));
        }
        out.all_gather.push_back(timed([&] { return group.allgather(gathered, shard); }));
    }
    return out;
}

std::vector<TransferSample> samples_of(const std::vector<std::int64_t>& elements,
                                       const std::vector<double>& seconds) {
    std::vector<TransferSample> samples;
    for (std::size_t k = 0; k < elements.size(); ++k) {
        samples.push_back({static_cast<double>(elements[k] * 4), seconds[k]});
    }
    return samples;
}

}  // namespace

std::vector<std::int64_t> default_collective_sizes() {
    return {64 << 10, 1 << 20, 4 << 20, 16 << 20};
}

CollectiveFits fit_collectives(std::vector<TransferSample> all_reduce,
                               std::vector<TransferSample> all_gather) {
    CollectiveFits fits;
    // With two members the ring all-reduce takes 2α + bytes / B and the ring
    // all-gather α + bytes / 2B (collective_cost.h): the straight line through
    // the times gives α and B.
    const TransferFit reduce = fit_transfer(std::move(all_reduce));
    fits.all_reduce.link = {reduce.link.bandwidth_GBps, reduce.link.latency_us / 2};
    fits.all_reduce.samples = reduce.samples;
    const TransferFit gather = fit_transfer(std::move(all_gather));
    fits.all_gather.link = {gather.link.bandwidth_GBps / 2, gather.link.latency_us};
    fits.all_gather.samples = gather.samples;
    return fits;
}

CollectiveFits measure_collectives(const TransferOptions& o) {
    const std::vector<std::int64_t> sizes =
        o.message_bytes.empty() ? default_collective_sizes() : o.message_bytes;
    // Whole float32 elements, an even count so that each rank's shard of an
    // all-gather is the same size.
    std::vector<std::int64_t> elements;
    for (const std::int64_t bytes : sizes) {
        elements.push_back(std::max<std::int64_t>(2, bytes / 8 * 2));
    }
    const Timings t = profiling::on_two_ranks(
        o.timeout_s,
        [&](int rank, c10::intrusive_ptr<c10d::Store> store, std::chrono::milliseconds timeout) {
            auto group = make_gloo_group(std::move(store), "collectives", o.host, rank, 2, timeout);
            return time_collectives(*group, elements, std::max(1, o.repeats), timeout);
        });
    return fit_collectives(samples_of(elements, t.all_reduce), samples_of(elements, t.all_gather));
}

}  // namespace pipewright::backend
