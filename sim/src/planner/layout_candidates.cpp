// One candidate generator per dimension of parallelism. A generator takes a
// partial layout (the dimensions before it chosen) and gives the layouts
// that extend it along its own dimension; candidate_layouts applies them in
// turn.

#include "planner/layout_candidates.h"

#include <algorithm>
#include <functional>
#include <utility>

#include "planner/internal.h"
#include "planner/tensor_groups.h"

namespace pipewright::planner {

namespace {

struct GeneratorInput {
    const Project& project;
    const PlanOptions& options;
    const LayoutRequest& request;
};

// Extends `partial` along one dimension into `out`, noting values it leaves
// out in `candidates`.
using Generator =
    std::function<void(const GeneratorInput&, const DataParallelOption& partial,
                       std::vector<DataParallelOption>& out, LayoutCandidates& candidates)>;

// Tensor parallelism: the asked size, or every size that divides the
// largest container and that the model can split into.
void tensor_sizes(const GeneratorInput& in, const DataParallelOption& partial,
                  std::vector<DataParallelOption>& out, LayoutCandidates& candidates) {
    const LayoutRequest& request = in.request;
    const std::vector<int> sizes = request.tensor == 0 ? tensor_parallel_sizes(in.project.topology)
                                                       : std::vector<int>{request.tensor};
    for (const int t : sizes) {
        if (t > 1) {
            if (auto why =
                    tensor_split_problem(in.project, t, request.sequence, in.options.catalog)) {
                if (request.tensor != 0) {
                    throw InputError(request.tensor_path, *why);
                }
                candidates.tensor_skipped.push_back(std::to_string(t) + ": " + *why);
                continue;
            }
        }
        DataParallelOption layout = partial;
        layout.tensor_parallel = t;
        layout.sequence_parallel = request.sequence && t > 1;
        out.push_back(std::move(layout));
    }
}

// Why `asked` replicas of groups of `tensor` devices cannot be laid out
// on `groups` groups with a batch of `batch` samples, `context` replicas to
// a sequence and the experts over `experts` of them; empty when they can.
std::string replica_count_problem(int asked, int groups, int tensor, int batch, int context,
                                  int experts) {
    if (asked < 0) {
        return "must be at least 1 (or 0 to search)";
    }
    for (const auto& [size, what] : {std::pair{context, "context_parallel.size"},
                                     std::pair{experts, "expert_parallel.size"}}) {
        if (asked % size != 0) {
            return std::to_string(asked) + " replicas do not split into groups of " +
                   std::to_string(size) + " (" + what + ")";
        }
    }
    if (asked > groups) {
        return tensor > 1
                   ? std::to_string(asked) + " replicas of tensor-parallel groups of " +
                         std::to_string(tensor) + " devices need " + std::to_string(asked) +
                         " groups; the topology has " + std::to_string(groups)
                   : std::to_string(asked) + " replicas need at least " + std::to_string(asked) +
                         " devices; the topology has " + std::to_string(groups);
    }
    if (batch % (asked / context) != 0) {
        return "the batch of " + std::to_string(batch) + " samples does not split evenly across " +
               std::to_string(asked / context) +
               (context > 1 ? " context-parallel groups" : " replicas");
    }
    return {};
}

// Data parallelism: the asked replica count, or every count that divides
// the groups of the partial layout's size and the batch. An asked count
// that cannot be laid out throws where the size was asked too; with sizes
// searched, it comes back with its reason set.
void replica_counts(const GeneratorInput& in, const DataParallelOption& partial,
                    std::vector<DataParallelOption>& out, LayoutCandidates& /*candidates*/) {
    const int tensor = partial.tensor_parallel;
    const int batch = in.project.training.batch_size;
    const int groups = static_cast<int>(tensor_leaders(in.project.topology, tensor).size());
    const auto add = [&](int replicas, std::string reason) {
        DataParallelOption& layout = out.emplace_back(partial);
        layout.replicas = replicas;
        layout.reason = std::move(reason);
    };
    const int asked = in.request.data;
    const int context = std::max(1, in.project.context_parallel.size);
    const int experts = std::max(1, in.project.expert_parallel.size);
    if (asked == 0) {
        for (int d = 1; d <= groups; ++d) {
            if (groups % d == 0 &&
                replica_count_problem(d, groups, tensor, batch, context, experts).empty()) {
                add(d, "");
            }
        }
        return;
    }
    std::string problem = replica_count_problem(asked, groups, tensor, batch, context, experts);
    if (!problem.empty() && in.request.tensor != 0) {
        throw InputError(in.request.data_path, problem);
    }
    add(asked, std::move(problem));
}

}  // namespace

LayoutRequest::LayoutRequest(const Project& project, const PlanOptions& options)
    : data(options.data_parallel.value_or(project.data_parallel.size)),
      tensor(options.tensor_parallel.value_or(project.tensor_parallel.size)),
      sequence(options.sequence_parallel.value_or(project.tensor_parallel.sequence_parallel)),
      data_path(options.data_parallel ? "--data-parallel" : "data_parallel.size"),
      tensor_path(options.tensor_parallel ? "--tensor-parallel" : "tensor_parallel.size") {
    check_tensor_parallel_size(tensor, tensor_path);
}

LayoutCandidates candidate_layouts(const Project& project, const PlanOptions& options,
                                   const LayoutRequest& request) {
    // In this order: each generator's values may depend on those before it.
    const std::vector<Generator> generators{tensor_sizes, replica_counts};
    const GeneratorInput in{project, options, request};
    LayoutCandidates candidates;
    candidates.layouts.emplace_back();
    for (const Generator& generate : generators) {
        std::vector<DataParallelOption> next;
        for (const DataParallelOption& partial : candidates.layouts) {
            if (partial.reason.empty()) {
                generate(in, partial, next, candidates);
            } else {
                next.push_back(partial);  // cannot be planned: stays as it is
            }
        }
        candidates.layouts = std::move(next);
    }
    return candidates;
}

}  // namespace pipewright::planner
