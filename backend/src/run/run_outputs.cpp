#include "run/run_outputs.h"

#include <thread>

#include "pipewright/backend/backend_error.h"
#include "pipewright/core/output_file.h"
#include "pipewright/core/project_io.h"
#include "run/rendezvous.h"
#include "run/run_report.h"

namespace pipewright::backend {

RunSummary write_complete_outputs(
    const AnalyzedProject& project, c10d::Store& store, int warmup, int steps_before,
    const std::string& out_dir, std::chrono::milliseconds timeout,
    const std::function<std::optional<std::string>()>& other_failure) {
    const int world = project.world_size();
    std::vector<RankRecord> ranks(static_cast<std::size_t>(world));
    std::vector<bool> have(static_cast<std::size_t>(world), false);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
        std::vector<int> missing;
        for (int r = 0; r < world; ++r) {
            const auto ri = static_cast<std::size_t>(r);
            if (!have[ri]) {
                if (const auto text = try_get_text(store, keys::record(r))) {
                    ranks[ri] = parse_rank_record(*text, "the record of rank " + std::to_string(r));
                    have[ri] = true;
                } else {
                    missing.push_back(r);
                }
            }
        }
        if (missing.empty()) {
            break;
        }
        if (const auto failure = other_failure()) {
            throw BackendError(*failure);
        }
        if (std::chrono::steady_clock::now() >= deadline) {
            throw BackendError("no record arrived from " + counted("rank", missing));
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    RunReport report = build_run_report(project, ranks, warmup, steps_before);
    save_timeline_file(report.timeline, out_dir + "/timeline.json");
    // Streamed: a long run's trace never exists in memory whole.
    OutputFile trace(out_dir + "/trace.json");
    write_chrome_trace(report.timeline, trace);
    trace.write("\n");
    trace.commit();
    write_file_atomically(out_dir + "/metrics.json", to_json(report.metrics).dump(2) + "\n");
    report.summary.complete = true;
    return std::move(report.summary);
}

RunSummary write_node_outputs(const AnalyzedProject& project, NodeRanks mine, int warmup,
                              int steps_before, const std::string& out_dir) {
    std::vector<RankRecord> ranks;
    // Tensor-parallel groups' other members (ranks from world_size() on)
    // keep no record: the group's first member stands for it.
    for (int r = mine.first; r < std::min(mine.first + mine.count, project.world_size()); ++r) {
        const std::string file = out_dir + "/rank-" + std::to_string(r) + ".json";
        ranks.push_back(parse_rank_record(read_text_file(file), file));
    }
    RunReport report = build_run_report(project, ranks, warmup, steps_before);
    // Times and the bubble cover this node's ranks only; node 0 has the run's.
    report.summary.complete = false;
    write_file_atomically(out_dir + "/summary.json", to_json(report.summary).dump(2) + "\n");
    return std::move(report.summary);
}

}  // namespace pipewright::backend
