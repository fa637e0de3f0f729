#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipewright/core/topology.h"

namespace pipewright {

// Costs measured on a real machine (by `pipewright profile`), which replace
// the analytic estimates layer by layer.
struct LayerProfile {
    std::string name;
    double forward_ms = 0;
    double backward_input_ms = 0;
    double backward_weight_ms = 0;
    std::optional<std::int64_t> activation_bytes;  // per micro-batch

    bool operator==(const LayerProfile&) const = default;
};

struct Profile {
    static constexpr const char* kFormat = "pipewright-profile";
    static constexpr int kVersion = 1;

    std::string device_kind;  // "cpu", "cuda"
    std::string device_name;  // what the machine reported
    int microbatch_size = 1;  // the layer times were measured at this size
    std::vector<LayerProfile> layers;
    std::optional<LinkSpec> transfer;  // measured between two ranks

    [[nodiscard]] const LayerProfile* find(const std::string& layer) const;
    bool operator==(const Profile&) const = default;
};

[[nodiscard]] nlohmann::json profile_to_json(const Profile& profile);
// Throws InputError naming the JSON path of each problem.
[[nodiscard]] Profile profile_from_json(const nlohmann::json& j);
[[nodiscard]] Profile load_profile_file(const std::filesystem::path& path);

}  // namespace pipewright
