#include "execution/parameter_update.h"

#include "layers/mixture_of_experts.h"
#include "pipewright/backend/backend_error.h"

namespace pipewright::backend {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

std::vector<torch::Tensor> flattened(const std::map<int, std::vector<torch::Tensor>>& by_stage) {
    std::vector<torch::Tensor> all;
    for (const auto& [stage, params] : by_stage) {
        all.insert(all.end(), params.begin(), params.end());
    }
    return all;
}

std::vector<std::vector<torch::Tensor>> per_stage(
    const std::map<int, std::vector<torch::Tensor>>& by_stage) {
    std::vector<std::vector<torch::Tensor>> stages;
    for (const auto& [stage, params] : by_stage) {
        stages.push_back(params);
    }
    return stages;
}

}  // namespace

void ParameterUpdate::Set::zero_grad() {
    if (sharded) {
        sharded->zero_grad();
    } else if (optimizer) {
        optimizer->zero_grad();
    }
}

void ParameterUpdate::Set::step() {
    if (sharded) {
        sharded->step();  // includes gathering the other holders' updated shards
    } else if (optimizer) {
        optimizer->step();
    }
}

ParameterUpdate::ParameterUpdate(const AnalyzedProject& project,
                                 const std::map<int, torch::nn::Sequential>& stages,
                                 const ReplicaGroup& replicas, const ExpertReplicas& experts)
    : overlap_(project.project.data_parallel.overlap_gradient_sync) {
    const bool split_experts = experts.dispatch.size > 1;
    for (const auto& [stage, module] : stages) {
        // Every stage gets an entry, so that REDUCE_GRAD of a stage without
        // parameters still finds its (empty) set.
        auto& dense = dense_.by_stage[stage];
        for (const auto& named : module->named_parameters()) {
            if (split_experts && is_routed_expert_parameter(named.key())) {
                experts_.by_stage[stage].push_back(named.value());
            } else {
                dense.push_back(named.value());
            }
        }
    }
    const DataParallel& dp = project.project.data_parallel;
    const OptimizerConfig& optimizer = project.project.training.optimizer;
    if (replicas.replicas > 1) {
        if (!replicas.collectives || !replicas.control) {
            throw BackendError("a data-parallel rank needs the process group of its replicas");
        }
        dense_.sync = std::make_unique<GradientSync>(replicas.collectives, replicas.replicas,
                                                     dp.bucket_MiB * kMiB, replicas.timeout);
    }
    if (replicas.replicas > 1 && dp.zero_stage == 1) {
        dense_.sharded = std::make_unique<ShardedOptimizer>(optimizer, per_stage(dense_.by_stage),
                                                            replicas.collectives, replicas.replica,
                                                            replicas.replicas, replicas.timeout);
    } else {
        dense_.optimizer = make_optimizer(optimizer, flattened(dense_.by_stage));
    }
    if (!split_experts) {
        return;
    }
    experts_.sync = std::make_unique<GradientSync>(experts.holders, replicas.replicas,
                                                   dp.bucket_MiB * kMiB, replicas.timeout);
    if (experts_.empty()) {
        return;
    }
    if (dp.zero_stage == 1 && experts.holders_count > 1) {
        experts_.sharded = std::make_unique<ShardedOptimizer>(
            optimizer, per_stage(experts_.by_stage), experts.holders, experts.holder,
            experts.holders_count, replicas.timeout);
    } else {
        experts_.optimizer = make_optimizer(optimizer, flattened(experts_.by_stage));
    }
}

ParameterUpdate::~ParameterUpdate() = default;

GradientSync::Started ParameterUpdate::start_reduction(int stage) {
    GradientSync::Started started = dense_.sync->start(dense_.by_stage.at(stage));
    if (const auto it = experts_.by_stage.find(stage); it != experts_.by_stage.end()) {
        started = std::move(started).joined(experts_.sync->start(it->second));
    }
    return started;
}

void ParameterUpdate::zero_grad() {
    dense_.zero_grad();
    experts_.zero_grad();
}

void ParameterUpdate::finish_reductions() {
    for (Set* set : {&dense_, &experts_}) {
        if (set->sync) {
            set->sync->finish();
        }
    }
}

void ParameterUpdate::step() {
    dense_.step();
    experts_.step();
}

// The dense set's state at the archive's top (as a run without experts
// saves it), the experts' in a part of their own.
void ParameterUpdate::save(torch::serialize::OutputArchive& archive) const {
    if (dense_.sharded) {
        dense_.sharded->save(archive);
    } else {
        dense_.optimizer->save(archive);
    }
    if (experts_.sharded || experts_.optimizer) {
        torch::serialize::OutputArchive part;
        if (experts_.sharded) {
            experts_.sharded->save(part);
        } else {
            experts_.optimizer->save(part);
        }
        archive.write("experts", part);
    }
}

void ParameterUpdate::load(torch::serialize::InputArchive& archive) {
    if (dense_.sharded) {
        dense_.sharded->load(archive);
    } else {
        dense_.optimizer->load(archive);
    }
    if (experts_.sharded || experts_.optimizer) {
        torch::serialize::InputArchive part;
        if (!archive.try_read("experts", part)) {
            throw BackendError(
                "the checkpoint has no optimizer state for this rank's experts (saved by a run "
                "without expert parallelism?)");
        }
        if (experts_.sharded) {
            experts_.sharded->load(part);
        } else {
            experts_.optimizer->load(part);
        }
    }
}

}  // namespace pipewright::backend
