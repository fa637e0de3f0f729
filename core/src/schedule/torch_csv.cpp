#include "pipewright/core/torch_csv.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "pipewright/core/schedule_csv.h"
#include "pipewright/core/schedule_generators.h"

namespace pipewright {

std::string_view to_string(TorchCsvFormat format) {
    return format == TorchCsvFormat::compute_only ? "compute-only" : "compute-comms";
}

std::optional<TorchCsvFormat> torch_csv_format(std::string_view name) {
    if (name == "compute-only") {
        return TorchCsvFormat::compute_only;
    }
    if (name == "compute-comms") {
        return TorchCsvFormat::compute_comms;
    }
    return std::nullopt;
}

namespace {

// One cell of torch's lowered row: an action, or the WAIT_ that torch 2.x
// pairs with it (WAIT_SEND_F, WAIT_SEND_B, WAIT_REDUCE_GRAD), which
// Pipewright's own schedules leave implicit.
struct Cell {
    Action action;
    bool wait = false;
    // An overlapped pair (OVERLAP_F_B): `action` is its forward, this its
    // backward.
    std::optional<Action> overlapped;
};
using Rows = std::vector<std::vector<Cell>>;

// The actions a cell runs: one, or a pair's two. Called once per cell of
// files with millions of them, so no allocation.
struct Parts {
    std::array<Action, 2> actions;
    std::size_t count = 1;
    [[nodiscard]] const Action* begin() const { return actions.data(); }
    [[nodiscard]] const Action* end() const { return actions.data() + count; }
};
Parts parts(const Cell& c) {
    if (c.overlapped) {
        return {{c.action, *c.overlapped}, 2};
    }
    return {{c.action, Action{}}, 1};
}

std::string cell_text(const Cell& c) {
    if (c.overlapped) {
        return overlapped_cell(c.action, *c.overlapped);
    }
    if (!c.wait) {
        return to_string(c.action);
    }
    std::string out = std::to_string(c.action.stage) + "WAIT_";
    out += to_string(c.action.type);
    if (!is_collective(c.action.type)) {
        out += std::to_string(c.action.microbatch);
    }
    return out;
}

// What each rank hands to torch's lowering: its compute and collectives in
// order, each REDUCE_GRAD followed by its wait (_add_reduce_grad, not
// deferred). A schedule without data parallelism gets them too, where
// _add_reduce_grad puts them (after the stage's last B or W): torch's runtime
// scales the gradients by 1 / micro-batches at REDUCE_GRAD, so a lowered
// file without it would train on gradients summed over the micro-batches.
Rows unlowered_rows(const Schedule& s, bool compute_only) {
    Rows rows(s.ranks.size());
    const bool add_reductions = !compute_only && !s.has_collectives();
    std::vector<int> backwards(static_cast<std::size_t>(std::max(s.num_stages, 0)), 0);
    for (std::size_t r = 0; r < s.ranks.size(); ++r) {
        const auto& list = s.ranks[r];
        for (std::size_t i = 0; i < list.size(); ++i) {
            const Action& a = list[i];
            if (!is_compute(a.type) && (compute_only || !is_collective(a.type))) {
                continue;
            }
            Cell cell{a, false, std::nullopt};
            if (a.overlaps_next && i + 1 < list.size()) {
                cell.overlapped = list[++i];
            }
            rows[r].push_back(cell);
            if (a.type == ActionType::reduce_grad) {
                rows[r].push_back({a, true, std::nullopt});
            }
            // _add_reduce_grad counts the sub-actions of a pair one by one.
            for (const Action& part : parts(cell)) {
                const bool ends_gradient =
                    part.type == ActionType::backward || part.type == ActionType::backward_weight;
                if (add_reductions && ends_gradient && part.stage >= 0 &&
                    part.stage < s.num_stages &&
                    ++backwards[static_cast<std::size_t>(part.stage)] == s.num_microbatches) {
                    const Action reduce{part.stage, ActionType::reduce_grad, 0};
                    rows[r].push_back({reduce, false, std::nullopt});
                    rows[r].push_back({reduce, true, std::nullopt});
                }
            }
        }
    }
    return rows;
}

// torch's _add_send_recv: in rounds, each rank in turn places its next action
// if its input is there (a receive already in its row, or the producing
// action on its own rank). A compute action whose result goes to another
// rank is followed by its send, and the receiver's row gets the receive at
// that moment, so receives are posted as early as torch posts them.
class TorchLowering {
  public:
    explicit TorchLowering(const Schedule& s)
        : s_(s),
          mbs_(static_cast<std::size_t>(std::max(s.num_microbatches, 1))),
          placed_(static_cast<std::size_t>(std::max(s.num_stages, 0)) * mbs_, 0) {}

    Rows lower(Rows pending) {
        Rows out(pending.size());
        std::vector<std::size_t> next(pending.size(), 0);
        for (bool left = true; left;) {
            left = false;
            bool progress = false;
            for (std::size_t r = 0; r < pending.size(); ++r) {
                if (next[r] == pending[r].size()) {
                    continue;
                }
                const Cell& c = pending[r][next[r]];
                if (!ready(c)) {
                    left = true;
                    continue;
                }
                out[r].push_back(c);
                if (!c.wait) {
                    for (const Action& part : parts(c)) {
                        place(part, out);
                    }
                }
                progress = true;
                ++next[r];
                left = left || next[r] < pending[r].size();
            }
            if (left && !progress) {
                throw ScheduleError(stall_message(pending, next));
            }
        }
        return out;
    }

  private:
    enum Bit : std::uint8_t {
        forward = 1,
        input_gradient = 2,  // B or I
        received_forward = 4,
        received_backward = 8,
    };

    bool in_pipeline(int stage, int mb) const {
        return stage >= 0 && stage < s_.num_stages && mb >= 0 && mb < s_.num_microbatches;
    }
    std::uint8_t& bits(int stage, int mb) {
        return placed_[static_cast<std::size_t>(stage) * mbs_ + static_cast<std::size_t>(mb)];
    }
    int rank_of(int stage) const { return s_.stage_rank[static_cast<std::size_t>(stage)]; }
    bool has(int stage, int mb, Bit bit) {
        return in_pipeline(stage, mb) && (bits(stage, mb) & bit) != 0;
    }

    bool ready(const Cell& c) {
        if (c.wait) {
            return true;
        }
        // A pair waits until both of its inputs are there (_ready_to_schedule
        // on every sub-action).
        return ready_action(c.action) && (!c.overlapped || ready_action(*c.overlapped));
    }

    bool ready_action(const Action& a) {
        if (!in_pipeline(a.stage, a.microbatch)) {
            return true;
        }
        if (a.type == ActionType::forward && a.stage > 0) {
            return has(a.stage, a.microbatch, received_forward) ||
                   has(a.stage - 1, a.microbatch, forward);
        }
        if ((a.type == ActionType::backward || a.type == ActionType::backward_input) &&
            a.stage < s_.num_stages - 1) {
            return has(a.stage, a.microbatch, received_backward) ||
                   has(a.stage + 1, a.microbatch, input_gradient);
        }
        return true;
    }

    void place(const Action& a, Rows& out) {
        if (!in_pipeline(a.stage, a.microbatch) || is_collective(a.type)) {
            return;
        }
        const bool fwd = a.type == ActionType::forward;
        const bool grad = a.type == ActionType::backward || a.type == ActionType::backward_input;
        if (!fwd && !grad) {
            return;
        }
        bits(a.stage, a.microbatch) |= fwd ? forward : input_gradient;
        const int peer = fwd ? a.stage + 1 : a.stage - 1;
        if (peer < 0 || peer >= s_.num_stages || rank_of(peer) == rank_of(a.stage)) {
            return;
        }
        const Action send{a.stage, fwd ? ActionType::send_forward : ActionType::send_backward,
                          a.microbatch};
        const Action recv = matching_transfer(send);
        out[static_cast<std::size_t>(rank_of(a.stage))].push_back({send, false, std::nullopt});
        out[static_cast<std::size_t>(rank_of(peer))].push_back({recv, false, std::nullopt});
        bits(peer, a.microbatch) |= fwd ? received_forward : received_backward;
    }

    static std::string stall_message(const Rows& pending, const std::vector<std::size_t>& next) {
        std::string stuck;
        for (std::size_t r = 0; r < pending.size(); ++r) {
            if (next[r] < pending[r].size()) {
                stuck += (stuck.empty() ? "" : ", ") + std::string("rank ") + std::to_string(r) +
                         " at " + cell_text(pending[r][next[r]]);
            }
        }
        return "the schedule cannot be lowered as torch lowers it: no rank can place its next "
               "action (" +
               stuck + "); check it with `pipewright simulate --schedule-csv`";
    }

    const Schedule& s_;
    std::size_t mbs_;
    std::vector<std::uint8_t> placed_;  // [stage * mbs + mb]: Bit flags
};

// torch's _add_wait_send: a forward send is waited for after the rank's
// backward of the same stage and micro-batch (which proves the peer took
// it); every other send at the end of the row, in the order of the sends.
std::vector<Cell> with_send_waits(const std::vector<Cell>& row) {
    std::vector<Cell> out;
    std::vector<Cell> pending;  // in send order; a waited one is marked done
    std::unordered_map<std::uint64_t, std::size_t> forward_send;  // (stage, mb) -> pending index
    const auto key = [](const Action& a) {
        return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(a.stage)) << 32) |
               static_cast<std::uint32_t>(a.microbatch);
    };
    std::vector<bool> waited;
    for (const Cell& c : row) {
        out.push_back(c);
        const Action& a = c.action;
        if (c.wait) {
            continue;
        }
        if (is_send(a.type)) {
            if (a.type == ActionType::send_forward) {
                forward_send[key(a)] = pending.size();
            }
            pending.push_back({a, true, std::nullopt});
            waited.push_back(false);
            continue;
        }
        for (const Action& part : parts(c)) {
            if (part.type != ActionType::backward && part.type != ActionType::backward_input) {
                continue;
            }
            if (const auto it = forward_send.find(key(part)); it != forward_send.end()) {
                out.push_back(pending[it->second]);
                waited[it->second] = true;
                forward_send.erase(it);
            }
        }
    }
    for (std::size_t i = 0; i < pending.size(); ++i) {
        if (!waited[i]) {
            out.push_back(pending[i]);
        }
    }
    return out;
}

std::uint64_t data_key(int stage, int mb, bool forward) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(stage)) << 33) |
           (static_cast<std::uint64_t>(static_cast<std::uint32_t>(mb)) << 1) | (forward ? 1U : 0U);
}

}  // namespace

Schedule with_receives_where_used(const Schedule& schedule) {
    Schedule out = schedule;
    for (auto& row : out.ranks) {
        // Where each input is first used in the row: F uses RECV_F's data, B
        // or I RECV_B's.
        std::unordered_map<std::uint64_t, std::size_t> used_at;
        for (std::size_t i = row.size(); i-- > 0;) {
            const Action& a = row[i];
            if (a.type == ActionType::forward) {
                used_at[data_key(a.stage, a.microbatch, true)] = i;
            } else if (a.type == ActionType::backward || a.type == ActionType::backward_input) {
                // The backward of an overlapped pair uses its data where the
                // pair starts: nothing may stand between the two.
                const bool paired = i > 0 && row[i - 1].overlaps_next;
                used_at[data_key(a.stage, a.microbatch, false)] = paired ? i - 1 : i;
            }
        }
        std::unordered_map<std::size_t, std::vector<Action>> before;  // index -> receives
        std::vector<Action> moved;
        moved.reserve(row.size());
        for (std::size_t i = 0; i < row.size(); ++i) {
            const Action& a = row[i];
            if (is_recv(a.type)) {
                const auto it = used_at.find(
                    data_key(a.stage, a.microbatch, a.type == ActionType::recv_forward));
                if (it != used_at.end() && it->second > i) {
                    before[it->second].push_back(a);
                    continue;
                }
            }
            if (const auto it = before.find(i); it != before.end()) {
                moved.insert(moved.end(), it->second.begin(), it->second.end());
            }
            moved.push_back(a);
        }
        row = std::move(moved);
    }
    return out;
}

std::string schedule_to_torch_csv(const Schedule& schedule, TorchCsvFormat format) {
    const bool compute_only = format == TorchCsvFormat::compute_only;
    Rows rows = unlowered_rows(schedule, compute_only);
    if (!compute_only) {
        rows = TorchLowering(schedule).lower(std::move(rows));
        for (auto& row : rows) {
            row = with_send_waits(row);
        }
    }
    std::string out;
    for (const auto& row : rows) {
        for (std::size_t i = 0; i < row.size(); ++i) {
            if (i > 0) {
                out += ',';
            }
            out += cell_text(row[i]);
        }
        out += '\n';
    }
    return out;
}

}  // namespace pipewright
