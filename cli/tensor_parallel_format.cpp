#include "tensor_parallel_format.h"

#include <string>

#include "pipewright/core/printable_name.h"
#include "pipewright/core/quantity_format.h"
#include "report_format.h"

namespace pipewright::cli {

std::string tensor_group_words(const std::vector<std::string>& group) {
    if (group.empty()) {
        return "-";
    }
    if (group.size() == 1) {
        return group.front();
    }
    const std::string& last = group.back();
    const auto slash = last.rfind('/');
    return group.front() + " … " + (slash == std::string::npos ? last : last.substr(slash + 1));
}

void print_tensor_parallel(std::ostream& out, const SimulationReport& r) {
    const TensorParallel& tp = r.tensor_parallel;
    out << "Tensor      " << tp.size << " devices a stage · sequence parallelism "
        << (tp.sequence_parallel ? "on" : "off")
        << " · each stage's all-reduces in one micro-batch:\n\n";
    TextTable table({"stage", "rank", "group", "forward", "backward"});
    table.right_align(0);
    table.right_align(1);
    table.right_align(3);
    table.right_align(4);
    for (std::size_t s = 0; s < r.stages.size(); ++s) {
        // Stages follow the pipeline's ranks; the report keeps each stage's
        // figures in model order.
        const std::size_t rank =
            s < r.stage_ranks.size() ? static_cast<std::size_t>(r.stage_ranks[s]) : s;
        const std::string group =
            rank < r.tensor_groups.size() ? tensor_group_words(r.tensor_groups[rank]) : "-";
        table.add_row({std::to_string(s), std::to_string(rank), printable_name(group),
                       format_duration(r.stages[s].tensor_forward_s),
                       format_duration(r.stages[s].tensor_backward_s)});
    }
    table.print(out);
}

nlohmann::json tensor_parallel_json(const SimulationReport& r) {
    nlohmann::json stages = nlohmann::json::array();
    for (const StageCost& s : r.stages) {
        stages.push_back({{"forward_s", s.tensor_forward_s}, {"backward_s", s.tensor_backward_s}});
    }
    return {{"size", r.tensor_parallel.size},
            {"sequence_parallel", r.tensor_parallel.sequence_parallel},
            {"groups", r.tensor_groups},
            {"stages", stages}};
}

}  // namespace pipewright::cli
