#include "expert_parallel_format.h"

#include <string>

#include "pipewright/core/quantity_format.h"
#include "report_format.h"

namespace pipewright::cli {

void print_expert_parallel(std::ostream& out, const SimulationReport& r) {
    out << "Experts     split over " << r.expert_parallel.size
        << " replicas · each stage's all-to-alls in one micro-batch (dispatch and combine):\n\n";
    TextTable table({"stage", "rank", "expert parameters", "forward", "backward"});
    for (std::size_t c = 0; c < 5; ++c) {
        table.right_align(c);
    }
    for (std::size_t s = 0; s < r.stages.size(); ++s) {
        const std::size_t rank =
            s < r.stage_ranks.size() ? static_cast<std::size_t>(r.stage_ranks[s]) : s;
        table.add_row({std::to_string(s), std::to_string(rank),
                       format_count(static_cast<double>(r.stages[s].expert_parameters)),
                       format_duration(r.stages[s].expert_forward_s),
                       format_duration(r.stages[s].expert_backward_s)});
    }
    table.print(out);
}

nlohmann::json expert_parallel_json(const SimulationReport& r) {
    nlohmann::json stages = nlohmann::json::array();
    for (const StageCost& s : r.stages) {
        stages.push_back({{"expert_parameters", s.expert_parameters},
                          {"forward_s", s.expert_forward_s},
                          {"backward_s", s.expert_backward_s}});
    }
    return {{"size", r.expert_parallel.size}, {"stages", stages}};
}

}  // namespace pipewright::cli
