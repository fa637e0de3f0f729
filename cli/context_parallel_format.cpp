#include "context_parallel_format.h"

#include <string>

#include "pipewright/core/quantity_format.h"
#include "report_format.h"

namespace pipewright::cli {

void print_context_parallel(std::ostream& out, const SimulationReport& r) {
    const int c = r.context_parallel.size;
    const bool ring = r.context_parallel.exchange == ContextExchange::ring;
    out << "Context     every sequence split over " << c << " replicas (1/" << c
        << " of its tokens each) · keys and values exchanged "
        << (ring ? "around a ring, beside the attention of the chunk in hand"
                 : "by all-gather before attention (their gradients reduce-scattered after)")
        << "; what each stage waits for in one micro-batch:\n\n";
    TextTable table({"stage", "rank", "keys and values", "forward", "backward"});
    for (std::size_t col = 0; col < 5; ++col) {
        table.right_align(col);
    }
    for (std::size_t s = 0; s < r.stages.size(); ++s) {
        const std::size_t rank =
            s < r.stage_ranks.size() ? static_cast<std::size_t>(r.stage_ranks[s]) : s;
        table.add_row({std::to_string(s), std::to_string(rank),
                       format_bytes(r.stages[s].context_kv_bytes),
                       format_duration(r.stages[s].context_forward_s),
                       format_duration(r.stages[s].context_backward_s)});
    }
    table.print(out);
}

nlohmann::json context_parallel_json(const SimulationReport& r) {
    nlohmann::json stages = nlohmann::json::array();
    for (const StageCost& s : r.stages) {
        stages.push_back({{"kv_bytes", s.context_kv_bytes},
                          {"forward_s", s.context_forward_s},
                          {"backward_s", s.context_backward_s}});
    }
    return {{"size", r.context_parallel.size},
            {"exchange", to_string(r.context_parallel.exchange)},
            {"stages", stages}};
}

}  // namespace pipewright::cli
