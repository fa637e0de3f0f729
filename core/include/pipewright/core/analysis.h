#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "pipewright/core/device_catalog.h"
#include "pipewright/core/diagnostics.h"
#include "pipewright/core/layer_catalog.h"
#include "pipewright/core/project.h"
#include "pipewright/core/schedule.h"
#include "pipewright/core/tensor_parallel.h"
#include "pipewright/core/tied_embeddings.h"
#include "pipewright/core/topology.h"

namespace pipewright {

struct PipelineStage {
    int index = 0;
    int rank = 0;
    int first_layer = 0;  // inclusive
    int last_layer = 0;   // inclusive
};

// A project checked and resolved: every layer analysed, every stage on a
// rank, every rank on a device with its figures, the schedule built.
struct AnalyzedProject {
    Project project;
    std::vector<LayerAnalysis> layers;   // per layer, per sample
    std::vector<PipelineStage> stages;   // in model order
    std::vector<DeviceLocation> ranks;   // rank -> device (first appearance order)
    std::vector<DeviceSpec> rank_specs;  // rank -> effective device figures
    // Data parallelism: replicas[r][rank] is the device of `rank` in replica
    // r, and replica_specs its figures; replicas[0] is `ranks`. One replica
    // when the project has no data parallelism.
    std::vector<std::vector<DeviceLocation>> replicas;
    std::vector<std::vector<DeviceSpec>> replica_specs;
    // Tensor parallelism (project.tensor_parallel, resolved): tensor_groups
    // [replica][rank] lists the devices of that rank's group, its own first,
    // and tensor_shares what each device runs of each layer. Both empty
    // without tensor parallelism.
    std::vector<std::vector<std::vector<DeviceLocation>>> tensor_groups;
    std::vector<TensorShare> tensor_shares;
    // The embedding and head that share one matrix (model.tie_word_embeddings).
    std::optional<TiedEmbeddings> tied;
    int microbatches = 1;            // per replica
    int microbatch_size = 1;         // samples
    Schedule schedule;               // of one replica, with communication and collectives
    bool schedule_from_csv = false;  // read from a file rather than generated

    [[nodiscard]] int num_ranks() const { return static_cast<int>(ranks.size()); }
    [[nodiscard]] int data_parallel() const { return static_cast<int>(replicas.size()); }
    // A real run has one process per device of every replica: world rank
    // replica × num_ranks() + rank, so replica 0's ranks keep their numbers.
    [[nodiscard]] int world_size() const { return num_ranks() * std::max(1, data_parallel()); }
    [[nodiscard]] int replica_of(int world_rank) const { return world_rank / num_ranks(); }
    [[nodiscard]] int pipeline_rank_of(int world_rank) const { return world_rank % num_ranks(); }
    [[nodiscard]] const DeviceLocation& world_device(int world_rank) const {
        return replicas.empty() ? ranks.at(static_cast<std::size_t>(world_rank))
                                : replicas.at(static_cast<std::size_t>(replica_of(world_rank)))
                                      .at(static_cast<std::size_t>(pipeline_rank_of(world_rank)));
    }
    [[nodiscard]] std::vector<int> stage_ranks() const;
};

struct AnalysisOptions {
    // Command-line replacements of the project's training settings.
    std::optional<std::string> schedule;
    std::optional<std::string> schedule_csv;
    std::optional<int> microbatches;
    std::optional<int> batch_size;
    std::optional<int> data_parallel;       // --data-parallel: replicas of the pipeline
    std::optional<int> tensor_parallel;     // --tensor-parallel: devices of each stage
    std::optional<bool> sequence_parallel;  // --sequence-parallel
    std::optional<int> expert_parallel;     // --expert-parallel: ranks the experts split over
    std::optional<int> context_parallel;    // --context-parallel: ranks a sequence splits over
    std::optional<ContextExchange> context_exchange;  // --context-exchange
    // The project is one replica of a data-parallel layout, priced alone
    // (the planner): its context- and expert-parallel sizes are those of the
    // whole layout, not checked against its own replicas, and the groups
    // they form are left to the simulation of the whole.
    bool replica_alone = false;
    const DeviceCatalog* catalog = nullptr;  // builtin when null
    // Folder that relative paths in the project (training.schedule.csv) start
    // from. Not `schedule_csv` above: a command-line path is taken as given,
    // relative to the current folder.
    std::filesystem::path base_dir;
};

// Validates everything and returns the resolved project, or nullopt with every
// problem (each naming its JSON path) in `diagnostics`.
[[nodiscard]] std::optional<AnalyzedProject> analyze_project(const Project& project,
                                                             const AnalysisOptions& options,
                                                             Diagnostics& diagnostics);

// A compute-only schedule of `project`'s placement made ready to run as its
// generated schedules are: with sends and receives, and with the
// data-parallel collectives its replicas need.
[[nodiscard]] Schedule with_project_communication(const AnalyzedProject& project,
                                                  const Schedule& compute_only);

}  // namespace pipewright
