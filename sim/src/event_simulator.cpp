#include "pipewright/sim/event_simulator.h"

#include <sys/mman.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <queue>

#include "pipewright/sim/memory_model.h"

namespace pipewright {

namespace {

constexpr double kNotYet = -1.0;
constexpr std::size_t kNobody = static_cast<std::size_t>(-1);

// Large schedules write megabytes of fresh memory once; with 4 KiB pages the
// page faults cost more than the simulation itself (measured 4 vs 16 M
// actions/s at p=128, m=4096), so ask for transparent huge pages.
void advise_huge_pages(const void* data, std::size_t bytes) {
#ifdef MADV_HUGEPAGE
    constexpr std::uintptr_t kHuge = 2u << 20;
    if (bytes < 2 * kHuge) {
        return;
    }
    const auto begin = (reinterpret_cast<std::uintptr_t>(data) + kHuge - 1) & ~(kHuge - 1);
    const auto end = (reinterpret_cast<std::uintptr_t>(data) + bytes) & ~(kHuge - 1);
    if (end > begin) {
        ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
    }
#else
    (void)data;
    (void)bytes;
#endif
}

template <typename T>
std::vector<T> filled(std::size_t n, T value) {
    std::vector<T> v;
    v.reserve(n);
    advise_huge_pages(v.data(), n * sizeof(T));
    v.assign(n, value);
    return v;
}

// One bit per action of a (stage, micro-batch) in the completion flags.
std::uint8_t done_bit(ActionType t) {
    switch (t) {
        case ActionType::forward:
            return 1u << 0;
        case ActionType::backward:
        case ActionType::backward_input:
            return 1u << 1;
        case ActionType::backward_weight:
            return 1u << 2;
        case ActionType::send_forward:
            return 1u << 3;
        case ActionType::send_backward:
            return 1u << 4;
        case ActionType::recv_forward:
            return 1u << 5;
        case ActionType::recv_backward:
            return 1u << 6;
        case ActionType::unshard:
        case ActionType::reshard:
        case ActionType::reduce_grad:
            // Nothing waits on these through the flags: a stage's compute
            // waits for its UNSHARD's time (gathered_at_), and the rest
            // only end the iteration.
            return 0;
    }
    return 0;
}

// What the simulator keeps per action is what makes it fast: at p = 128,
// m = 4096 the records of every (stage, micro-batch) do not fit any cache,
// and loading them was most of the time. So it keeps one byte of
// completion flags per (stage, micro-batch) and a time only where another
// rank needs it: the arrival of each send. Every other dependency of an
// action is on its own rank (the schedule's lists run each stage on the
// rank that owns it, which advance() checks), finished before the rank's
// clock, so its time never delays anything.
class Simulator {
  public:
    explicit Simulator(const SimulationInput& input)
        : in_(input),
          s_(*input.schedule),
          splits_backward_(s_.splits_backward()),
          stages_(static_cast<std::size_t>(s_.num_stages)),
          mbs_(static_cast<std::size_t>(s_.num_microbatches)),
          done_(filled<std::uint8_t>(stages_ * mbs_, 0)),
          arrival_(filled(2 * stages_ * mbs_, kNotYet)),
          blocked_on_(s_.ranks.size(), kNobody),
          pc_(s_.ranks.size(), 0),
          time_(s_.ranks.size(), 0.0),
          link_free_(input.links.size(), 0.0),
          collective_free_(s_.ranks.size(), 0.0),
          gathered_at_(stages_, 0.0),
          last_backward_(stages_, {0.0, 0.0}),
          gradients_whole_(stages_, false),
          last_compute_(s_.ranks.size()),
          later_(s_.ranks.size()) {
        if (s_.stage_rank.size() != stages_) {
            throw SimulationError("the schedule places " + std::to_string(s_.stage_rank.size()) +
                                  " stages on ranks but has " + std::to_string(stages_));
        }
        // One hash lookup per stage and direction here, none per send.
        send_link_.assign(2 * stages_, -1);
        std::vector<int> sender(input.links.size(), -1);
        shared_link_.assign(input.links.size(), false);
        for (std::size_t st = 0; st < stages_; ++st) {
            const int rank = s_.stage_rank[st];
            if (st + 1 < stages_) {
                send_link_[2 * st] = input.link_index.find(rank, s_.stage_rank[st + 1]);
            }
            if (st > 0) {
                send_link_[2 * st + 1] = input.link_index.find(rank, s_.stage_rank[st - 1]);
            }
            for (int direction = 0; direction < 2; ++direction) {
                if (const int l = send_link_[2 * st + static_cast<std::size_t>(direction)];
                    l >= 0) {
                    const auto li = static_cast<std::size_t>(l);
                    shared_link_[li] = shared_link_[li] || (sender[li] >= 0 && sender[li] != rank);
                    sender[li] = rank;
                }
            }
        }
        if (!input.collectives.empty() && input.collectives.size() != stages_) {
            throw SimulationError("the collectives do not match the schedule's stages");
        }
        // A collective's links carry other ranks' traffic too, so requests
        // for them must come in time order, as for a shared link.
        for (const StageCollectives& c : input.collectives) {
            for (const SimCollective* one : {&c.unshard, &c.reduce_grad}) {
                for (const int l : one->links) {
                    shared_link_.at(static_cast<std::size_t>(l)) = true;
                }
            }
        }
        out_.collectives.resize(input.collectives.size());
        out_.links.resize(input.links.size());
        for (std::size_t i = 0; i < input.links.size(); ++i) {
            out_.links[i].name = input.links[i].name;
        }
        Timeline& t = out_.timeline;
        t.source = "simulated";
        t.schedule = s_.name;
        t.num_stages = s_.num_stages;
        t.num_microbatches = s_.num_microbatches;
        t.devices = input.rank_devices;
        t.devices.resize(s_.ranks.size());
        if (input.record_timeline) {
            // Rank by rank, each rank's events in the order it runs them, as
            // a measured timeline lists them: the file does not depend on
            // the order in which the simulator happened to visit the ranks.
            first_event_.reserve(s_.ranks.size());
            std::size_t events = 0;
            for (const auto& actions : s_.ranks) {
                first_event_.push_back(events);
                events += actions.size();
            }
            t.events.reserve(events);
            advise_huge_pages(t.events.data(), events * sizeof(TimelineEvent));
            t.events.resize(events);
        }
        out_.totals = MetricsAccumulator(s_.ranks.size());
        memory_.reserve(s_.ranks.size());
        for (std::size_t r = 0; r < s_.ranks.size(); ++r) {
            memory_.emplace_back(r < input.static_bytes.size() ? input.static_bytes[r] : 0);
        }
    }

    SimulationOutput run() {
        for (std::size_t r = 0; r < s_.ranks.size(); ++r) {
            ready_.push({0.0, static_cast<int>(r)});
        }
        while (!ready_.empty()) {
            const int rank = ready_.top().rank;
            ready_.pop();
            advance(rank);
        }
        report_deadlock_if_any();
        out_.peak_memory_bytes.reserve(memory_.size());
        for (std::size_t r = 0; r < memory_.size(); ++r) {
            for (const MemoryChange& change : later_[r]) {
                memory_[r].add(change);
            }
            memory_[r].finish();
            out_.peak_memory_bytes.push_back(memory_[r].peak_bytes());
        }
        return std::move(out_);
    }

  private:
    struct Entry {
        double time;
        int rank;
    };
    struct Later {
        bool operator()(const Entry& a, const Entry& b) const {
            return a.time > b.time || (a.time == b.time && a.rank > b.rank);
        }
    };

    std::size_t record(int stage, int mb) const {
        return static_cast<std::size_t>(stage) * mbs_ + static_cast<std::size_t>(mb);
    }
    // Where the arrival time of a send is kept.
    std::size_t arrival_key(const Action& send) const {
        return 2 * record(send.stage, send.microbatch) +
               (send.type == ActionType::send_forward ? 0 : 1);
    }

    void check_owned(int rank, const Action& a) const {
        if (a.stage < 0 || static_cast<std::size_t>(a.stage) >= stages_ || a.microbatch < 0 ||
            static_cast<std::size_t>(a.microbatch) >= mbs_ ||
            s_.stage_rank[static_cast<std::size_t>(a.stage)] != rank) {
            throw SimulationError("rank " + std::to_string(rank) + " runs " + to_string(a) +
                                  ", which is not an action of a stage it owns");
        }
    }

    // Runs `rank` while it can and while it is not ahead of another ready
    // rank, so that link requests reach the links in time order.
    void advance(int rank) {
        const auto r = static_cast<std::size_t>(rank);
        const auto& actions = s_.ranks[r];
        blocked_on_[r] = kNobody;
        while (pc_[r] < actions.size()) {
            const Action& a = actions[pc_[r]];
            check_owned(rank, a);
            double start = time_[r];
            double arrival = kNotYet;
            const Dependencies deps = dependencies_of(a, s_, splits_backward_);
            for (int i = 0; i < deps.count; ++i) {
                const Action& d = deps.items[static_cast<std::size_t>(i)];
                if (is_send(d.type)) {
                    // Another rank's send (the receive of this one's data).
                    const bool known = d.stage >= 0 && static_cast<std::size_t>(d.stage) < stages_;
                    const std::size_t k = known ? arrival_key(d) : kNobody;
                    if (!known || arrival_[k] == kNotYet) {
                        blocked_on_[r] = k;
                        return;  // woken when that send completes
                    }
                    arrival = arrival_[k];
                } else if ((done_[record(d.stage, d.microbatch)] & done_bit(d.type)) == 0) {
                    // Only this rank could complete it, later in its list:
                    // the schedule deadlocks, reported once every rank stops.
                    return;
                }
            }
            if (is_collective(a.type) && a.type != ActionType::reshard && !ready_.empty() &&
                ready_.top().time < time_[r]) {
                ready_.push({time_[r], rank});  // its links, in time order
                return;
            }
            int link = -1;
            if (is_send(a.type)) {
                link = send_link_[2 * static_cast<std::size_t>(a.stage) +
                                  (a.type == ActionType::send_forward ? 0 : 1)];
                // A link's transfers must start in time order; only one
                // shared by several ranks can see them out of order.
                if (link >= 0 && shared_link_[static_cast<std::size_t>(link)] && !ready_.empty() &&
                    ready_.top().time < time_[r]) {
                    ready_.push({time_[r], rank});
                    return;
                }
            }
            execute(rank, a, start, arrival, link);
            ++pc_[r];
        }
    }

    // An overlapped pair (PyTorch's OVERLAP_F_B, DualPipe's F&B chunk) runs
    // each half's all-to-alls (StageCost::expert_*_s) under the other's
    // compute: max(F compute, B all-to-all) + max(B compute, F all-to-all)
    // instead of the sum. What that saves, taken off the pair's backward
    // (`a`); 0 when `a` does not close such a pair.
    double paired_saving(std::size_t r, const Action& a) const {
        const LastCompute& last = last_compute_[r];
        if (!last.overlaps_next || last.stage < 0 ||
            (a.type != ActionType::backward && a.type != ActionType::backward_input)) {
            return 0;
        }
        const StageCost& f = in_.stages[static_cast<std::size_t>(last.stage)];
        const StageCost& b = in_.stages[static_cast<std::size_t>(a.stage)];
        const double b_total = a.type == ActionType::backward ? b.backward_s() : b.backward_input_s;
        const double f_compute = f.forward_s - f.expert_forward_s;
        const double b_compute = b_total - b.expert_backward_s;
        return std::min(b.expert_backward_s, f_compute) + std::min(f.expert_forward_s, b_compute);
    }

    void execute(int rank, const Action& a, double start, double arrival, int link) {
        const auto r = static_cast<std::size_t>(rank);
        const StageCost& cost = in_.stages[static_cast<std::size_t>(a.stage)];
        double saved = 0;
        if (is_compute(a.type)) {
            // Under ZeRO-3 the stage computes once its weights are gathered.
            start = std::max(start, gathered_at_[static_cast<std::size_t>(a.stage)]);
            saved = paired_saving(r, a);
        }
        TimelineEvent e{rank, a, start, start, 0, -1};
        switch (a.type) {
            case ActionType::forward:
                e.end_s = start + cost.forward_s;
                time_[r] = e.end_s;
                break;
            case ActionType::backward:
                e.end_s = start + std::max(0.0, cost.backward_s() - saved);
                time_[r] = e.end_s;
                last_backward_[static_cast<std::size_t>(a.stage)] = {start, e.end_s};
                break;
            case ActionType::backward_input:
                e.end_s = start + std::max(0.0, cost.backward_input_s - saved);
                time_[r] = e.end_s;
                break;
            case ActionType::backward_weight:
                e.end_s = start + cost.backward_weight_s;
                time_[r] = e.end_s;
                last_backward_[static_cast<std::size_t>(a.stage)] = {start, e.end_s};
                break;
            case ActionType::unshard:
            case ActionType::reduce_grad:
                collective(rank, a, e);
                break;
            case ActionType::reshard:
                e.start_s = e.end_s = time_[r];
                break;
            case ActionType::send_forward:
            case ActionType::send_backward:
                transfer(a, start, cost, link, e);
                if (link >= 0 && in_.links[static_cast<std::size_t>(link)].sender_copies) {
                    time_[r] = std::max(time_[r], e.end_s);
                }
                break;
            case ActionType::recv_forward:
            case ActionType::recv_backward: {
                // The rank waits here until the data has arrived.
                const bool forward = a.type == ActionType::recv_forward;
                const int from =
                    send_link_[2 * static_cast<std::size_t>(peer_stage(a)) + (forward ? 0 : 1)];
                const double receive_s =
                    from >= 0 ? in_.links[static_cast<std::size_t>(from)].receive_s : 0.0;
                e.start_s = time_[r];
                e.end_s = std::max(time_[r] + receive_s, arrival);
                e.bytes = forward ? cost.input_bytes * cost.input_share
                                  : cost.output_bytes * cost.output_share;
                e.peer_rank = s_.stage_rank[static_cast<std::size_t>(peer_stage(a))];
                time_[r] = e.end_s;
                break;
            }
        }
        if (is_compute(a.type)) {
            last_compute_[r] = {a.stage, a.overlaps_next};
        }
        complete(a, e.end_s);
        out_.totals.add(e);
        // A rank's compute actions run one after another, so its memory
        // changes come in time order, as MemoryLevel needs them; a
        // reduction's end may lie ahead of them (add_memory).
        for (const MemoryChange& change : memory_changes(cost, a.type, e.start_s, e.end_s)) {
            add_memory(r, change);
        }
        // After the action's own: the gradients come whole at its end.
        if (cost.unsharded_gradient_bytes > 0) {
            const auto st = static_cast<std::size_t>(a.stage);
            if (computes_weight_gradients(a.type) && !gradients_whole_[st]) {
                gradients_whole_[st] = true;
                add_memory(r, {e.end_s, cost.unsharded_gradient_bytes});
            } else if (a.type == ActionType::reduce_grad && gradients_whole_[st]) {
                add_memory(r, {e.end_s, -cost.unsharded_gradient_bytes});
            }
        }
        if (in_.record_timeline) {
            out_.timeline.events[first_event_[r] + pc_[r]] = e;
        }
    }

    void transfer(const Action& a, double start, const StageCost& cost, int link,
                  TimelineEvent& e) {
        const bool forward = a.type == ActionType::send_forward;
        const double group_bytes = forward ? cost.output_bytes : cost.input_bytes;
        const double share = forward ? cost.output_share : cost.input_share;
        e.bytes = group_bytes * share;  // this rank's
        e.peer_rank = s_.stage_rank[static_cast<std::size_t>(peer_stage(a))];
        if (link < 0) {
            e.end_s = start;
            return;
        }
        const auto l = static_cast<std::size_t>(link);
        const LinkSpec& spec = in_.links[l].spec;
        const double bytes = in_.links[l].carried_bytes(group_bytes, share);
        const double occupancy = spec.wire_seconds(bytes);
        e.start_s = std::max(start, link_free_[l]);
        link_free_[l] = e.start_s + occupancy;
        e.end_s = e.start_s + occupancy + spec.latency_us * 1e-6;
        out_.links[l].bytes += bytes;
        out_.links[l].busy_s += occupancy;
        out_.links[l].transfers += 1;
    }

    // Adds a change of rank r's memory, in time order: one dated after the
    // rank's other changes waits until they reach its time, and one dated
    // before them (a reduction whose buckets ended while the rank computed
    // on) counts from the last of them.
    void add_memory(std::size_t r, MemoryChange change) {
        std::vector<MemoryChange>& later = later_[r];
        if (change.time_s > time_[r]) {
            const auto at = std::find_if(later.begin(), later.end(), [&](const MemoryChange& c) {
                return c.time_s > change.time_s;
            });
            later.insert(at, change);
            return;
        }
        while (!later.empty() && later.front().time_s <= change.time_s) {
            memory_[r].add(later.front());
            later.erase(later.begin());
        }
        change.time_s = std::max(change.time_s, memory_[r].latest_time_s());
        memory_[r].add(change);
    }

    // Runs a collective on the rank's collective stream. A reduction that
    // overlaps the backward goes bucket by bucket: bucket j of k is ready
    // (j+1)/k of the way through the stage's last backward.
    void collective(int rank, const Action& a, TimelineEvent& e) {
        const auto r = static_cast<std::size_t>(rank);
        const auto st = static_cast<std::size_t>(a.stage);
        if (in_.collectives.empty()) {
            e.start_s = e.end_s = time_[r];  // one replica: nothing to exchange
            return;
        }
        const bool reduce = a.type == ActionType::reduce_grad;
        const SimCollective& c =
            reduce ? in_.collectives[st].reduce_grad : in_.collectives[st].unshard;
        double free = std::max(collective_free_[r], c.not_before_s);
        for (const int l : c.links) {
            free = std::max(free, link_free_[static_cast<std::size_t>(l)]);
        }
        e.bytes = c.bytes;
        if (reduce && c.buckets > 1) {
            const auto [b_start, b_end] = last_backward_[st];
            const double span = b_end - b_start;
            double t = free;
            for (int j = 0; j < c.buckets; ++j) {
                const double ready = b_start + span * (j + 1) / c.buckets;
                t = std::max(t, ready) + c.bucket_seconds;
                if (j == 0) {
                    e.start_s = t - c.bucket_seconds;
                }
            }
            e.end_s = t;
        } else {
            e.start_s = std::max(free, time_[r]);
            e.end_s = e.start_s + c.seconds;
        }
        e.end_s = std::max(e.end_s, c.not_ended_before_s);
        collective_free_[r] = e.end_s;
        for (const int l : c.links) {
            const auto li = static_cast<std::size_t>(l);
            link_free_[li] = e.end_s;
            out_.links[li].bytes += c.bytes;
            // On the wire: the buckets' own times, not the waits between them.
            out_.links[li].busy_s +=
                reduce && c.buckets > 1 ? c.buckets * c.bucket_seconds : e.end_s - e.start_s;
            out_.links[li].transfers += 1;
        }
        CollectiveTimes& times = out_.collectives[st];
        if (reduce) {
            times.reduce_start_s = e.start_s;
            times.reduce_end_s = e.end_s;
        } else {
            gathered_at_[st] = e.end_s;
            times.unshard_start_s = e.start_s;
            times.unshard_end_s = e.end_s;
        }
    }

    // Marks `a` done; a send records when its data arrives and wakes the
    // rank of the matching receive if it waits for it.
    void complete(const Action& a, double end_s) {
        done_[record(a.stage, a.microbatch)] |= done_bit(a.type);
        if (a.type == ActionType::backward && splits_backward_) {
            // Its input gradient serves whoever waits for an I (DualPipeV
            // mixes B and I/W).
            done_[record(a.stage, a.microbatch)] |= done_bit(ActionType::backward_input);
        }
        if (!is_send(a.type)) {
            return;
        }
        const std::size_t k = arrival_key(a);
        arrival_[k] = end_s;
        const int peer = peer_stage(a);
        if (peer < 0 || static_cast<std::size_t>(peer) >= stages_) {
            return;
        }
        const int w = s_.stage_rank[static_cast<std::size_t>(peer)];
        const auto wr = static_cast<std::size_t>(w);
        if (blocked_on_[wr] == k) {
            blocked_on_[wr] = kNobody;
            ready_.push({std::max(time_[wr], end_s), w});
        }
    }

    void report_deadlock_if_any() const {
        std::string stalled;
        for (std::size_t r = 0; r < s_.ranks.size(); ++r) {
            if (pc_[r] < s_.ranks[r].size()) {
                const Action& a = s_.ranks[r][pc_[r]];
                stalled += (stalled.empty() ? "" : "; ") + std::string("rank ") +
                           std::to_string(r) + " stalls at action " + std::to_string(pc_[r]) +
                           " (" + to_string(a) + ")";
            }
        }
        if (!stalled.empty()) {
            throw SimulationError("the schedule deadlocks: " + stalled);
        }
    }

    const SimulationInput& in_;
    const Schedule& s_;
    bool splits_backward_;
    std::size_t stages_;
    std::size_t mbs_;
    std::vector<std::uint8_t> done_;       // [stage * mbs + mb]: done_bit of each completed action
    std::vector<double> arrival_;          // [arrival_key(send)]: when its data arrives
    std::vector<std::size_t> blocked_on_;  // per rank: the arrival_key it waits for, or kNobody
    std::vector<std::size_t> pc_;
    std::vector<double> time_;
    std::vector<double> link_free_;
    std::vector<double> collective_free_;  // per rank: when its collective stream is free
    std::vector<double> gathered_at_;      // per stage: when its UNSHARD ends (0 without)
    std::vector<std::pair<double, double>> last_backward_;  // per stage: its latest B or W
    // Per stage: ZeRO-2/3 gradients held whole since its first weight gradient.
    std::vector<bool> gradients_whole_;
    // Per rank: its latest compute action, and whether it overlaps the next.
    struct LastCompute {
        int stage = -1;
        bool overlaps_next = false;
    };
    std::vector<LastCompute> last_compute_;
    std::vector<int> send_link_;     // [2 * stage + (0 forward, 1 backward)] -> link, -1 none
    std::vector<bool> shared_link_;  // sent on by more than one rank
    std::priority_queue<Entry, std::vector<Entry>, Later> ready_;
    std::vector<MemoryLevel> memory_;               // per rank
    std::vector<std::vector<MemoryChange>> later_;  // per rank, in time order (add_memory)
    std::vector<std::size_t> first_event_;  // per rank, where its events begin in the timeline
    SimulationOutput out_;
};

}  // namespace

SimulationOutput simulate_schedule(const SimulationInput& input) {
    if (input.schedule == nullptr) {
        throw SimulationError("no schedule to simulate");
    }
    if (input.stages.size() != static_cast<std::size_t>(input.schedule->num_stages)) {
        throw SimulationError("stage costs do not match the schedule's stages");
    }
    return Simulator(input).run();
}

}  // namespace pipewright
