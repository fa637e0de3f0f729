#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace pipewright {

// Times a user measured elsewhere for one layer at the project's micro-batch
// size; each replaces the analytic estimate for that part only.
struct CostOverride {
    std::optional<double> forward_ms;
    std::optional<double> backward_input_ms;
    std::optional<double> backward_weight_ms;

    bool operator==(const CostOverride&) const = default;
};

// One layer as written in the project file. Hyper-parameters stay a JSON
// object so that every layer type (and the studio's generic inspector) shares
// one representation; the catalog knows which keys each type takes.
struct LayerSpec {
    std::string name;
    std::string type;
    nlohmann::json params = nlohmann::json::object();
    std::optional<CostOverride> cost;
    // Bytes stashed per micro-batch for backward, replacing the estimate.
    std::optional<std::int64_t> activation_bytes;

    bool operator==(const LayerSpec&) const = default;
};

}  // namespace pipewright
