#include "pipewright/sim/event_simulator.h"

#include <sys/mman.h>

#include <cmath>
#include <cstdint>
#include <queue>

#include "pipewright/sim/memory_model.h"

namespace pipewright {

namespace {

// Completion records are indexed by (slot, stage, micro-batch) in one flat
// array, so that a million-action schedule needs no maps.
enum Slot : int { kF, kBackward, kW, kSendF, kSendB, kRecvF, kRecvB, kSlotCount };

constexpr double kNotYet = -1.0;

// Large schedules write hundreds of MB of fresh memory once; with 4 KiB pages
// the page faults cost more than the simulation itself (measured 4 vs 16 M
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

int slot_of(ActionType t) {
    switch (t) {
        case ActionType::forward:
            return kF;
        case ActionType::backward:
        case ActionType::backward_input:
            return kBackward;
        case ActionType::backward_weight:
            return kW;
        case ActionType::send_forward:
            return kSendF;
        case ActionType::send_backward:
            return kSendB;
        case ActionType::recv_forward:
            return kRecvF;
        case ActionType::recv_backward:
            return kRecvB;
    }
    return kF;
}

class Simulator {
  public:
    explicit Simulator(const SimulationInput& input)
        : in_(input),
          s_(*input.schedule),
          splits_backward_(s_.splits_backward()),
          stages_(static_cast<std::size_t>(s_.num_stages)),
          mbs_(static_cast<std::size_t>(s_.num_microbatches)),
          done_(filled(kSlotCount * stages_ * mbs_, kNotYet)),
          waiter_(filled(kSlotCount * stages_ * mbs_, -1)),
          pc_(s_.ranks.size(), 0),
          time_(s_.ranks.size(), 0.0),
          link_free_(input.links.size(), 0.0) {
        // One hash lookup per stage and direction here, none per send.
        send_link_.assign(2 * stages_, -1);
        for (std::size_t st = 0; st < stages_; ++st) {
            const int rank = s_.stage_rank[st];
            if (st + 1 < stages_) {
                send_link_[2 * st] = input.link_index.find(rank, s_.stage_rank[st + 1]);
            }
            if (st > 0) {
                send_link_[2 * st + 1] = input.link_index.find(rank, s_.stage_rank[st - 1]);
            }
        }
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
            t.events.reserve(s_.action_count());
            advise_huge_pages(t.events.data(), t.events.capacity() * sizeof(TimelineEvent));
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
        for (MemoryLevel& m : memory_) {
            m.finish();
            out_.peak_memory_bytes.push_back(m.peak_bytes());
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

    // [stage][micro-batch][slot]: the records of one micro-batch share a cache line.
    std::size_t key(int slot, int stage, int mb) const {
        return (static_cast<std::size_t>(stage) * mbs_ + static_cast<std::size_t>(mb)) *
                   kSlotCount +
               static_cast<std::size_t>(slot);
    }
    std::size_t key(const Action& a) const { return key(slot_of(a.type), a.stage, a.microbatch); }

    // Runs `rank` while it can and while it is not ahead of another ready
    // rank, so that link requests reach the links in time order.
    void advance(int rank) {
        const auto r = static_cast<std::size_t>(rank);
        const auto& actions = s_.ranks[r];
        while (pc_[r] < actions.size()) {
            const Action& a = actions[pc_[r]];
            double start = time_[r];
            const Dependencies deps = dependencies_of(a, s_, splits_backward_);
            for (int i = 0; i < deps.count; ++i) {
                const double ready = done_[key(deps.items[static_cast<std::size_t>(i)])];
                if (ready == kNotYet) {
                    waiter_[key(deps.items[static_cast<std::size_t>(i)])] = rank;
                    return;  // woken when that action completes
                }
                if (is_compute(a.type) || is_send(a.type)) {
                    start = std::max(start, ready);
                }
            }
            // Only link requests must reach the links in time order; compute
            // and receives touch nothing shared, so the rank runs on until a
            // send while another rank is still behind it.
            if (is_send(a.type) && !ready_.empty() && ready_.top().time < time_[r]) {
                ready_.push({time_[r], rank});
                return;
            }
            execute(rank, a, start, deps);
            ++pc_[r];
        }
    }

    void execute(int rank, const Action& a, double start, const Dependencies& deps) {
        const auto r = static_cast<std::size_t>(rank);
        const StageCost& cost = in_.stages[static_cast<std::size_t>(a.stage)];
        TimelineEvent e{rank, a, start, start, 0, -1};
        switch (a.type) {
            case ActionType::forward:
                e.end_s = start + cost.forward_s;
                time_[r] = e.end_s;
                break;
            case ActionType::backward:
                e.end_s = start + cost.backward_s();
                time_[r] = e.end_s;
                break;
            case ActionType::backward_input:
                e.end_s = start + cost.backward_input_s;
                time_[r] = e.end_s;
                break;
            case ActionType::backward_weight:
                e.end_s = start + cost.backward_weight_s;
                time_[r] = e.end_s;
                break;
            case ActionType::send_forward:
            case ActionType::send_backward:
                transfer(rank, a, start, cost, e);
                break;
            case ActionType::recv_forward:
            case ActionType::recv_backward: {
                // The rank waits here until the data has arrived.
                const double arrival = done_[key(deps.items[0])];
                e.start_s = time_[r];
                e.end_s = std::max(time_[r], arrival);
                const bool forward = a.type == ActionType::recv_forward;
                e.bytes = forward ? cost.input_bytes : cost.output_bytes;
                e.peer_rank = s_.stage_rank[static_cast<std::size_t>(peer_stage(a))];
                time_[r] = e.end_s;
                break;
            }
        }
        complete(key(a), is_send(a.type) ? e.end_s : std::max(e.end_s, time_[r]));
        out_.totals.add(e);
        // A rank's compute actions run one after another, so its memory
        // changes come in time order, as MemoryLevel needs them.
        if (const auto change = memory_change(cost, a.type, e.start_s, e.end_s)) {
            memory_[r].add(*change);
        }
        if (in_.record_timeline) {
            out_.timeline.events.push_back(e);
        }
    }

    void transfer(int rank, const Action& a, double start, const StageCost& cost,
                  TimelineEvent& e) {
        const bool forward = a.type == ActionType::send_forward;
        const int peer = s_.stage_rank[static_cast<std::size_t>(peer_stage(a))];
        const auto stage = static_cast<std::size_t>(a.stage);
        const int link = rank == s_.stage_rank[stage] ? send_link_[2 * stage + (forward ? 0 : 1)]
                                                      : in_.link_index.find(rank, peer);
        const double bytes = forward ? cost.output_bytes : cost.input_bytes;
        e.bytes = bytes;
        e.peer_rank = peer;
        if (link < 0) {
            e.end_s = start;
            return;
        }
        const auto l = static_cast<std::size_t>(link);
        const LinkSpec& spec = in_.links[l].spec;
        const double occupancy = spec.bandwidth_GBps > 0 ? bytes / (spec.bandwidth_GBps * 1e9) : 0;
        e.start_s = std::max(start, link_free_[l]);
        link_free_[l] = e.start_s + occupancy;
        e.end_s = e.start_s + occupancy + spec.latency_us * 1e-6;
        out_.links[l].bytes += bytes;
        out_.links[l].busy_s += occupancy;
        out_.links[l].transfers += 1;
    }

    void complete(std::size_t k, double when) {
        done_[k] = when;
        if (int w = waiter_[k]; w >= 0) {
            waiter_[k] = -1;
            const auto wr = static_cast<std::size_t>(w);
            ready_.push({std::max(time_[wr], when), w});
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
    std::vector<double> done_;  // completion (or arrival) time per action
    std::vector<int> waiter_;   // rank blocked on that action
    std::vector<std::size_t> pc_;
    std::vector<double> time_;
    std::vector<double> link_free_;
    std::vector<int> send_link_;  // [2 * stage + (0 forward, 1 backward)] -> link, -1 none
    std::priority_queue<Entry, std::vector<Entry>, Later> ready_;
    std::vector<MemoryLevel> memory_;  // per rank
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
