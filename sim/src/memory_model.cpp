#include "pipewright/sim/memory_model.h"

#include <algorithm>

namespace pipewright {

MemoryLevel::MemoryLevel(std::int64_t static_bytes, std::vector<MemorySample>* curve)
    : current_(static_cast<double>(static_bytes)), peak_bytes_(static_bytes), curve_(curve) {
    if (curve_ != nullptr) {
        curve_->push_back({0.0, static_bytes});
    }
}

void MemoryLevel::settle() {
    // Frees first. Summed in this order whatever order the changes came in,
    // so that the totals are the same to the last bit.
    std::sort(pending_.begin(), pending_.end());
    for (const double delta : pending_) {
        current_ += delta;
    }
    pending_.clear();
    const auto bytes = static_cast<std::int64_t>(std::max(0.0, current_));
    if (curve_ != nullptr) {
        if (!curve_->empty() && curve_->back().time_s == pending_time_s_) {
            curve_->back().bytes = bytes;
        } else {
            curve_->push_back({pending_time_s_, bytes});
        }
    }
    if (bytes > peak_bytes_) {
        peak_bytes_ = bytes;
        peak_time_s_ = pending_time_s_;
    }
}

std::vector<RankMemory> memory_over_time(const Timeline& timeline,
                                         const std::vector<StageCost>& stages,
                                         const std::vector<std::int64_t>& static_bytes) {
    const auto ranks = static_cast<std::size_t>(timeline.num_ranks());
    std::vector<std::vector<MemoryChange>> changes(ranks);
    // ZeRO-2/3: each stage's whole gradients, from the end of its first
    // weight gradient (B, or W) to the end of its reduction
    // (StageCost::unsharded_gradient_bytes).
    struct Hold {
        int rank = -1;
        double from_s = 0, until_s = 0;
        bool started = false, reduced = false;
    };
    std::vector<Hold> holds(stages.size());
    for (const auto& e : timeline.events) {
        const auto r = static_cast<std::size_t>(e.rank);
        if (r >= ranks || e.action.stage < 0 ||
            static_cast<std::size_t>(e.action.stage) >= stages.size()) {
            continue;
        }
        const StageCost& stage = stages[static_cast<std::size_t>(e.action.stage)];
        for (const MemoryChange& change :
             memory_changes(stage, e.action.type, e.start_s, e.end_s)) {
            changes[r].push_back(change);
        }
        Hold& hold = holds[static_cast<std::size_t>(e.action.stage)];
        const ActionType t = e.action.type;
        if (computes_weight_gradients(t)) {
            hold.from_s = hold.started ? std::min(hold.from_s, e.end_s) : e.end_s;
            hold.started = true;
            hold.rank = e.rank;
        } else if (t == ActionType::reduce_grad) {
            hold.until_s = e.end_s;
            hold.reduced = true;
        }
    }
    for (std::size_t s = 0; s < stages.size(); ++s) {
        const Hold& hold = holds[s];
        const double bytes = stages[s].unsharded_gradient_bytes;
        if (bytes > 0 && hold.started && hold.reduced) {
            const auto r = static_cast<std::size_t>(hold.rank);
            changes[r].push_back({hold.from_s, bytes});
            changes[r].push_back({std::max(hold.from_s, hold.until_s), -bytes});
        }
    }
    std::vector<RankMemory> out(ranks);
    for (std::size_t r = 0; r < ranks; ++r) {
        auto& c = changes[r];
        // A measured timeline need not list a rank's actions in time order.
        std::stable_sort(c.begin(), c.end(), [](const MemoryChange& a, const MemoryChange& b) {
            return a.time_s < b.time_s;
        });
        RankMemory& m = out[r];
        m.static_bytes = r < static_bytes.size() ? static_bytes[r] : 0;
        MemoryLevel level(m.static_bytes, &m.curve);
        for (const MemoryChange& change : c) {
            level.add(change);
        }
        level.finish();
        m.peak_bytes = level.peak_bytes();
        m.peak_time_s = level.peak_time_s();
    }
    return out;
}

}  // namespace pipewright
