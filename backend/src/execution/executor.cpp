// The stage runtime. One RankExecutor runs the action list the simulator
// times, in the same order, so measured and simulated timelines compare
// action by action.
#include "pipewright/backend/executor.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <stdexcept>
#include <thread>

#include "execution/action_clock.h"
#include "execution/boundary_receives.h"
#include "execution/gradient_accumulation.h"
#include "execution/parameter_update.h"
#include "execution/random_replay.h"
#include "execution/recomputation_units.h"
#include "layers/tensor_parallel_layers.h"
#include "layers/tied_head.h"
#include "layers/vocabulary_parallel_loss.h"
#include "pipewright/backend/backend_error.h"
#include "pipewright/backend/modules.h"
#include "transport/send_completions.h"
#include "transport/transfer_channels.h"

namespace pipewright::backend {

double steady_seconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const OptimizerConfig& c,
                                                        const std::vector<torch::Tensor>& params) {
    switch (c.type) {
        case OptimizerKind::sgd:
            return std::make_unique<torch::optim::SGD>(
                params,
                torch::optim::SGDOptions(c.lr).momentum(c.momentum).weight_decay(c.weight_decay));
        case OptimizerKind::adam:
            return std::make_unique<torch::optim::Adam>(
                params, torch::optim::AdamOptions(c.lr).weight_decay(c.weight_decay));
        case OptimizerKind::adamw:
            return std::make_unique<torch::optim::AdamW>(
                params, torch::optim::AdamWOptions(c.lr).weight_decay(c.weight_decay));
    }
    throw BackendError("unknown optimizer");
}

namespace {

// What one stage keeps for one micro-batch between its actions.
struct Slot {
    torch::Tensor received_input;  // RECV_F result, consumed by F
    torch::Tensor input;           // F's input (requires grad past stage 0)
    torch::Tensor output;          // F's output, the root of backward
    torch::Tensor received_grad;   // RECV_B result
    torch::Tensor output_grad;     // gradient of output kept from I for W
    torch::Tensor loss;            // last stage: this micro-batch's share of the loss
    torch::Tensor input_grad;      // produced by B or I, consumed by SEND_B
    // Activation checkpointing: what F kept to rebuild the stage from
    // (recomputation_units.h), and whether I has recomputed the forward
    // with its graph yet.
    KeptUnits kept;
    bool recomputed = false;
};

struct Stage {
    int index = 0;
    torch::nn::Sequential module{nullptr};
    std::vector<torch::Tensor> params;
    std::vector<Slot> slots;
    bool random = false;  // draws random numbers in training (dropout)
    StageUnits units;     // under activation checkpointing
};

double tensor_bytes(const torch::Tensor& t) {
    return static_cast<double>(t.numel()) * static_cast<double>(t.element_size());
}

}  // namespace

struct RankExecutor::Impl {
    const AnalyzedProject& project;
    int rank;
    Transport& transport;
    torch::Dtype dtype;
    torch::Device device;
    bool checkpointing;
    // Only the first blocks of each stage rebuilt (training.recompute_blocks):
    // a split backward goes unit by unit too (StageUnits::input_gradient).
    bool partial_recompute;
    int microbatches;
    int last_stage;
    std::vector<int> stage_indices;
    std::map<int, Stage> stages;  // by stage index
    // Data parallelism (null groups with one replica).
    ReplicaGroup replicas;
    // The gradients' averaging over the replicas and the optimizer step.
    std::unique_ptr<ParameterUpdate> update;
    // Tensor parallelism: the group, and the parameters whose gradients its
    // members compute from their slice of the sequence (summed before the
    // step; none without sequence parallelism).
    TensorGroup tensor;
    std::vector<torch::Tensor> sequence_partials;
    // Context parallelism: this rank's group; its stages hold 1/size of
    // every sequence (context_group.h).
    ContextGroup context;
    // Tied embeddings in two stages: each holds a copy (tied_head.h).
    std::optional<TiedStages> tied;

    // Per iteration.
    const Batch* batch = nullptr;
    StepRecord record;
    torch::Tensor loss_sum;  // on the device: reading it would wait for the GPU
    std::function<std::int64_t()> memory_probe;
    // Action times are stamps of the clock until the iteration ends (a GPU
    // runs behind the thread that issues its work; see ActionClock).
    std::unique_ptr<ActionClock> clock;
    struct Stamps {
        std::size_t start = 0, end = 0;
    };
    std::vector<Stamps> event_stamps;  // parallel to record.events
    std::vector<std::pair<std::size_t, std::int64_t>> memory_stamps;
    BoundaryReceives receives;
    // Declared last: destroyed first, so that its threads stop before the
    // state they stamp goes away.
    SendCompletions sends;

    Impl(const AnalyzedProject& p, int r, Transport& t, torch::Dtype d, torch::Device dev,
         ReplicaGroup rg, const TensorGroup& tp, const ExpertReplicas& experts, ContextGroup cp)
        : project(p),
          rank(r),
          transport(t),
          dtype(d),
          device(dev),
          checkpointing(p.project.training.full_recompute()),
          partial_recompute(checkpointing && p.project.training.recompute_blocks.has_value()),
          microbatches(p.schedule.num_microbatches),
          last_stage(p.schedule.num_stages - 1),
          replicas(std::move(rg)),
          tensor(tp),
          context(std::move(cp)),
          receives(p, r, t, d, dev, context.size) {
        std::map<int, torch::nn::Sequential> modules;
        for (int s = 0; s < p.schedule.num_stages; ++s) {
            if (p.schedule.stage_rank[static_cast<std::size_t>(s)] != rank) {
                continue;
            }
            Stage st;
            st.index = s;
            const auto& range = p.stages[static_cast<std::size_t>(s)];
            st.module = tp.size > 1
                            ? build_tensor_parallel_layers(
                                  p, range.first_layer, range.last_layer,
                                  static_cast<std::uint64_t>(p.project.training.seed), dtype, tp)
                            : build_stage(p, s, dtype, experts.dispatch, context);
            st.module->to(device);
            st.module->train();
            st.params = st.module->parameters();
            if (tp.size > 1) {
                for (const torch::Tensor& partial : sequence_partial_parameters(
                         p, range.first_layer, range.last_layer, st.module)) {
                    sequence_partials.push_back(partial);
                }
            }
            const auto& stage_info = p.stages[static_cast<std::size_t>(s)];
            for (int l = stage_info.first_layer; l <= stage_info.last_layer; ++l) {
                st.random =
                    st.random || draws_random(p.project.model.layers[static_cast<std::size_t>(l)]);
            }
            if (checkpointing) {
                st.units = StageUnits(p, st.module, stage_info.first_layer, stage_info.last_layer);
            }
            modules.emplace(s, st.module);
            st.slots.resize(static_cast<std::size_t>(microbatches));
            stages.emplace(s, std::move(st));
            stage_indices.push_back(s);
        }
        update = std::make_unique<ParameterUpdate>(p, modules, replicas, experts);
        clock = make_action_clock(device);
        tied = tied_stages(p);
    }

    // The weight of layer `layer` in local stage `stage`, or undefined.
    torch::Tensor local_weight(int stage, int layer) const {
        if (!local(stage)) {
            return {};
        }
        const std::string name =
            stage_module_name(project.project.model.layers.at(static_cast<std::size_t>(layer)));
        const torch::Tensor* w = stages.at(stage).module->named_parameters().find(name + ".weight");
        return w == nullptr ? torch::Tensor() : *w;
    }

    // Both tied copies take the step of their summed gradients. The tags lie
    // past every stage boundary's (transfer_tag), one per direction.
    void sum_tied_gradients_if_split() {
        if (!tied || (!local(tied->embedding) && !local(tied->head))) {
            return;
        }
        const int beyond = project.schedule.num_stages;
        backend::sum_tied_gradients(local_weight(tied->embedding, project.tied->embedding),
                                    local_weight(tied->head, project.tied->head),
                                    rank_of(local(tied->embedding) ? tied->head : tied->embedding),
                                    tag(beyond, 0, false), tag(beyond, 0, true), transport);
    }

    int rank_of(int stage) const {
        return project.schedule.stage_rank[static_cast<std::size_t>(stage)];
    }
    bool local(int stage) const { return stages.contains(stage); }
    Slot& slot(int stage, int mb) {
        return stages.at(stage).slots.at(static_cast<std::size_t>(mb));
    }

    // Tags are unique per stage boundary, micro-batch and direction; pairs of
    // ranks keep them in order across iterations.
    int tag(int boundary, int mb, bool backward) const {
        return transfer_tag(boundary, mb, backward, microbatches);
    }

    // An event from the stamp `start` to now; times are filled in at the
    // end of the iteration.
    void add_event(const Action& a, std::size_t start, int peer = -1, double bytes = 0) {
        TimelineEvent e;
        e.rank = rank;
        e.action = a;
        e.peer_rank = peer;
        e.bytes = bytes;
        record.events.push_back(e);
        event_stamps.push_back({start, clock->stamp()});
    }

    // Posts the send and goes on at once; the send's event ends when a
    // watcher thread sees the transfer complete (see SendCompletions).
    void send(const Action& a, torch::Tensor t, int peer, int boundary, bool backward) {
        if (device.is_cpu()) {
            // The transport's threads run as batch work on a CPU rank
            // (run/core_binding.h): they never preempt this thread, so let
            // them take what arrived during the last action (the peer's
            // word that it awaits this tensor, above all) before posting.
            std::this_thread::yield();
        }
        const std::size_t start = clock->stamp();
        const double posted = steady_seconds();
        auto pending = transport.send(t, peer, tag(boundary, a.microbatch, backward));
        add_event(a, start, peer, tensor_bytes(t));
        sends.watch(std::move(pending), std::move(t), peer, record.events.size() - 1, posted);
    }

    // Turns the iteration's stamps into times; a send ends when its
    // transfer completed (`send_ends`, from SendCompletions::collect).
    std::vector<double> resolve_times(
        const std::vector<std::pair<std::size_t, double>>& send_ends) {
        std::vector<double> times = clock->resolve();
        for (std::size_t i = 0; i < record.events.size(); ++i) {
            record.events[i].start_s = times.at(event_stamps[i].start);
            record.events[i].end_s = times.at(event_stamps[i].end);
        }
        for (const auto& [at, bytes] : memory_stamps) {
            record.memory.push_back({times.at(at), bytes});
        }
        for (const auto& [event, end] : send_ends) {
            TimelineEvent& e = record.events.at(event);
            e.end_s = std::max(end, e.start_s);
        }
        return times;
    }

    void sample_memory() {
        if (memory_probe) {
            memory_stamps.emplace_back(clock->stamp(), memory_probe());
        }
    }

    // Activation checkpointing: the forward again, this time with its graph,
    // from the input F kept (once per micro-batch: W reuses what I rebuilt).
    void recompute(int stage, int mb) {
        Slot& sl = slot(stage, mb);
        if (!checkpointing || sl.recomputed) {
            return;
        }
        const ReplayRandomState replay(device, sl.kept.random_state(0));
        sl.output = stages.at(stage).module->forward(sl.input);
        sl.recomputed = true;
    }

    // The last stage's share of the loss for micro-batch `mb`, computed from
    // `output` the first time it is asked for.
    torch::Tensor loss_of(int mb, const torch::Tensor& output) {
        Slot& sl = slot(last_stage, mb);
        if (!sl.loss.defined()) {
            const torch::Tensor target = batch->targets.at(static_cast<std::size_t>(mb)).to(device);
            // Scaled so that accumulating m micro-batches gives the
            // gradient of the batch mean.
            // Under tensor parallelism the head may leave each member
            // the logits of its slice of the vocabulary: the loss is then
            // computed over the group without gathering them.
            sl.loss = (vocabulary_split_output(project)
                           ? vocabulary_parallel_cross_entropy(output, target, tensor)
                           : compute_loss(project.project.model.loss, output, target)) /
                      static_cast<double>(microbatches);
            const torch::Tensor value = sl.loss.detach();
            loss_sum = loss_sum.defined() ? loss_sum + value : value;
        }
        return sl.loss;
    }

    // The gradient of stage `stage`'s output for micro-batch `mb`, from the
    // next stage on this rank or received from its rank.
    torch::Tensor output_gradient(int stage, int mb) {
        Slot& sl = slot(stage, mb);
        if (sl.output_grad.defined()) {
            return sl.output_grad;
        }
        torch::Tensor g;
        if (local(stage + 1)) {
            g = std::exchange(slot(stage + 1, mb).input_grad, torch::Tensor());
        } else {
            g = std::exchange(sl.received_grad, torch::Tensor());
        }
        if (!g.defined()) {
            throw BackendError("stage " + std::to_string(stage) +
                               ": backward before its output gradient arrived (micro-batch " +
                               std::to_string(mb) + ")");
        }
        sl.output_grad = g;
        return g;
    }

    // The roots of backward for (stage, mb) and the gradients flowing into them.
    std::pair<torch::Tensor, torch::Tensor> backward_roots(int stage, int mb) {
        recompute(stage, mb);
        Slot& sl = slot(stage, mb);
        if (stage == last_stage) {
            return {loss_of(mb, sl.output), torch::Tensor()};
        }
        return {sl.output, output_gradient(stage, mb)};
    }

    // Frees the graph and activations of a finished micro-batch; the input
    // gradient stays until SEND_B (or the local previous stage) takes it.
    static void forget(Slot& sl) {
        torch::Tensor keep = std::move(sl.input_grad);
        sl = Slot{};
        sl.input_grad = std::move(keep);
    }

    void forward(int s, int mb) {
        Slot& sl = slot(s, mb);
        torch::Tensor x;
        if (s == 0) {
            x = batch->inputs.at(static_cast<std::size_t>(mb)).to(device);
        } else {
            x = local(s - 1) ? consume_output(s - 1, mb)
                             : std::exchange(sl.received_input, torch::Tensor());
            if (!x.defined()) {
                throw BackendError("stage " + std::to_string(s) +
                                   ": forward before its input arrived");
            }
            // The input crossed detached; make it a leaf whose gradient is
            // what goes back to the previous stage.
            x = x.detach().requires_grad_(true);
        }
        sl.input = x;
        if (!checkpointing) {
            sl.output = stages.at(s).module->forward(x);
            return;
        }
        // Checkpointing: no graph, so the activations inside the stage go at
        // once; only each unit's input stays, and the output until it is
        // passed on.
        Stage& st = stages.at(s);
        sl.output = st.units.forward_keeping(x, sl.kept, st.random, device);
        if (s == last_stage) {
            sl.output = torch::Tensor();  // backward recomputes it for the loss
        }
    }

    // The output of stage `s` for the next stage: detached; under
    // checkpointing nothing else needs it, so the slot lets it go.
    torch::Tensor consume_output(int s, int mb) {
        Slot& sl = slot(s, mb);
        torch::Tensor out = sl.output.detach();
        if (checkpointing) {
            sl.output = torch::Tensor();
        }
        return out;
    }

    // Where a unit-by-unit backward of (s, mb) starts: the loss the last
    // stage makes of its output, or the gradient of the stage's output.
    std::pair<torch::Tensor, std::function<torch::Tensor(const torch::Tensor&)>> unit_backward_seed(
        int s, int mb) {
        if (s == last_stage) {
            return {torch::Tensor(),
                    [this, mb](const torch::Tensor& output) { return loss_of(mb, output); }};
        }
        return {output_gradient(s, mb), nullptr};
    }

    // B under checkpointing: the units rebuilt one at a time.
    void backward_unit_by_unit(int s, int mb) {
        Slot& sl = slot(s, mb);
        auto [grad, loss] = unit_backward_seed(s, mb);
        stages.at(s).units.backward(sl.input, sl.kept, std::move(grad), loss, device);
        if (s > 0) {
            sl.input_grad = sl.input.grad();
        }
        forget(sl);
    }

    void backward_full(int s, int mb) {
        if (checkpointing) {
            backward_unit_by_unit(s, mb);
            return;
        }
        auto [root, grad] = backward_roots(s, mb);
        if (!root.requires_grad()) {
            // A first stage without parameters (a ReLU alone): nothing in it
            // asks for a gradient, so its backward has nothing to do.
            forget(slot(s, mb));
            return;
        }
        if (grad.defined()) {
            torch::autograd::backward({root}, {grad});
        } else {
            torch::autograd::backward({root});
        }
        Slot& sl = slot(s, mb);
        if (s > 0) {
            sl.input_grad = sl.input.grad();
        }
        forget(sl);  // frees the graph and activations
    }

    // Zero-bubble I: the input gradient only, keeping the graph for W.
    void backward_input(int s, int mb) {
        if (partial_recompute) {
            Slot& sl = slot(s, mb);
            auto [grad, loss] = unit_backward_seed(s, mb);
            torch::Tensor g =
                stages.at(s).units.input_gradient(sl.input, sl.kept, std::move(grad), loss, device);
            if (s > 0) {
                sl.input_grad = std::move(g);
            }
            return;
        }
        auto [root, grad] = backward_roots(s, mb);
        if (s == 0) {
            return;  // stage 0 has no input gradient; W does the whole pass
        }
        Slot& sl = slot(s, mb);
        std::vector<torch::Tensor> grads;
        if (grad.defined()) {
            grads.push_back(grad);
        }
        sl.input_grad = torch::autograd::grad({root}, {sl.input}, grads, /*retain_graph=*/true)[0];
    }

    // Zero-bubble W: parameter gradients, accumulated like backward() does.
    void backward_weight(int s, int mb) {
        Stage& st = stages.at(s);
        if (partial_recompute) {
            StageUnits::weight_gradient(slot(s, mb).kept, st.params);
            forget(slot(s, mb));
            return;
        }
        auto [root, grad] = backward_roots(s, mb);
        if (!st.params.empty() && root.requires_grad()) {
            accumulate_weight_gradients(root, grad, st.params);
        }
        // A stage without parameters: its W is a no-op (still timed and
        // recorded like any action); it only lets the graph go.
        forget(slot(s, mb));
    }

    // REDUCE_GRAD: the sum of the stage's gradients over the replicas. With
    // overlap (DDP) the buckets go out and the rank computes on while they
    // travel; a watcher thread stamps the end of the event when the last
    // bucket is summed (as for a send). Without, the rank waits here. Either
    // way the averages are written back before the optimizer step (finish).
    void reduce_gradients(const Action& a, std::size_t start) {
        const double posted = steady_seconds();
        GradientSync::Started started = update->start_reduction(a.stage);
        if (!update->overlapped()) {
            started.work->wait();
            add_event(a, start, -1, started.bytes);
            return;
        }
        add_event(a, start, -1, started.bytes);
        sends.watch(std::move(started.work), torch::Tensor(), kReductionWatcher,
                    record.events.size() - 1, posted);
    }
    // The watcher of the reductions, apart from the peers' (ranks >= 0).
    static constexpr int kReductionWatcher = -1;

    // The loss of the global batch: the mean of the replicas' (each the mean
    // over its share). Only the last stage's ranks hold one, and they form
    // one group.
    void average_loss_over_replicas() {
        torch::Tensor value = loss_sum.detach().reshape({1}).clone();
        std::vector<torch::Tensor> tensors{value};
        replicas.collectives->allreduce(tensors)->wait(replicas.timeout);
        loss_sum = value[0] / static_cast<double>(replicas.replicas);
    }

    const std::vector<Action>& my_actions() const {
        return project.schedule.ranks.at(static_cast<std::size_t>(rank));
    }

    void execute(std::size_t index) {
        const Action& a = my_actions()[index];
        const int s = a.stage, mb = a.microbatch;
        const std::size_t start = clock->stamp();
        switch (a.type) {
            case ActionType::forward:
                forward(s, mb);
                add_event(a, start);
                break;
            case ActionType::backward:
                backward_full(s, mb);
                add_event(a, start);
                break;
            case ActionType::backward_input:
                backward_input(s, mb);
                add_event(a, start);
                break;
            case ActionType::backward_weight:
                backward_weight(s, mb);
                add_event(a, start);
                break;
            case ActionType::send_forward:
                if (!local(s + 1)) {
                    send(a, consume_output(s, mb), rank_of(s + 1), s, false);
                }
                break;
            case ActionType::send_backward:
                if (!local(s - 1)) {
                    send(a, std::exchange(slot(s, mb).input_grad, torch::Tensor()), rank_of(s - 1),
                         s - 1, true);
                }
                break;
            case ActionType::recv_forward:
                if (!local(s - 1)) {
                    auto t = receives.take(index);
                    add_event(a, start, receives.peer(a), tensor_bytes(t));
                    slot(s, mb).received_input = std::move(t);
                }
                break;
            case ActionType::recv_backward:
                if (!local(s + 1)) {
                    auto t = receives.take(index);
                    add_event(a, start, receives.peer(a), tensor_bytes(t));
                    slot(s, mb).received_grad = std::move(t);
                }
                break;
            case ActionType::reduce_grad:
                if (update->reduces()) {
                    reduce_gradients(a, start);
                }
                break;
            case ActionType::unshard:
            case ActionType::reshard:
                // ZeRO-3 only, which real runs refuse (load_for_run): every
                // replica holds its stages' whole parameters.
                break;
        }
        sample_memory();
    }
};

RankExecutor::RankExecutor(const AnalyzedProject& project, int rank, Transport& transport,
                           torch::Dtype dtype, torch::Device device, ReplicaGroup replicas,
                           TensorGroup tensor, ExpertReplicas experts, ContextGroup context)
    : impl_(std::make_unique<Impl>(project, rank, transport, dtype, device, std::move(replicas),
                                   tensor, experts, std::move(context))) {}

RankExecutor::~RankExecutor() = default;

StepRecord RankExecutor::run_step(int step, const Batch& batch) {
    Impl& m = *impl_;
    m.batch = &batch;
    m.record = StepRecord{};
    m.record.step = step;
    m.loss_sum = torch::Tensor();
    m.event_stamps.clear();
    m.memory_stamps.clear();
    // Iterations start together so that each one's time is its own, as in
    // the simulated timeline.
    m.transport.barrier();
    if (m.replicas.control) {
        // After the replica's own barrier: once this one opens, every rank
        // of every replica has entered its replica's barrier.
        m.replicas.control->barrier()->wait(m.replicas.timeout);
    }
    m.clock->begin_iteration();
    const std::size_t start = m.clock->stamp();
    m.sample_memory();
    m.update->zero_grad();
    for (std::size_t i = 0; i < m.my_actions().size(); ++i) {
        m.execute(i);
    }
    const auto send_ends = m.sends.collect();
    m.update->finish_reductions();
    m.sum_tied_gradients_if_split();
    sum_gradients_over_group(m.sequence_partials, m.tensor);
    m.update->step();
    const std::size_t end = m.clock->stamp();
    m.sample_memory();
    const std::vector<double> times = m.resolve_times(send_ends);
    m.record.start_s = times.at(start);
    m.record.end_s = times.at(end);
    if (has_last_stage() && m.loss_sum.defined() && m.replicas.replicas > 1) {
        m.average_loss_over_replicas();
    }
    if (has_last_stage() && m.loss_sum.defined()) {
        m.record.loss = m.loss_sum.item<double>();
    }
    m.batch = nullptr;
    return std::move(m.record);
}

void RankExecutor::set_memory_probe(std::function<std::int64_t()> probe) {
    impl_->memory_probe = std::move(probe);
}

bool RankExecutor::has_first_stage() const {
    return impl_->local(0);
}
bool RankExecutor::has_last_stage() const {
    return impl_->local(impl_->last_stage);
}
const std::vector<int>& RankExecutor::stages() const {
    return impl_->stage_indices;
}
torch::nn::Sequential RankExecutor::module(int stage) const {
    return impl_->stages.at(stage).module;
}

void RankExecutor::save_optimizer(torch::serialize::OutputArchive& archive) const {
    impl_->update->save(archive);
}

void RankExecutor::load_optimizer(torch::serialize::InputArchive& archive) {
    impl_->update->load(archive);
}

}  // namespace pipewright::backend
