#pragma once
// The project a Hugging Face config describes, placed over a cluster of one
// device type by the planner and simulated once: what `pipewright import
// config.json` writes and `pipewright.import_config` returns.

#include <optional>
#include <string>
#include <vector>

#include "pipewright/core/diagnostics.h"
#include "pipewright/core/hf_config.h"
#include "pipewright/core/project.h"
#include "pipewright/sim/simulation.h"

namespace pipewright::cli {

// The largest cluster (devices a node, and nodes) and sequence an import
// takes, on the command line and from Python alike.
inline constexpr int kMaxImportDevices = 4096;
inline constexpr long long kMaxImportSequence = 1LL << 24;

struct ConfigProjectOptions {
    int devices = 1;  // per node
    int nodes = 1;
    std::string device_spec = "H100-SXM";  // as the catalog names it
    int batch_size = 32;
    std::optional<int> microbatches;  // default: twice the stages, dividing the batch
};

struct ConfigProject {
    Project project;
    std::string architecture;        // the config's, "LlamaForCausalLM"
    std::vector<std::string> notes;  // what the model prices otherwise, in words
    double parameters = 0;
    double active_parameters = 0;  // a token's: the routed experts it reaches
    SimulationReport simulated;    // the placed project, summary only
};

// `imported`'s decoder on options.nodes × options.devices of the catalog's
// options.device_spec (flash attention and bfloat16 on GPUs, float32 and
// unfused attention on CPUs), AdamW, split by the planner. Nothing (the
// problems in `d`) when the project does not analyse.
[[nodiscard]] std::optional<ConfigProject> config_project(HfModel imported,
                                                          const ConfigProjectOptions& options,
                                                          Diagnostics& d);

}  // namespace pipewright::cli
