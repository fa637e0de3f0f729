#include "pipewright/sim/tied_embedding_sync.h"

#include <algorithm>

#include "concurrent_groups.h"
#include "pipewright/core/topology.h"
#include "pipewright/sim/kernel_cost.h"
#include "pipewright/sim/stage_memory.h"

namespace pipewright {

std::optional<TiedEmbeddingSync> tied_embedding_sync(const AnalyzedProject& project,
                                                     const CostModelOptions& options) {
    const auto tied = tied_stages(project);
    if (!tied) {
        return std::nullopt;
    }
    TiedEmbeddingSync sync;
    sync.embedding_stage = tied->embedding;
    sync.head_stage = tied->head;
    const auto& stages = project.stages;
    sync.embedding_rank = stages[static_cast<std::size_t>(sync.embedding_stage)].rank;
    sync.head_rank = stages[static_cast<std::size_t>(sync.head_stage)].rank;
    const double share =
        project.tensor_shares.empty()
            ? 1.0
            : project.tensor_shares[static_cast<std::size_t>(project.tied->head)].parameters;
    sync.bytes = gradient_bytes(
        static_cast<std::int64_t>(static_cast<double>(project.tied->parameters) * share),
        project.project.training);
    const DeviceSpec& device = project.rank_specs.at(static_cast<std::size_t>(sync.head_rank));
    if (sync.embedding_rank == sync.head_rank) {
        // Both copies on one device: read both, write the sum into each.
        sync.same_rank = true;
        Kernel add;
        add.name = "tied embedding gradient sum";
        add.flops = sync.bytes;
        add.bytes = 4 * sync.bytes;
        sync.seconds = kernel_time(add, device, project.project.training.dtype).seconds;
        return sync;
    }
    const LinkResolver links(project.project.topology);
    // Every replica's pair, and every tensor-parallel position's, sums its
    // copies at the same moment, over the links they share.
    std::vector<std::vector<DeviceLocation>> pairs;
    for (int r = 0; r < std::max(1, project.data_parallel()); ++r) {
        for (std::size_t k = 0; k < tensor_positions(project, sync.head_rank); ++k) {
            pairs.push_back({stage_device(project, r, sync.embedding_rank, k),
                             stage_device(project, r, sync.head_rank, k)});
        }
    }
    const LinkSharing sharing(pairs, links);
    CollectiveGroup group = collective_group(pairs.front(), links, device, &sharing);
    if (options.profile != nullptr && options.profile->all_reduce) {
        group = with_measured_ring(group, options.profile->all_reduce->link);
    }
    const CollectiveTime time = collective_time(CollectiveKind::all_reduce, sync.bytes, group);
    sync.library = group.library;
    sync.protocol = time.protocol;
    sync.seconds = time.seconds;
    return sync;
}

}  // namespace pipewright
