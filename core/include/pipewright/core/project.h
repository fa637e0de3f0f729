#pragma once

#include <string>
#include <vector>

#include "pipewright/core/context_parallel.h"
#include "pipewright/core/data_parallel.h"
#include "pipewright/core/expert_parallel.h"
#include "pipewright/core/model.h"
#include "pipewright/core/tensor_parallel.h"
#include "pipewright/core/topology.h"
#include "pipewright/core/training.h"

namespace pipewright {

// One pipeline stage: a contiguous run of layers on one device. Stages are
// listed in model order; a device may hold several (interleaved schedules).
struct StageAssignment {
    std::string device;  // device path "node/container/device"
    std::vector<std::string> layers;

    bool operator==(const StageAssignment&) const = default;
};

struct Project {
    static constexpr const char* kFormat = "pipewright-project";
    static constexpr int kVersion = 1;

    Model model;
    Topology topology;
    std::vector<StageAssignment> placement;  // of the first replica
    Training training;
    DataParallel data_parallel;
    TensorParallel tensor_parallel;
    ExpertParallel expert_parallel;
    ContextParallel context_parallel;

    bool operator==(const Project&) const = default;
};

}  // namespace pipewright
