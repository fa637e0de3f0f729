// The backend's transformer_block against a block written as Hugging
// Face's Llama and GPT-2 code write it (decoder_reference.py, run by
// Debian's python3-torch at test time): the same weights and input give
// the same output, for every kind of block the catalog describes.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "pipewright/backend/modules.h"
#include "pipewright/core/transformer_dims.h"

namespace pipewright {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json tensor_json(const torch::Tensor& t) {
    const torch::Tensor flat = t.detach().to(torch::kFloat64).contiguous().flatten();
    return {{"shape", t.sizes().vec()},
            {"data",
             std::vector<double>(flat.data_ptr<double>(), flat.data_ptr<double>() + flat.numel())}};
}

// The largest difference between the backend's output and the reference's.
double difference_from_reference(const json& params, const std::string& name) {
    LayerSpec spec;
    spec.type = "transformer_block";
    spec.name = "block";
    spec.params = params;
    const TransformerDims d = transformer_dims(spec);
    const auto length = 6;
    const auto hidden = static_cast<std::int64_t>(d.hidden);
    auto block = backend::build_layer(spec, {length, hidden}, 3);
    block.ptr()->to(torch::kFloat64);
    torch::manual_seed(5);
    // Weights away from their initial values, so that every bias and norm
    // scale counts.
    {
        const torch::NoGradGuard no_grad;
        for (auto& p : block.ptr()->parameters()) {
            p.add_(torch::randn_like(p) * 0.1);
        }
    }
    const torch::Tensor x = torch::randn({2, length, hidden}, torch::kFloat64);
    const torch::Tensor y = block.forward(x);

    json case_json = {{"config",
                       {{"hidden", d.hidden},
                        {"heads", d.heads},
                        {"kv_heads", d.kv_heads},
                        {"head_dim", d.head_dim},
                        {"norm", d.rms_norm ? "rmsnorm" : "layernorm"},
                        {"activation", layer_choice(spec, "activation")},
                        {"rotary", d.rotary}}},
                      {"input", tensor_json(x)}};
    for (const auto& p : block.ptr()->named_parameters()) {
        case_json["params"][p.key()] = tensor_json(p.value());
    }
    const fs::path dir = test::temp_dir("decoder-reference-" + name);
    { std::ofstream(dir / "case.json") << case_json.dump(); }
    const std::string command = std::string(PIPEWRIGHT_REFERENCE_PYTHON) + " " +
                                PIPEWRIGHT_DECODER_REFERENCE + " " + (dir / "case.json").string() +
                                " " + (dir / "out.json").string();
    EXPECT_EQ(std::system(command.c_str()), 0) << command;
    std::ifstream in(dir / "out.json");
    const json out = json::parse(in, nullptr, false);
    fs::remove_all(dir);
    if (out.is_discarded()) {
        ADD_FAILURE() << "the reference wrote no output";
        return 1e9;
    }
    const auto data = out.at("data").get<std::vector<double>>();
    const torch::Tensor reference =
        torch::tensor(data, torch::kFloat64).reshape(out.at("shape").get<std::vector<int64_t>>());
    return (y - reference).abs().max().item<double>();
}

class DecoderReference : public ::testing::Test {
  protected:
    void SetUp() override {
        if (std::string(PIPEWRIGHT_REFERENCE_PYTHON).empty()) {
            GTEST_SKIP() << "python3-torch missing (scripts/setup-debian.sh installs it)";
        }
    }
};

TEST_F(DecoderReference, LlamaStyleBlocksComputeWhatHuggingFacesLlamaComputes) {
    // Grouped-query attention, SwiGLU, RMSNorm, no biases, rotary.
    EXPECT_LT(difference_from_reference({{"hidden", 16},
                                         {"heads", 4},
                                         {"kv_heads", 2},
                                         {"ffn_hidden", 40},
                                         {"activation", "swiglu"},
                                         {"norm", "rmsnorm"},
                                         {"bias", false},
                                         {"qkv_bias", false},
                                         {"rotary", true}},
                                        "llama"),
              1e-10);
    // Multi-query, a head width of its own, GeGLU, QKV biases only.
    EXPECT_LT(difference_from_reference({{"hidden", 16},
                                         {"heads", 4},
                                         {"kv_heads", 1},
                                         {"head_dim", 6},
                                         {"ffn_hidden", 24},
                                         {"activation", "geglu"},
                                         {"bias", false},
                                         {"rotary", true}},
                                        "mqa"),
              1e-10);
}

TEST_F(DecoderReference, GptBlocksComputeWhatGpt2Computes) {
    EXPECT_LT(difference_from_reference({{"hidden", 16}, {"heads", 4}}, "gpt"), 1e-10);
    EXPECT_LT(
        difference_from_reference({{"hidden", 16}, {"heads", 2}, {"activation", "relu"}}, "relu"),
        1e-10);
}

}  // namespace
}  // namespace pipewright
