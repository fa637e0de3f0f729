#include "parallel/replica_groups.h"

#include <algorithm>
#include <cstdint>
#include <optional>

namespace pipewright {

namespace {

// The sequence attention sees: the first transformer block's input length.
std::optional<std::int64_t> attention_sequence(const AnalyzedProject& out) {
    const auto& layers = out.project.model.layers;
    for (std::size_t i = 0; i < layers.size() && i < out.layers.size(); ++i) {
        if (layers[i].type != "transformer_block") {
            continue;
        }
        const Shape& input =
            i == 0 ? out.project.model.input.shape : out.layers[i - 1].output_shape;
        if (input.empty()) {
            return std::nullopt;
        }
        return input.front();
    }
    return std::nullopt;
}

}  // namespace

void resolve_replica_groups(const Project& project, const AnalysisOptions& options,
                            AnalyzedProject& out, Diagnostics& d) {
    // A replica priced alone stands for replicas enough for its groups.
    const auto replicas_for = [&](int size) {
        return options.replica_alone ? size : std::max(1, out.data_parallel());
    };
    ExpertParallel& ep = out.project.expert_parallel;
    ep.size = options.expert_parallel.value_or(project.expert_parallel.size);
    check_expert_parallel(project.model, ep.size, replicas_for(ep.size),
                          options.expert_parallel ? "--expert-parallel" : "expert_parallel.size",
                          d);
    ContextParallel& cp = out.project.context_parallel;
    cp.size = options.context_parallel.value_or(project.context_parallel.size);
    cp.exchange = options.context_exchange.value_or(project.context_parallel.exchange);
    check_context_parallel(
        project.model, attention_sequence(out), cp.size, replicas_for(cp.size),
        options.context_parallel ? "--context-parallel" : "context_parallel.size", d);
}

}  // namespace pipewright
