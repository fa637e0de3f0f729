#pragma once

#include <string>
#include <vector>

#include "pipewright/core/analysis.h"
#include "pipewright/core/timeline_metrics.h"
#include "pipewright/sim/collective_cost.h"
#include "pipewright/sim/cost_model.h"
#include "pipewright/sim/event_simulator.h"
#include "pipewright/sim/tied_embedding_sync.h"

namespace pipewright {

// What one stage's data-parallel collectives cost on free links.
struct StageCollectiveCost {
    CollectiveKind kind = CollectiveKind::all_reduce;  // of REDUCE_GRAD
    CollectiveAlgorithm algorithm = CollectiveAlgorithm::ring;
    CollectiveLibrary library = CollectiveLibrary::gloo;
    CollectiveProtocol protocol = CollectiveProtocol::simple;  // NCCL's choice
    double gradient_bytes = 0;
    // Of them, the routed experts' under expert parallelism, which average
    // over the `expert_holders` replicas that hold the same experts.
    double expert_gradient_bytes = 0;
    int expert_holders = 0;
    double reduce_s = 0;
    int buckets = 1;  // overlapped with the last backward when > 1
    // The all-gather of the weights: before the stage computes under ZeRO-3
    // (UNSHARD), after the optimizer step under ZeRO-1/2; 0 otherwise.
    CollectiveAlgorithm gather_algorithm = CollectiveAlgorithm::ring;
    double gather_s = 0;
};

// A replica simulated for itself and those that run as it does.
struct ReplicaTiming {
    int replica = 0;
    std::vector<int> mirrored_by;  // other replicas with the same devices and links
    // Its iteration had it not waited for the other replicas' collectives.
    double alone_s = 0;
};

struct SimulationReport {
    std::string schedule;
    int batch_size = 0;
    int microbatches = 0;
    int microbatch_size = 0;
    double iteration_time_s = 0;
    double throughput_samples_per_s = 0;
    double bubble_fraction = 0;
    bool all_fit = true;
    std::vector<DeviceMetrics> devices;
    std::vector<LinkUsage> links;
    std::vector<StageCost> stages;
    int data_parallel = 1;
    int zero_stage = 0;
    bool overlap_gradient_sync = true;
    std::vector<StageCollectiveCost> collectives;  // per stage, with data parallelism
    // The replicas simulated (one when all run alike), the first first;
    // their lanes follow one another in `devices` and the timeline.
    std::vector<ReplicaTiming> replicas;
    // replica_devices[r][rank]: the device of each pipeline rank in every
    // replica (one replica without data parallelism).
    std::vector<std::vector<std::string>> replica_devices;
    // Tensor parallelism: each rank's group of devices (replica 0's), its own
    // first; empty with tensor_parallel.size 1. What each stage's group
    // reduces is in stages[s].tensor_forward_s and tensor_backward_s.
    TensorParallel tensor_parallel;
    // Expert parallelism (project.expert_parallel, resolved); what each
    // stage's all-to-alls take and which experts it holds is in `stages`.
    ExpertParallel expert_parallel;
    // Context parallelism (project.context_parallel, resolved): each
    // stage's exchange of keys and values is in `stages`.
    ContextParallel context_parallel;
    std::vector<std::vector<std::string>> tensor_groups;
    std::vector<int> stage_ranks;  // stage -> pipeline rank
    // Per lane of the timeline, the devices it stands for: its rank's
    // tensor-parallel group, in its replica and in every replica that runs
    // alike (Recording::timeline only).
    std::vector<std::vector<std::string>> lane_devices;
    // Tied embeddings in two stages: the sum of their gradients, after the
    // backward and before the optimizer steps (not an action of the timeline).
    std::optional<TiedEmbeddingSync> tied_embedding_sync;
    // With the memory curve of every rank; only its lanes and no events
    // when simulated with Recording::summary.
    Timeline timeline;
};

// What a simulation keeps besides the summary (metrics, peaks, links).
enum class Recording {
    timeline,  // every action's times and the memory curves
    summary,   // neither: for callers that only read the figures
};

// The links between the ranks of a project that exchange data (neighbouring
// stages), as the simulator needs them; other pairs get none.
void describe_links(const AnalyzedProject& project, const CostModelOptions& options,
                    SimulationInput& input);

// What each rank holds throughout (weights, gradients, optimizer state),
// where its memory peak starts.
[[nodiscard]] std::vector<std::int64_t> static_bytes_per_rank(const AnalyzedProject& project,
                                                              const std::vector<StageCost>& stages);

// Simulates one iteration of the analysed project: one replica of each
// kind (replica_classes.h), whose collectives wait for the slowest kind.
// Throws SimulationError.
[[nodiscard]] SimulationReport simulate_project(const AnalyzedProject& project,
                                                const CostModelOptions& options = {},
                                                Recording recording = Recording::timeline);

}  // namespace pipewright
