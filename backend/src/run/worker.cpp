// One rank of a real run, as a process of its own: rendezvous, execute the
// steps, publish progress, leave this rank's record in the run folder of its
// node and in the store, where node 0's launcher collects every rank's.
#include <unistd.h>
#include <optional>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

#include <ATen/Context.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "execution/allocator_tuning.h"
#include "execution/compute_device.h"
#include "execution/gradient_sync.h"
#include "execution/resident_memory.h"
#include "layers/context_chunks.h"
#include "layers/context_exchange.h"
#include "layers/tensor_parallel_layers.h"
#include "pipewright/backend/executor.h"
#include "pipewright/backend/launcher.h"
#include "pipewright/backend/modules.h"
#include "pipewright/backend/tensor_data.h"
#include "pipewright/core/launch_files.h"
#include "pipewright/core/project_io.h"
#include "pipewright/core/quantity_format.h"
#include "pipewright/core/run_folder_names.h"
#include "pipewright/core/run_records.h"
#include "run/core_binding.h"
#include "run/heartbeat.h"
#include "run/rank_checkpoint.h"
#include "run/rendezvous.h"
#include "run/run_store.h"
#include "run/worker_processes.h"
#include "transport/transfer_channels.h"
#ifdef PIPEWRIGHT_WITH_NCCL
#include "transport/transport_nccl.h"
#endif

namespace pipewright::backend {
namespace {

// Processes that show the same boot id share CLOCK_MONOTONIC (steady_clock),
// so their records line up without correction.
std::string clock_id() {
    std::ifstream in("/proc/sys/kernel/random/boot_id");
    std::string id;
    std::getline(in, id);
    return id;
}

// One machine: its boot id and host name (containers on one host share its
// cores and its boot id, but not always its host name: either will do).
std::string machine_id() {
    std::array<char, 256> host{};
    ::gethostname(host.data(), host.size() - 1);
    return clock_id() + "/" + host.data();
}

// This rank's place among the run's ranks on its machine, in rank order.
struct MachineRanks {
    int index = 0;
    int count = 1;
};
MachineRanks ranks_on_machine(c10d::Store& store, int world, int rank, const std::string& machine) {
    MachineRanks m{0, 0};
    for (int r = 0; r < world; ++r) {
        if (get_text(store, keys::joined(r)) == machine) {
            m.index += r < rank ? 1 : 0;
            ++m.count;
        }
    }
    m.count = std::max(1, m.count);
    return m;
}

// What a rank's memory figures measure: the process's resident set on a CPU
// (above what it held before the model existed: LibTorch, Gloo, the data's
// teacher), the caching allocator's tensors on a GPU (tensors only, so no
// runtime to subtract).
class RankMemory {
  public:
    explicit RankMemory(const torch::Device& device)
        : device_(device), runtime_(device.is_cuda() ? 0 : resident_.bytes()) {}

    [[nodiscard]] std::int64_t now() const {
        return device_.is_cuda() ? allocated_bytes(device_) : resident_.bytes();
    }
    [[nodiscard]] std::int64_t peak() const {
        return device_.is_cuda() ? peak_allocated_bytes(device_) : peak_resident_bytes();
    }
    [[nodiscard]] std::int64_t runtime() const { return runtime_; }
    [[nodiscard]] const char* kind() const { return device_.is_cuda() ? "cuda_allocated" : "rss"; }

  private:
    torch::Device device_;
    ResidentMemory resident_;
    std::int64_t runtime_;
};

// GPUs talk through NCCL where this build has it and the schedule receives
// every channel in the order it is sent; otherwise through Gloo (host copies).
std::unique_ptr<Transport> make_transport(c10::intrusive_ptr<c10d::Store> store,
                                          const std::string& master_host, int rank, int world,
                                          const torch::Device& device, const Schedule& schedule,
                                          std::chrono::milliseconds timeout, std::ostream& err) {
#ifdef PIPEWRIGHT_WITH_NCCL
    if (device.is_cuda()) {
        if (const std::string problem = channel_order_problem(schedule); problem.empty()) {
            const int m = schedule.num_microbatches;
            return make_nccl_transport(
                std::move(store), master_host, rank, world, device, timeout,
                [m](int tag) { return transfer_channel(tag, m); }, channel_ends(schedule));
        } else if (rank == 0) {
            err << worker_note(0, problem +
                                      "; NCCL matches messages by order, so transfers go "
                                      "through Gloo and host memory")
                << '\n';
        }
    }
#else
    (void)schedule;
    if (device.is_cuda() && rank == 0) {
        err << worker_note(0,
                           "this build has no NCCL; transfers between GPUs go through Gloo "
                           "and host memory")
            << '\n';
    }
#endif
    return make_gloo_transport(std::move(store), master_host, rank, world, timeout);
}

// Fault injection for the launcher's tests: the rank named by this
// variable raises at the start of step 1, while its peers wait for it; only
// in a job's first attempt, so that a restarted job (torchrun's
// --max-restarts, a requeued Slurm job) can resume and finish.
constexpr const char* kInjectFailureVariable = "PIPEWRIGHT_TEST_RAISE_ON_RANK";

std::optional<int> injected_failure_rank() {
    const char* value = std::getenv(kInjectFailureVariable);
    if (value == nullptr || *value == '\0' || !restart_from_environment().empty()) {
        return std::nullopt;
    }
    try {
        return std::stoi(value);
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

// Where this rank sits. Data parallelism: world rank = replica × ranks of
// the pipeline + rank. Each replica's pipeline talks in a process group of
// its own (keys under "replica-R/"), so its ranks keep the schedule's
// numbers; each pipeline rank's copies form a second group for the
// gradients, which never shares a connection with the pipeline. Tensor
// parallelism: the ranks above are the groups' first members (slice 0);
// slice k of every group comes k × those ranks later, and each slice is a
// pipeline (and replica groups) of its own, its stages' group a third Gloo
// group. Context parallelism: consecutive replicas share each sequence,
// replicas [g·C, (g+1)·C) forming context group g (a Gloo group per
// pipeline rank and slice).
struct RankPlace {
    int slice = 0;   // member of its stages' tensor-parallel groups
    int leader = 0;  // the same rank in slice 0
    int replica = 0;
    int in_pipeline = 0;  // rank in its replica's pipeline
    int replicas = 1;
    int context_size = 1;
    [[nodiscard]] int context_group() const { return replica / context_size; }
    [[nodiscard]] int context_member() const { return replica % context_size; }
};

RankPlace place_of(const AnalyzedProject& project, int rank) {
    RankPlace p;
    const int leaders = project.world_size();
    p.slice = rank / leaders;
    p.leader = rank % leaders;
    p.replica = project.replica_of(p.leader);
    p.in_pipeline = project.pipeline_rank_of(p.leader);
    p.replicas = project.data_parallel();
    p.context_size = std::max(1, project.project.context_parallel.size);
    return p;
}

// The store the launcher made (a private file, or a TCP store on --master),
// and the interface Gloo's connections use.
struct Rendezvous {
    c10::intrusive_ptr<c10d::Store> store;
    std::string gloo_host = kLoopbackHost;
};

Rendezvous connect_rendezvous(const WorkerOptions& o, std::chrono::milliseconds timeout) {
    Rendezvous r;
    if (!o.store_file.empty()) {
        try {
            r.store = connect_private_store(o.store_file, timeout);
        } catch (const std::exception& e) {
            throw BackendError("cannot open the run's rendezvous file " + o.store_file + ": " +
                               e.what());
        }
        return r;
    }
    const HostPort master = parse_host_port(o.master, "--master");
    r.gloo_host = master.host;
    try {
        r.store = connect_rendezvous_store(master.host, master.port, timeout);
    } catch (const std::exception&) {
        throw BackendError("cannot reach the rendezvous store at " + o.master + " within " +
                           format_duration(static_cast<double>(timeout.count()) / 1000));
    }
    if (!o.store_prefix.empty()) {
        // A store shared with torchrun's agent: this run's keys apart.
        r.store = c10::make_intrusive<c10d::PrefixStore>(o.store_prefix, r.store);
    }
    return r;
}

// The device of this rank, with the arithmetic settings every rank shares.
torch::Device prepare_compute(const WorkerOptions& o) {
    if (o.threads > 0) {
        torch::set_num_threads(o.threads);
    }
    // Subnormal floats cost up to 100x a normal multiply on x86; the
    // activations of a deep, freshly initialised model shrink into them.
    // The profile flushes them too, so the two time the same arithmetic.
    at::globalContext().setFlushDenormal(true);
    keep_freed_memory_for_reuse();
    return rank_device(o.device, o.local_rank);
}

// A CPU rank's threads on cores of its own, when the machine has enough for
// every rank of the run on it (see core_binding.h).
void bind_to_own_cores(const WorkerOptions& o, const MachineRanks& here, std::ostream& err) {
    if (o.device != "cpu" || !o.bind_cores) {
        return;
    }
    const std::vector<int> cores =
        cores_of_rank(allowed_cores(), here.index, here.count, torch::get_num_threads());
    if (cores.empty()) {
        return;
    }
    const std::string why = bind_process_to(cores);
    err << worker_note(o.rank, why.empty() ? "bound to " + counted("core", cores)
                                           : "runs unbound (" + why + ")")
        << '\n';
}

// The threads the process groups started (Gloo's event loops and workers)
// as batch work on a CPU rank (see schedule_as_batch).
void keep_transport_threads_from_preempting(const WorkerOptions& o,
                                            const std::vector<pid_t>& before, std::ostream& err) {
    if (o.device != "cpu") {
        return;
    }
    std::vector<pid_t> started;
    std::ranges::set_difference(thread_ids(), before, std::back_inserter(started));
    if (const std::string why = schedule_as_batch(started); !why.empty()) {
        err << worker_note(o.rank,
                           "its transport's threads keep the default scheduling (" + why + ")")
            << '\n';
    }
}

// Waits for every rank (Gloo's own rendezvous would wait for missing ranks
// for minutes and not say which; this wait is bounded and names them), then
// shares this machine's cores among its ranks and checks that the launcher
// started as many ranks as the run has.
void wait_for_run(c10d::Store& store, const WorkerOptions& o, const AnalyzedProject& project,
                  const std::string& machine, std::chrono::milliseconds timeout,
                  std::ostream& err) {
    if (const auto missing = wait_for_ranks(store, o.world_size, timeout); !missing.empty()) {
        throw BackendError(counted("rank", missing) + " never joined within " +
                           format_duration(static_cast<double>(timeout.count()) / 1000));
    }
    const MachineRanks here = ranks_on_machine(store, o.world_size, o.rank, machine);
    if (o.threads <= 0) {
        torch::set_num_threads(default_threads_per_rank(here.count));
    }
    bind_to_own_cores(o, here, err);
    if (o.world_size != run_process_count(project)) {
        throw BackendError("started as one of " + std::to_string(o.world_size) +
                           " ranks, but the run has " + std::to_string(run_process_count(project)) +
                           " (a launcher of another configuration?)");
    }
}

// The process groups this rank talks in: its pipeline, its copies in the
// other replicas, its stages' tensor-parallel group, the replicas its
// experts are split over and those that hold the same ones, its context
// group.
struct RankGroups {
    std::unique_ptr<Transport> pipeline;
    ReplicaGroup replicas;
    TensorGroup tensor;
    ExpertReplicas experts;
    ContextGroup context;
};

RankGroups connect_groups(const Rendezvous& r, const AnalyzedProject& project,
                          const RankPlace& place, const torch::Device& device,
                          std::chrono::milliseconds timeout, std::ostream& err) {
    auto slice_store = place.slice == 0
                           ? r.store
                           : c10::intrusive_ptr<c10d::Store>(c10::make_intrusive<c10d::PrefixStore>(
                                 "tensor-slice-" + std::to_string(place.slice) + "/", r.store));
    auto replica_store = c10::make_intrusive<c10d::PrefixStore>(
        "replica-" + std::to_string(place.replica) + "/", slice_store);
    RankGroups g;
    g.pipeline = make_transport(replica_store, r.gloo_host, place.in_pipeline, project.num_ranks(),
                                device, project.schedule, timeout, err);
    if (place.replicas > 1) {
        g.replicas = make_replica_group(slice_store, r.gloo_host, place.in_pipeline, place.replica,
                                        place.replicas, device, timeout);
    }
    g.experts =
        make_expert_replicas(slice_store, r.gloo_host, place.in_pipeline, place.replica,
                             place.replicas, project.project.expert_parallel.size, device, timeout);
    if (const int size = project.project.tensor_parallel.size; size > 1) {
        g.tensor = make_tensor_group(r.store, r.gloo_host, place.leader, place.slice, size, device,
                                     timeout);
    }
    if (place.context_size > 1) {
        g.context =
            make_context_group(slice_store, r.gloo_host, place.in_pipeline, place.context_group(),
                               place.context_member(), place.context_size,
                               project.project.context_parallel.exchange, device, timeout);
    }
    return g;
}

// What this rank trains on: the synthetic task (whose teacher, a whole
// model on the rank with the last stage, is not part of the training the
// simulator models: built before it), or the user's --data, the parts it
// reads.
class RankInputs {
  public:
    RankInputs(const WorkerOptions& o, const AnalyzedProject& project, torch::Dtype dtype,
               int in_pipeline)
        : task_(project, dtype, o.settings.data_dir.empty() && holds(project, in_pipeline, false)) {
        if (o.settings.data_dir.empty()) {
            return;
        }
        const bool first = holds(project, in_pipeline, true);
        const bool last = holds(project, in_pipeline, false);
        if (first || last) {
            data_.emplace(o.settings.data_dir, project, dtype,
                          first && last ? TensorData::Parts::both
                          : first       ? TensorData::Parts::inputs
                                        : TensorData::Parts::targets);
        }
    }

    // Under context parallelism the group's share of the batch, cut to this
    // member's chunks of every sequence.
    [[nodiscard]] Batch batch(int step, const RankPlace& place) const {
        const int share = place.context_group();
        Batch whole = data_ ? data_->batch(step, share) : task_.batch(step, share);
        return place.context_size > 1
                   ? context_share(whole, place.context_member(), place.context_size)
                   : whole;
    }

  private:
    // Whether rank `in_pipeline` runs the first (or the last) stage.
    static bool holds(const AnalyzedProject& project, int in_pipeline, bool first) {
        const auto& stage_rank = project.schedule.stage_rank;
        return !stage_rank.empty() &&
               (first ? stage_rank.front() : stage_rank.back()) == in_pipeline;
    }

    SyntheticTask task_;
    std::optional<TensorData> data_;
};

// Where training starts (after a resumed checkpoint's steps) and what it
// saves on the way.
struct TrainingState {
    int first_step = 0;
    RankCheckpoints& checkpoints;
    const torch::Device& device;
};

// The steps, each reported (by replica 0's rank with the loss) as it ends;
// under --stop-on-nan every rank stops after the same step.
RankRecord train(const WorkerOptions& o, const AnalyzedProject& project, RankExecutor& executor,
                 const RankInputs& inputs, c10d::Store& store, const RankPlace& place,
                 const TrainingState& state) {
    const int steps = o.settings.steps.value_or(project.project.training.steps);
    RankRecord record;
    const std::optional<int> raise_on = injected_failure_rank();
    for (int step = state.first_step; step < steps; ++step) {
        if (step == 1 && raise_on == o.rank) {
            // Its peers are inside step 1 by now, waiting for it.
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
            throw BackendError("injected failure (" + std::string(kInjectFailureVariable) + "=" +
                               std::to_string(o.rank) + ")");
        }
        StepRecord r = executor.run_step(step, inputs.batch(step, place));
        // Every replica's last rank holds the global batch's loss (the
        // executor averages it); replica 0's reports it.
        const bool reports = r.loss && place.replica == 0 && place.slice == 0;
        const bool finite = !r.loss || std::isfinite(*r.loss);
        if (reports) {
            const nlohmann::json progress{{"step", step},
                                          {"loss", loss_to_json(*r.loss)},
                                          {"iteration_time_s", r.end_s - r.start_s}};
            set_text(store, keys::progress(step), progress.dump());
        }
        record.steps.push_back(std::move(r));
        state.checkpoints.after_step(step + 1, executor, state.device);
        // --stop-on-nan: the reporting rank says after every step whether
        // the run goes on, and every rank waits for its word, so that all
        // of them stop after the same step and write their records.
        if (o.settings.stop_on_nan && step + 1 < steps) {
            if (reports) {
                set_text(store, keys::loss_finite(step), finite ? "yes" : "no");
            }
            if (get_text(store, keys::loss_finite(step)) == "no") {
                break;
            }
        }
    }
    return record;
}

// --save-params: each stage's parameters. Replicas past the first and
// tensor-parallel members save theirs apart, so that a test can check that
// every copy ends with the weights it should.
void save_parameters(const WorkerOptions& o, const RankExecutor& executor, const RankPlace& place) {
    for (int s : executor.stages()) {
        torch::save(executor.module(s)->parameters(),
                    o.out_dir + "/" + params_file_name(s, place.replica, place.slice));
    }
}

// This rank's record, in the run folder and in the store for node 0's
// launcher. The run's timeline, like the simulation's, has a lane per
// group: its first member's (the others run the same actions at the same
// times, on their slices).
void publish_record(const WorkerOptions& o, c10d::Store& store, RankRecord record,
                    const RankMemory& memory, const torch::Device& device, const RankPlace& place) {
    record.rank = o.rank;
    record.threads = torch::get_num_threads();
    record.clock = clock_id();
    record.device = device.str();
    record.device_name = device_name(device);
    record.memory_kind = memory.kind();
    record.peak_memory_bytes = memory.peak();
    record.runtime_memory_bytes = memory.runtime();
    if (place.slice == 0) {
        const std::string text = to_json(record).dump() + "\n";
        write_file_atomically(o.out_dir + "/rank-" + std::to_string(o.rank) + ".json", text);
        set_text(store, keys::record(o.rank), text);
    }
}

}  // namespace

int run_worker(const WorkerOptions& o, std::ostream& err) {
    const std::string who = "rank " + std::to_string(o.rank);
    Rendezvous rendezvous;
    // The reason goes to the log and to the store: the launcher reads it
    // there when the log could not be written (a full disk).
    const auto report = [&](const std::string& reason) {
        err << "pipewright worker " << who << ": " << reason << '\n' << std::flush;
        if (rendezvous.store) {
            try {
                const std::int64_t order = rendezvous.store->add(keys::kFailures, 1);
                set_text(*rendezvous.store, keys::failure_order(o.rank), std::to_string(order));
                set_text(*rendezvous.store, keys::failure(o.rank), reason);
            } catch (const std::exception&) {
                // the store is gone with the launcher: nobody is left to tell
            }
        }
        return 1;
    };
    try {
        // The store first, so that every later failure reaches the launcher.
        const auto timeout =
            std::chrono::milliseconds(static_cast<std::int64_t>(o.settings.timeout_s * 1000));
        rendezvous = connect_rendezvous(o, timeout);
        c10d::Store& store = *rendezvous.store;
        std::ostringstream problems;
        auto project = load_for_run(o.settings, problems);
        if (!project) {
            return report(problems.str());
        }
        const torch::Dtype dtype = run_dtype(*project, o.settings.dtype);
        const torch::Device device = prepare_compute(o);
        // The joined key names this rank's machine, so that the ranks of
        // launchers that share a machine share its cores.
        const std::string machine = machine_id();
        set_text(store, keys::joined(o.rank), machine);
        const Heartbeat heartbeat(rendezvous.store, o.rank);
        wait_for_run(store, o, *project, machine, timeout, err);

        const RankPlace place = place_of(*project, o.rank);
        const std::vector<pid_t> before_groups = thread_ids();
        RankGroups groups = connect_groups(rendezvous, *project, place, device, timeout, err);
        keep_transport_threads_from_preempting(o, before_groups, err);
        const RankInputs inputs(o, *project, dtype, place.in_pipeline);
        // Made before the model exists: the measured memory above it compares
        // with the simulator's.
        const RankMemory memory(device);
        RankExecutor executor(*project, place.in_pipeline, *groups.pipeline, dtype, device,
                              std::move(groups.replicas), groups.tensor, groups.experts,
                              std::move(groups.context));
        executor.set_memory_probe([&memory] { return memory.now(); });

        // Resumed after the modules and the data's teacher are built: the
        // random state they leave is replaced by the checkpoint's.
        RankCheckpoints checkpoints(o, *project, store, timeout);
        const int first_step = checkpoints.resume(executor, device);
        RankRecord record = train(o, *project, executor, inputs, store, place,
                                  TrainingState{first_step, checkpoints, device});
        if (o.settings.save_params) {
            save_parameters(o, executor, place);
        }
        publish_record(o, store, std::move(record), memory, device, place);
        return 0;
    } catch (const c10::Error& e) {
        // Torch's what() carries a C++ backtrace; the first line is the reason.
        return report(e.what_without_backtrace());
    } catch (const std::exception& e) {
        return report(e.what());
    }
}

}  // namespace pipewright::backend
