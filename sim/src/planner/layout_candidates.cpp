// One candidate generator per dimension of parallelism. A generator takes a
// partial layout (the dimensions before it chosen) and gives the layouts
// that extend it along its own dimension; candidate_layouts applies them in
// turn.

#include "planner/layout_candidates.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <numeric>
#include <utility>

#include "pipewright/core/transformer_dims.h"

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

// The sizes a searched dimension tries: every divisor of `limit` up to
// `most`.
std::vector<int> divisors_up_to(std::int64_t limit, int most) {
    std::vector<int> out;
    for (int k = 1; k <= most && k <= limit; ++k) {
        if (limit % k == 0) {
            out.push_back(k);
        }
    }
    return out;
}

// The routed experts every mixture-of-experts block's count shares (their
// greatest common divisor), or 0 without such a block.
std::int64_t shared_expert_count(const Model& model) {
    std::int64_t g = 0;
    for (const LayerSpec& layer : model.layers) {
        if (has_experts(layer)) {
            g = std::gcd(g, static_cast<std::int64_t>(transformer_dims(layer).experts));
        }
    }
    return g;
}

// The sequence attention sees (the first transformer block's input length
// is the model input's first dimension for the planner's models), or 0
// without attention.
std::int64_t attention_sequence(const Model& model) {
    const bool attention =
        std::any_of(model.layers.begin(), model.layers.end(),
                    [](const LayerSpec& l) { return l.type == "transformer_block"; });
    return attention && !model.input.shape.empty() ? model.input.shape.front() : 0;
}

// Context parallelism: the asked size, or every size whose double divides
// the sequence and that the groups can hold (1 without attention).
void context_sizes(const GeneratorInput& in, const DataParallelOption& partial,
                   std::vector<DataParallelOption>& out, LayoutCandidates& candidates) {
    const int groups =
        static_cast<int>(tensor_leaders(in.project.topology, partial.tensor_parallel).size());
    std::vector<int> sizes{in.request.context};
    if (in.request.context == 0) {
        const std::int64_t sequence = attention_sequence(in.project.model);
        sizes = sequence > 0 ? divisors_up_to(sequence / 2, groups) : std::vector<int>{1};
        if (sequence == 0) {
            candidates.context_skipped.push_back("all but 1: the model has no attention");
        }
    }
    for (const int c : sizes) {
        if (in.request.context == 0 && in.request.data > 0 && in.request.data % c != 0) {
            continue;  // the replicas asked for cannot hold its groups
        }
        DataParallelOption layout = partial;
        layout.context_parallel = c;
        out.push_back(std::move(layout));
    }
}

// Expert parallelism: the asked size, or every size that divides each
// block's experts and that the groups can hold (1 without experts).
void expert_sizes(const GeneratorInput& in, const DataParallelOption& partial,
                  std::vector<DataParallelOption>& out, LayoutCandidates& candidates) {
    const int groups =
        static_cast<int>(tensor_leaders(in.project.topology, partial.tensor_parallel).size());
    std::vector<int> sizes{in.request.experts};
    if (in.request.experts == 0) {
        const std::int64_t experts = shared_expert_count(in.project.model);
        sizes = experts > 0 ? divisors_up_to(experts, groups) : std::vector<int>{1};
        if (experts == 0) {
            candidates.experts_skipped.push_back("all but 1: the model has no experts");
        }
    }
    for (const int e : sizes) {
        if (in.request.experts == 0 && in.request.data > 0 && in.request.data % e != 0) {
            continue;  // the replicas asked for cannot hold its groups
        }
        DataParallelOption layout = partial;
        layout.expert_parallel = e;
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
    const int context = std::max(1, partial.context_parallel);
    const int experts = std::max(1, partial.expert_parallel);
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
    if (!problem.empty() && in.request.tensor != 0 && in.request.context != 0 &&
        in.request.experts != 0) {
        throw InputError(in.request.data_path, problem);
    }
    add(asked, std::move(problem));
}

}  // namespace

LayoutRequest::LayoutRequest(const Project& project, const PlanOptions& options)
    : data(options.data_parallel.value_or(project.data_parallel.size)),
      tensor(options.tensor_parallel.value_or(project.tensor_parallel.size)),
      sequence(options.sequence_parallel.value_or(project.tensor_parallel.sequence_parallel)),
      experts(options.expert_parallel.value_or(project.expert_parallel.size)),
      context(options.context_parallel.value_or(project.context_parallel.size)),
      data_path(options.data_parallel ? "--data-parallel" : "data_parallel.size"),
      tensor_path(options.tensor_parallel ? "--tensor-parallel" : "tensor_parallel.size"),
      experts_path(options.expert_parallel ? "--expert-parallel" : "expert_parallel.size"),
      context_path(options.context_parallel ? "--context-parallel" : "context_parallel.size") {
    check_tensor_parallel_size(tensor, tensor_path);
}

LayoutCandidates candidate_layouts(const Project& project, const PlanOptions& options,
                                   const LayoutRequest& request) {
    // In this order: each generator's values may depend on those before it.
    const std::vector<Generator> generators{tensor_sizes, context_sizes, expert_sizes,
                                            replica_counts};
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
