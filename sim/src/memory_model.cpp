#include "pipewright/sim/memory_model.h"

#include <algorithm>

namespace pipewright {

namespace {

struct Change {
    double time_s;
    double delta;
};

}  // namespace

std::vector<RankMemory> memory_over_time(const Timeline& timeline,
                                         const std::vector<StageCost>& stages,
                                         const std::vector<std::int64_t>& static_bytes) {
    const auto ranks = static_cast<std::size_t>(timeline.num_ranks());
    std::vector<std::vector<Change>> changes(ranks);
    for (const auto& e : timeline.events) {
        const auto r = static_cast<std::size_t>(e.rank);
        if (r >= ranks || e.action.stage < 0 ||
            static_cast<std::size_t>(e.action.stage) >= stages.size()) {
            continue;
        }
        const StageCost& s = stages[static_cast<std::size_t>(e.action.stage)];
        switch (e.action.type) {
            case ActionType::forward:
                changes[r].push_back({e.start_s, s.stash_bytes});
                break;
            case ActionType::backward:
                changes[r].push_back({e.end_s, -s.stash_bytes});
                break;
            case ActionType::backward_input:
                changes[r].push_back({e.end_s, s.weight_stash_bytes - s.stash_bytes});
                break;
            case ActionType::backward_weight:
                changes[r].push_back({e.end_s, -s.weight_stash_bytes});
                break;
            default:
                break;
        }
    }
    std::vector<RankMemory> out(ranks);
    for (std::size_t r = 0; r < ranks; ++r) {
        auto& c = changes[r];
        // At equal times, frees first: a backward that ends as the next
        // forward begins has already released its activations.
        std::stable_sort(c.begin(), c.end(), [](const Change& a, const Change& b) {
            return a.time_s < b.time_s || (a.time_s == b.time_s && a.delta < b.delta);
        });
        RankMemory& m = out[r];
        m.static_bytes = r < static_bytes.size() ? static_bytes[r] : 0;
        double current = static_cast<double>(m.static_bytes);
        m.peak_bytes = m.static_bytes;
        m.curve.push_back({0.0, m.static_bytes});
        for (std::size_t i = 0; i < c.size(); ++i) {
            current += c[i].delta;
            // One sample per distinct time keeps the curve small.
            if (i + 1 < c.size() && c[i + 1].time_s == c[i].time_s) {
                continue;
            }
            const auto bytes = static_cast<std::int64_t>(std::max(0.0, current));
            if (!m.curve.empty() && m.curve.back().time_s == c[i].time_s) {
                m.curve.back().bytes = bytes;
            } else {
                m.curve.push_back({c[i].time_s, bytes});
            }
            if (bytes > m.peak_bytes) {
                m.peak_bytes = bytes;
                m.peak_time_s = c[i].time_s;
            }
        }
    }
    return out;
}

}  // namespace pipewright
