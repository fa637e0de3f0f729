#pragma once

// A small decoder as a project (embedding, two blocks, a final norm and the
// head) on one container of 8 GPUs, in two stages: what the tensor-,
// expert- and context-parallel tests of the cost model start from, each
// with its own block and training.

#include <string>

#include <nlohmann/json.hpp>

namespace pipewright::testing {

struct DecoderProject {
    nlohmann::json block;  // a transformer_block, without its name
    int sequence = 0;
    int hidden = 0;
    std::string final_norm = "layernorm";  // or "rmsnorm"
    std::string device_spec = "H100-SXM";
    nlohmann::json link;  // every link of the cluster
    std::string second_stage_device = "node0/c0/gpu1";
    nlohmann::json training;
};

// Stage 0 (the embedding and block0) on gpu0, stage 1 (block1, the norm
// and the head) on `second_stage_device`.
inline nlohmann::json decoder_project_json(const DecoderProject& p) {
    using nlohmann::json;
    json b0 = p.block;
    b0["name"] = "block0";
    json b1 = p.block;
    b1["name"] = "block1";
    json gpus = json::array();
    for (int g = 0; g < 8; ++g) {
        gpus.push_back({{"name", "gpu" + std::to_string(g)}, {"spec", p.device_spec}});
    }
    const std::string norm = p.final_norm == "rmsnorm" ? "norm" : "ln_f";
    return {
        {"format", "pipewright-project"},
        {"version", 1},
        {"model",
         {{"name", "decoder"},
          {"input", {{"shape", {p.sequence}}, {"dtype", "int64"}}},
          {"loss", "cross_entropy"},
          {"layers",
           {{{"name", "embed"},
             {"type", "embedding"},
             {"num_embeddings", 32000},
             {"embedding_dim", p.hidden}},
            b0,
            b1,
            {{"name", norm}, {"type", p.final_norm}, {"features", p.hidden}},
            {{"name", "head"},
             {"type", "linear"},
             {"in_features", p.hidden},
             {"out_features", 32000},
             {"bias", false}}}}}},
        {"topology",
         {{"links", {{"intra_container", p.link}, {"intra_node", p.link}, {"inter_node", p.link}}},
          {"nodes",
           json::array({{{"name", "node0"},
                         {"containers", json::array({{{"name", "c0"}, {"devices", gpus}}})}}})}}},
        {"placement",
         json::array({{{"device", "node0/c0/gpu0"}, {"layers", {"embed", "block0"}}},
                      {{"device", p.second_stage_device}, {"layers", {"block1", norm, "head"}}}})},
        {"training", p.training}};
}

}  // namespace pipewright::testing
