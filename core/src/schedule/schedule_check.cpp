#include "pipewright/core/schedule_check.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "schedule/schedule_internal.h"

namespace pipewright {

namespace {

using detail::kActionTypeCount;

// Pairs beyond the action count that are still worth listing one by one.
constexpr std::uint64_t kPairSlack = 1U << 16;

std::size_t idx(int i) {
    return static_cast<std::size_t>(i);
}

std::string at(std::size_t rank, std::size_t i) {
    return "schedule.rank[" + std::to_string(rank) + "][" + std::to_string(i) + "]";
}

// A schedule with a systematic mistake (say, one micro-batch too many) would
// otherwise bury the user under millions of identical lines.
class CappedReport {
  public:
    enum Kind {
        range,
        placement,
        duplicate,
        comm,
        missing,
        unmatched,
        mixing,
        collective,
        overlap,
        kinds
    };
    static constexpr int kLimit = 20;

    explicit CappedReport(Diagnostics& out) : out_(out) {}

    void add(Kind kind, std::string path, std::string message) {
        if (++counts_[kind] <= kLimit) {
            out_.add(std::move(path), std::move(message));
        }
    }
    [[nodiscard]] int count(Kind kind) const { return counts_[kind]; }

    void finish() {
        static constexpr std::array<const char*, kinds> kWhat = {
            "actions outside the pipeline",
            "actions on the wrong rank",
            "duplicate actions",
            "misplaced sends or receives",
            "missing actions",
            "unmatched sends or receives",
            "stages and micro-batches mixing B with I/W",
            "misplaced collectives",
            "misplaced overlapped pairs",
        };
        for (std::size_t k = 0; k < kinds; ++k) {
            if (counts_[k] > kLimit) {
                out_.add("schedule", "... and " + std::to_string(counts_[k] - kLimit) + " more " +
                                         kWhat[k] + " not listed above");
            }
        }
    }

  private:
    Diagnostics& out_;
    std::array<int, kinds> counts_{};
};

// Flat tables indexed by (stage, micro-batch, type): the checker runs on
// schedules with millions of actions, so no maps and no per-action scans.
class ActionTable {
  public:
    ActionTable(int stages, int microbatches)
        : microbatches_(microbatches),
          rank_(idx(stages) * idx(microbatches) * kActionTypeCount, -1),
          pos_(rank_.size(), 0) {}

    [[nodiscard]] std::size_t key(const Action& a) const {
        return (idx(a.stage) * idx(microbatches_) + idx(a.microbatch)) * kActionTypeCount +
               static_cast<std::size_t>(a.type);
    }
    [[nodiscard]] std::size_t size() const { return rank_.size(); }
    [[nodiscard]] bool present(const Action& a) const { return rank_[key(a)] >= 0; }
    [[nodiscard]] int rank(const Action& a) const { return rank_[key(a)]; }
    [[nodiscard]] std::size_t pos(const Action& a) const { return pos_[key(a)]; }
    void record(const Action& a, int rank, std::size_t pos) {
        rank_[key(a)] = rank;
        pos_[key(a)] = static_cast<std::uint32_t>(pos);
    }

  private:
    int microbatches_;
    std::vector<int> rank_;           // rank of the first occurrence, -1 if absent
    std::vector<std::uint32_t> pos_;  // 32 bits: the tables dominate memory
};

struct Context {
    const Schedule& s;
    int last;
    bool splits;
    bool lowered;
};

// Returns a message when a send or receive has no peer stage on another rank;
// add_communication never emits those, and a backend would hang on them.
std::string misplaced_comm(const Context& c, const Action& a) {
    const int st = a.stage;
    const bool toward_next =
        a.type == ActionType::send_forward || a.type == ActionType::recv_backward;
    const int peer = toward_next ? st + 1 : st - 1;
    if (peer < 0) {
        return "stage 0 is the first stage, so it has no previous stage to " +
               std::string(is_send(a.type) ? "send to" : "receive from");
    }
    if (peer > c.last) {
        return "stage " + std::to_string(st) + " is the last stage, so it has no next stage to " +
               std::string(is_send(a.type) ? "send to" : "receive from");
    }
    const int here = c.s.stage_rank[idx(st)];
    if (c.s.stage_rank[idx(peer)] == here) {
        return "stages " + std::to_string(std::min(st, peer)) + " and " +
               std::to_string(std::max(st, peer)) + " both run on rank " + std::to_string(here) +
               ", so " + to_string(a) + " is not needed; remove it";
    }
    return {};
}

// OVERLAP_F_B runs a forward together with the backward right after it in
// the rank's list, as torch's runtime runs its two sub-actions.
void check_overlap(const std::vector<Action>& list, std::size_t r, std::size_t i,
                   CappedReport& report) {
    const Action& a = list[i];
    std::string why;
    if (a.type != ActionType::forward) {
        why = to_string(a) +
              " is marked to overlap the next action, but only a forward overlaps "
              "a backward (torch's OVERLAP_F_B)";
    } else if (i + 1 >= list.size() || list[i + 1].type != ActionType::backward) {
        why = to_string(a) +
              " is marked to overlap the next action, which must be a full "
              "backward (B) as in (" +
              to_string(a) + ";1B0)OVERLAP_F_B, but " +
              (i + 1 >= list.size() ? std::string("the list ends there")
                                    : "it is " + to_string(list[i + 1]));
    }
    if (!why.empty()) {
        report.add(CappedReport::overlap, at(r, i), std::move(why));
    }
}

// Returns false when some action lies outside the pipeline; the tables then
// cannot hold it and the dry run is skipped.
bool scan_actions(const Context& c, ActionTable& table, CappedReport& report) {
    bool in_range = true;
    const Schedule& s = c.s;
    for (std::size_t r = 0; r < s.ranks.size(); ++r) {
        const int rank = static_cast<int>(r);
        for (std::size_t i = 0; i < s.ranks[r].size(); ++i) {
            const Action& a = s.ranks[r][i];
            if (a.stage < 0 || a.stage >= s.num_stages) {
                report.add(CappedReport::range, at(r, i),
                           to_string(a) + " names stage " + std::to_string(a.stage) +
                               ", but the pipeline has stages 0 to " + std::to_string(c.last));
                in_range = false;
                continue;
            }
            if (a.microbatch < 0 || a.microbatch >= s.num_microbatches) {
                report.add(CappedReport::range, at(r, i),
                           to_string(a) + " names micro-batch " + std::to_string(a.microbatch) +
                               ", but the schedule has micro-batches 0 to " +
                               std::to_string(s.num_microbatches - 1));
                in_range = false;
                continue;
            }
            const int owner = s.stage_rank[idx(a.stage)];
            if (owner != rank) {
                report.add(CappedReport::placement, at(r, i),
                           "rank " + std::to_string(rank) + " runs " + to_string(a) +
                               ", but stage " + std::to_string(a.stage) + " belongs to rank " +
                               std::to_string(owner));
            }
            if (table.present(a)) {
                report.add(CappedReport::duplicate, at(r, i),
                           to_string(a) + " appears twice; it already runs at " +
                               at(idx(table.rank(a)), table.pos(a)));
            } else {
                table.record(a, rank, i);
            }
            if (a.overlaps_next) {
                check_overlap(s.ranks[r], r, i, report);
            }
            if (is_send(a.type) || is_recv(a.type)) {
                std::string why = misplaced_comm(c, a);
                if (!why.empty()) {
                    report.add(CappedReport::comm, at(r, i), std::move(why));
                }
            }
        }
    }
    return in_range;
}

std::string owner_words(const Context& c, int stage) {
    return " (stage " + std::to_string(stage) + " runs on rank " +
           std::to_string(c.s.stage_rank[idx(stage)]) + ")";
}

void check_complete(const Context& c, const ActionTable& table, CappedReport& report) {
    const Schedule& s = c.s;
    for (int st = 0; st < s.num_stages; ++st) {
        for (int mb = 0; mb < s.num_microbatches; ++mb) {
            const auto has = [&](ActionType t) { return table.present({st, t, mb}); };
            const auto missing = [&](ActionType t, const std::string& what) {
                report.add(CappedReport::missing, "schedule",
                           to_string(Action{st, t, mb}) + " is missing: no rank runs " + what +
                               " of micro-batch " + std::to_string(mb) + " on stage " +
                               std::to_string(st) + owner_words(c, st));
            };
            if (!has(ActionType::forward)) {
                missing(ActionType::forward, "the forward");
            }
            const bool full = has(ActionType::backward);
            const bool input = has(ActionType::backward_input);
            const bool weight = has(ActionType::backward_weight);
            if (full && (input || weight)) {
                report.add(CappedReport::mixing, "schedule",
                           "stage " + std::to_string(st) + " runs micro-batch " +
                               std::to_string(mb) + " through both a full backward (B) and a " +
                               "split backward (I/W); keep either B or the pair I and W");
            } else if (!full && !input && !weight) {
                missing(ActionType::backward, "the backward (B, or I and W)");
            } else if (input && !weight) {
                missing(ActionType::backward_weight, "the weight gradient (W)");
            } else if (weight && !input) {
                missing(ActionType::backward_input, "the input gradient (I)");
            }
        }
    }
}

// Every cross-rank edge needs exactly a SEND on the producer and a RECV on the
// consumer, the pairs add_communication would insert.
void check_pairs(const Context& c, const ActionTable& table, CappedReport& report) {
    const Schedule& s = c.s;
    const auto check = [&](const Action& send, const Action& recv) {
        const bool has_send = table.present(send);
        const bool has_recv = table.present(recv);
        const std::string from = "rank " + std::to_string(s.stage_rank[idx(send.stage)]);
        const std::string to = "rank " + std::to_string(s.stage_rank[idx(recv.stage)]);
        if (has_send && !has_recv) {
            report.add(CappedReport::unmatched, at(idx(table.rank(send)), table.pos(send)),
                       to_string(send) + " has no matching " + to_string(recv) + ": " + to +
                           " never receives it");
        } else if (has_recv && !has_send) {
            report.add(CappedReport::unmatched, at(idx(table.rank(recv)), table.pos(recv)),
                       to_string(recv) + " has no matching " + to_string(send) + ": " + from +
                           " never sends it");
        } else if (!has_send && !has_recv) {
            report.add(CappedReport::missing, "schedule",
                       to_string(send) + " on " + from + " and " + to_string(recv) + " on " + to +
                           " are missing: the data of micro-batch " +
                           std::to_string(send.microbatch) + " must travel from stage " +
                           std::to_string(send.stage) + " to stage " + std::to_string(recv.stage));
        }
    };
    for (int st = 0; st < c.last; ++st) {
        if (s.stage_rank[idx(st)] == s.stage_rank[idx(st + 1)]) {
            continue;
        }
        for (int mb = 0; mb < s.num_microbatches; ++mb) {
            for (const Action send : {Action{st, ActionType::send_forward, mb},
                                      Action{st + 1, ActionType::send_backward, mb}}) {
                check(send, matching_transfer(send));
            }
        }
    }
}

// A stage's collectives frame its compute on its own rank: UNSHARD before
// the first compute, RESHARD after the last, REDUCE_GRAD after the last
// backward. Every stage reduces its gradients once a schedule has any
// collective, and gathers its parameters if any stage does.
void check_collectives(const Context& c, const ActionTable& table, CappedReport& report) {
    const Schedule& s = c.s;
    const auto stages = idx(s.num_stages);
    constexpr std::size_t kNone = static_cast<std::size_t>(-1);
    std::vector<std::size_t> first_compute(stages, kNone);
    std::vector<std::size_t> last_compute(stages, kNone);
    std::vector<std::size_t> last_backward(stages, kNone);
    for (std::size_t r = 0; r < s.ranks.size(); ++r) {
        for (std::size_t i = 0; i < s.ranks[r].size(); ++i) {
            const Action& a = s.ranks[r][i];
            if (!is_compute(a.type) || a.stage < 0 || a.stage > c.last ||
                s.stage_rank[idx(a.stage)] != static_cast<int>(r)) {
                continue;
            }
            const auto st = idx(a.stage);
            first_compute[st] = std::min(first_compute[st], i);
            last_compute[st] = last_compute[st] == kNone ? i : std::max(last_compute[st], i);
            if (a.type != ActionType::forward) {
                last_backward[st] = last_backward[st] == kNone ? i : std::max(last_backward[st], i);
            }
        }
    }
    bool any_unshard = false;
    for (int st = 0; st < s.num_stages; ++st) {
        any_unshard = any_unshard || table.present({st, ActionType::unshard, 0});
    }
    for (int st = 0; st < s.num_stages; ++st) {
        const auto k = idx(st);
        const Action reduce{st, ActionType::reduce_grad, 0};
        const Action unshard{st, ActionType::unshard, 0};
        const Action reshard{st, ActionType::reshard, 0};
        const auto stage_words = "stage " + std::to_string(st) + owner_words(c, st);
        if (!table.present(reduce)) {
            report.add(CappedReport::missing, "schedule",
                       to_string(reduce) + " is missing: the schedule synchronises replicas, but " +
                           stage_words + " never averages its gradients");
        } else if (table.rank(reduce) == s.stage_rank[k] && last_backward[k] != kNone &&
                   table.pos(reduce) < last_backward[k]) {
            report.add(CappedReport::collective, at(idx(table.rank(reduce)), table.pos(reduce)),
                       to_string(reduce) + " comes before the stage's last backward (action " +
                           std::to_string(last_backward[k]) +
                           "); its gradients are not complete yet");
        }
        if (any_unshard && !table.present(unshard)) {
            report.add(CappedReport::missing, "schedule",
                       to_string(unshard) + " is missing: other stages gather their sharded " +
                           "parameters, but " + stage_words + " never does");
        } else if (table.present(unshard) && table.rank(unshard) == s.stage_rank[k] &&
                   first_compute[k] != kNone && table.pos(unshard) > first_compute[k]) {
            report.add(CappedReport::collective, at(idx(table.rank(unshard)), table.pos(unshard)),
                       to_string(unshard) + " comes after the stage's first compute (action " +
                           std::to_string(first_compute[k]) +
                           "), which needs the gathered parameters");
        }
        if (table.present(unshard) != table.present(reshard)) {
            const Action& missing = table.present(unshard) ? reshard : unshard;
            report.add(CappedReport::missing, "schedule",
                       to_string(missing) + " is missing: UNSHARD and RESHARD come in pairs");
        } else if (table.present(reshard) && table.rank(reshard) == s.stage_rank[k] &&
                   last_compute[k] != kNone && table.pos(reshard) < last_compute[k]) {
            report.add(CappedReport::collective, at(idx(table.rank(reshard)), table.pos(reshard)),
                       to_string(reshard) + " comes before the stage's last compute (action " +
                           std::to_string(last_compute[k]) + "), which still needs the parameters");
        }
    }
}

// Without communication a RECV is implied by the producer's compute, which is
// what lowering with add_communication would make the RECV wait for.
Action resolve(const Context& c, const Action& dep) {
    if (c.lowered) {
        return dep;
    }
    if (dep.type == ActionType::recv_forward) {
        return {dep.stage - 1, ActionType::forward, dep.microbatch};
    }
    if (dep.type == ActionType::recv_backward) {
        return {dep.stage + 1, c.splits ? ActionType::backward_input : ActionType::backward,
                dep.microbatch};
    }
    return dep;
}

// Runs every rank's list as far as dependencies allow. A blocked rank waits on
// exactly one action and is woken when that action runs, so the work is
// proportional to the number of actions.
void dry_run(const Context& c, const ActionTable& table, Diagnostics& out) {
    const Schedule& s = c.s;
    const std::size_t ranks = s.ranks.size();
    std::vector<std::uint8_t> done(table.size(), 0);
    std::vector<int> wait_head(table.size(), -1);
    std::vector<int> next_waiter(ranks, -1);
    std::vector<Action> blocked_on(ranks);
    std::vector<std::size_t> pos(ranks, 0);
    std::vector<int> ready;
    for (std::size_t r = ranks; r-- > 0;) {
        ready.push_back(static_cast<int>(r));
    }
    const auto in_range = [&](const Action& a) { return a.stage >= 0 && a.stage < s.num_stages; };
    while (!ready.empty()) {
        const auto r = idx(ready.back());
        ready.pop_back();
        const auto& list = s.ranks[r];
        while (pos[r] < list.size()) {
            const Action& a = list[pos[r]];
            const Dependencies deps = dependencies_of(a, s, c.splits);
            bool blocked = false;
            for (int k = 0; k < deps.count && !blocked; ++k) {
                const Action dep = resolve(c, deps.items[idx(k)]);
                // A dependency outside the pipeline comes from a misplaced
                // send or receive, which is reported already.
                if (in_range(dep) && done[table.key(dep)] == 0) {
                    blocked = true;
                    blocked_on[r] = dep;
                    next_waiter[r] = wait_head[table.key(dep)];
                    wait_head[table.key(dep)] = static_cast<int>(r);
                }
            }
            if (blocked) {
                break;
            }
            const auto finish = [&](std::size_t key) {
                done[key] = 1;
                for (int w = wait_head[key]; w >= 0; w = next_waiter[idx(w)]) {
                    ready.push_back(w);
                }
                wait_head[key] = -1;
            };
            finish(table.key(a));
            if (a.type == ActionType::backward && c.splits) {
                // B's input gradient serves whoever waits for an I.
                finish(table.key({a.stage, ActionType::backward_input, a.microbatch}));
            }
            ++pos[r];
        }
    }
    for (std::size_t r = 0; r < ranks; ++r) {
        if (pos[r] >= s.ranks[r].size()) {
            continue;
        }
        const Action& a = s.ranks[r][pos[r]];
        const Action& dep = blocked_on[r];
        std::string where;
        if (!table.present(dep)) {
            where = "which no rank runs: the action is missing";
        } else if (idx(table.rank(dep)) == r) {
            where =
                "which comes later in its own list, at action " + std::to_string(table.pos(dep));
        } else {
            where = "which rank " + std::to_string(table.rank(dep)) + " has not reached";
        }
        out.add(at(r, pos[r]), "rank " + std::to_string(r) + " stalls at action " +
                                   std::to_string(pos[r]) + " (" + to_string(a) +
                                   "): it waits for " + to_string(dep) + ", " + where);
    }
}

bool check_shape(const Schedule& s, Diagnostics& out) {
    if (s.num_stages < 1) {
        out.add("schedule", "the schedule has " + std::to_string(s.num_stages) +
                                " stages; a pipeline needs at least one");
    }
    if (s.num_microbatches < 1) {
        out.add("schedule", "the schedule has " + std::to_string(s.num_microbatches) +
                                " micro-batches; it needs at least one");
    }
    if (s.stage_rank.size() != idx(std::max(s.num_stages, 0))) {
        out.add("schedule", "the stage placement covers " +
                                detail::count_of(static_cast<long long>(s.stage_rank.size()),
                                                 "stage", "stages") +
                                ", but the schedule has " + std::to_string(s.num_stages));
    }
    for (std::size_t st = 0; st < s.stage_rank.size(); ++st) {
        const int r = s.stage_rank[st];
        if (r < 0 || r >= s.num_ranks()) {
            out.add("schedule", "stage " + std::to_string(st) + " is placed on rank " +
                                    std::to_string(r) + ", but the schedule has ranks 0 to " +
                                    std::to_string(s.num_ranks() - 1));
        }
    }
    return out.empty();
}

}  // namespace

Diagnostics check_schedule(const Schedule& schedule) {
    Diagnostics out;
    if (!check_shape(schedule, out)) {
        return out;
    }
    // Each (stage, micro-batch) needs at least F and B. When the counts
    // promise far more pairs than there are actions, they are wrong rather
    // than the actions missing, and the tables would be absurdly large.
    const auto pairs =
        static_cast<std::uint64_t>(schedule.num_stages) * idx(schedule.num_microbatches);
    if (pairs > schedule.action_count() + kPairSlack) {
        out.add("schedule", std::to_string(schedule.num_stages) + " stages times " +
                                std::to_string(schedule.num_microbatches) +
                                " micro-batches need at least " + std::to_string(2 * pairs) +
                                " actions (a forward and a backward each), but the schedule has "
                                "only " +
                                std::to_string(schedule.action_count()) +
                                "; check the number of stages and micro-batches");
        return out;
    }
    const Context c{schedule, schedule.num_stages - 1, schedule.splits_backward(),
                    schedule.has_communication()};
    ActionTable table(schedule.num_stages, schedule.num_microbatches);
    CappedReport report(out);
    const bool in_range = scan_actions(c, table, report);
    check_complete(c, table, report);
    if (c.lowered) {
        check_pairs(c, table, report);
    }
    if (schedule.has_collectives()) {
        check_collectives(c, table, report);
    }
    report.finish();
    if (in_range) {
        dry_run(c, table, out);
    }
    return out;
}

}  // namespace pipewright
