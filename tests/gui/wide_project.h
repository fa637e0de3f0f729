#pragma once

// A cluster-scale project for the studio's tests, built in memory.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "pipewright/core/project_io.h"

namespace pipewright::gui {

// As bench/make_wide_project.py writes it: `devices` A100s in nodes of
// `per_node`, one linear layer on each.
inline Project wide_project(int devices, int per_node) {
    nlohmann::json nodes = nlohmann::json::array();
    nlohmann::json placement = nlohmann::json::array();
    nlohmann::json layers = nlohmann::json::array();
    for (int n = 0; n * per_node < devices; ++n) {
        nlohmann::json gpus = nlohmann::json::array();
        for (int g = 0; g < per_node && n * per_node + g < devices; ++g) {
            const std::string layer = "l" + std::to_string(n * per_node + g);
            gpus.push_back({{"name", "gpu" + std::to_string(g)}, {"spec", "A100-80GB"}});
            placement.push_back(
                {{"device", "node" + std::to_string(n) + "/c0/gpu" + std::to_string(g)},
                 {"layers", {layer}}});
            layers.push_back(
                {{"name", layer}, {"type", "linear"}, {"in_features", 256}, {"out_features", 256}});
        }
        nodes.push_back({{"name", "node" + std::to_string(n)},
                         {"containers", {{{"name", "c0"}, {"devices", gpus}}}}});
    }
    const nlohmann::json j = {
        {"format", "pipewright-project"},
        {"version", 1},
        {"model",
         {{"name", "wide"},
          {"input", {{"shape", {256}}, {"dtype", "float32"}}},
          {"loss", "mse"},
          {"layers", layers}}},
        {"topology", {{"nodes", nodes}}},
        {"placement", placement},
        {"training",
         {{"batch_size", 64},
          {"microbatches", 4},
          {"schedule", "gpipe"},
          {"optimizer", {{"type", "sgd"}, {"lr", 0.001}}},
          {"dtype", "float32"}}},
    };
    auto loaded = parse_project_text(j.dump());
    EXPECT_TRUE(loaded.project.has_value());
    return *loaded.project;
}

}  // namespace pipewright::gui
