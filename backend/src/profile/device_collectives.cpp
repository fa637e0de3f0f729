// `pipewright calibrate`'s collectives: all-reduce, all-gather,
// reduce-scatter and all-to-all among the machine's devices, over the
// library a run's groups use (NCCL between GPUs, Gloo between CPU workers),
// each group's ranks as threads of this process, as nccl-tests runs them.
#include "profile/device_collectives.h"

#include <algorithm>

#include <torch/torch.h>

#include "execution/compute_device.h"
#include "pipewright/backend/backend_error.h"
#include "pipewright/backend/transport.h"
#include "profile/measured_dtype.h"
#include "profile/profiler_timing.h"
#include "profile/profiler_two_ranks.h"

namespace pipewright::backend {
namespace {

using profiling::median;
using profiling::now_s;

constexpr int kWarmup = 2;
constexpr double kTimeoutSeconds = 300;

// How many collectives one timed sample runs back to back: small ones
// several, so that the clock and the final synchronisation are a small part
// of the sample. The same count on every rank, since each call must meet.
int calls_for(std::int64_t bytes, bool gpu) {
    const std::int64_t sample_bytes = gpu ? (std::int64_t{64} << 20) : (std::int64_t{16} << 20);
    return static_cast<int>(
        std::clamp<std::int64_t>(sample_bytes / std::max<std::int64_t>(bytes, 1), 1, 20));
}

// Launches one collective of `kind` over buffers sized for `elements` (each
// member's whole buffer, as CollectiveSample counts it).
class Launcher {
  public:
    Launcher(CollectiveGroup& group, bool nccl, CollectiveKind kind, std::int64_t elements,
             int members, const torch::TensorOptions& options, std::chrono::milliseconds timeout)
        : group_(group), nccl_(nccl), kind_(kind), timeout_(timeout) {
        const std::int64_t shard = elements / members;
        switch (kind) {
            case CollectiveKind::all_reduce:
                whole_ = {torch::ones({elements}, options)};
                break;
            case CollectiveKind::all_gather:
                whole_ = {torch::empty({shard * members}, options)};
                part_ = {torch::ones({shard}, options)};
                // Gloo gathers into one tensor per member.
                pieces_.emplace_back();
                for (int m = 0; m < members; ++m) {
                    pieces_[0].push_back(torch::empty({shard}, options));
                }
                break;
            case CollectiveKind::reduce_scatter:
                whole_ = {torch::ones({shard * members}, options)};
                part_ = {torch::empty({shard}, options)};
                break;
            case CollectiveKind::all_to_all:
                whole_ = {torch::ones({shard * members}, options)};
                part_ = {torch::empty({shard * members}, options)};
                break;
        }
    }

    void run_once() { launch()->wait(timeout_); }

  private:
    c10::intrusive_ptr<c10d::Work> launch() {
        switch (kind_) {
            case CollectiveKind::all_reduce: {
                c10d::AllreduceOptions o;
                o.reduceOp = c10d::ReduceOp::SUM;
                o.timeout = timeout_;
                return group_.allreduce(whole_, o);
            }
            case CollectiveKind::all_gather:
                return nccl_ ? group_._allgather_base(whole_[0], part_[0])
                             : group_.allgather(pieces_, part_);
            case CollectiveKind::reduce_scatter:
                return group_._reduce_scatter_base(part_[0], whole_[0]);
            case CollectiveKind::all_to_all: {
                std::vector<std::int64_t> equal;
                return group_.alltoall_base(part_[0], whole_[0], equal, equal);
            }
        }
        throw BackendError("unknown collective");
    }

    CollectiveGroup& group_;
    bool nccl_;
    CollectiveKind kind_;
    std::chrono::milliseconds timeout_;
    std::vector<torch::Tensor> whole_;
    std::vector<torch::Tensor> part_;
    std::vector<std::vector<torch::Tensor>> pieces_;
};

// Every rank meets here before a timed sample, so that a sample does not
// time a peer's late arrival.
void meet(CollectiveGroup& group, const torch::Device& device, std::chrono::milliseconds timeout) {
    std::vector<torch::Tensor> one{torch::zeros({1}, torch::TensorOptions().device(device))};
    group.allreduce(one)->wait(timeout);
    synchronize(device);
}

struct GroupPlan {
    bool nccl = false;
    int members = 2;
    std::vector<CollectiveKind> kinds;
    std::vector<std::int64_t> bytes;
    DType dtype = DType::float32;
    int repeats = 5;
};

std::vector<CollectiveSample> measure_group(const GroupPlan& plan, const std::string& device_kind,
                                            int rank, c10::intrusive_ptr<c10d::Store> store,
                                            std::chrono::milliseconds timeout) {
    const torch::Device device = rank_device(device_kind, rank);
    auto group = make_device_group(std::move(store), "calibrate-" + std::to_string(plan.members),
                                   "127.0.0.1", rank, plan.members, device, timeout);
    const auto options =
        torch::TensorOptions().device(device).dtype(measured_scalar_type(plan.dtype));
    const std::int64_t element = dtype_bytes(plan.dtype);
    std::vector<CollectiveSample> out;
    for (const CollectiveKind kind : plan.kinds) {
        for (const std::int64_t bytes : plan.bytes) {
            // Whole elements, a multiple of the members so that every shard
            // is the same size.
            const std::int64_t elements =
                std::max<std::int64_t>(1, bytes / element / plan.members) * plan.members;
            Launcher launcher(*group, plan.nccl, kind, elements, plan.members, options, timeout);
            const int calls = calls_for(bytes, device.is_cuda());
            std::vector<double> samples;
            for (int i = 0; i < kWarmup + plan.repeats; ++i) {
                meet(*group, device, timeout);
                const double start = now_s();
                for (int c = 0; c < calls; ++c) {
                    launcher.run_once();
                }
                synchronize(device);
                if (i >= kWarmup) {
                    samples.push_back((now_s() - start) / calls);
                }
            }
            out.push_back({kind, plan.members, elements * element, median(std::move(samples))});
        }
    }
    return out;
}

}  // namespace

std::vector<std::int64_t> default_collective_bytes(bool gpu) {
    if (gpu) {
        return {64 << 10, 1 << 20, 16 << 20, 256 << 20, std::int64_t{1} << 30};
    }
    return {64 << 10, 1 << 20, 16 << 20};
}

std::vector<int> collective_group_sizes(int devices) {
    std::vector<int> sizes;
    for (int d = 2; d <= devices; d *= 2) {
        sizes.push_back(d);
    }
    if (devices >= 2 && sizes.back() != devices) {
        sizes.push_back(devices);
    }
    return sizes;
}

MeasuredDeviceCollectives measure_device_collectives(const CollectiveCalibrationOptions& o) {
    const bool gpu = o.device_kind == "cuda";
    GroupPlan plan;
#ifdef PIPEWRIGHT_WITH_NCCL
    plan.nccl = gpu;  // as make_device_group chooses
#endif
    MeasuredDeviceCollectives out;
    out.library = plan.nccl ? "nccl" : "gloo";
    const int devices = gpu ? visible_gpus() : std::max(2, o.members);
    plan.dtype = o.dtype;
    plan.repeats = std::max(1, o.repeats);
    plan.bytes = o.bytes.empty() ? default_collective_bytes(gpu) : o.bytes;
    plan.kinds = {CollectiveKind::all_reduce, CollectiveKind::all_gather,
                  CollectiveKind::all_to_all};
    // LibTorch 1.13's Gloo has no reduce-scatter; the model prices it there.
    if (plan.nccl) {
        plan.kinds.insert(plan.kinds.begin() + 1, CollectiveKind::reduce_scatter);
    }
    for (const int members : gpu ? collective_group_sizes(devices) : std::vector<int>{devices}) {
        if (o.on_progress) {
            o.on_progress("collectives among " + std::to_string(members) +
                          (gpu ? " GPUs" : " CPU workers"));
        }
        plan.members = members;
        try {
            auto samples = profiling::on_ranks(members, kTimeoutSeconds,
                                               [&](int rank, c10::intrusive_ptr<c10d::Store> store,
                                                   std::chrono::milliseconds timeout) {
                                                   return measure_group(plan, o.device_kind, rank,
                                                                        std::move(store), timeout);
                                               });
            out.samples.insert(out.samples.end(), samples.begin(), samples.end());
        } catch (const c10::Error& e) {
            throw BackendError("a collective among " + std::to_string(members) + " " +
                               (gpu ? "GPUs" : "CPU workers") + " failed (" + out.library +
                               "): " + e.what_without_backtrace());
        }
    }
    return out;
}

}  // namespace pipewright::backend
