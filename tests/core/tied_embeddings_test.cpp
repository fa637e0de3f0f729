// model.tie_word_embeddings: which models can tie, the words when one
// cannot, the file's round trip, and the count that names the matrix once.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "pipewright/core/analysis.h"
#include "pipewright/core/project_io.h"
#include "project_fixtures.h"

namespace pipewright {
namespace {

using nlohmann::json;

// The dummy example's topology under a small GPT (embedding 1000 × 64,
// a block, the head), all on its first device.
json gpt_json() {
    json j = testing::dummy_json();
    j["model"] = {{"name", "gpt"},
                  {"input", {{"shape", {16}}, {"dtype", "int64"}}},
                  {"loss", "cross_entropy"},
                  {"tie_word_embeddings", true},
                  {"layers",
                   {{{"name", "wte"},
                     {"type", "embedding"},
                     {"num_embeddings", 1000},
                     {"embedding_dim", 64},
                     {"positions", 16}},
                    {{"name", "h0"}, {"type", "transformer_block"}, {"hidden", 64}, {"heads", 4}},
                    {{"name", "lm_head"},
                     {"type", "linear"},
                     {"in_features", 64},
                     {"out_features", 1000},
                     {"bias", false}}}}};
    j["placement"] = {
        {{"device", j["placement"][0]["device"]}, {"layers", {"wte", "h0", "lm_head"}}}};
    j["training"]["batch_size"] = 4;
    j["training"]["microbatches"] = 1;
    j["training"]["schedule"] = "gpipe";
    return j;
}

Diagnostics analyze_problems(const json& j) {
    Diagnostics d;
    const auto project = project_from_json(j, d);
    if (project) {
        (void)analyze_project(*project, {}, d);
    }
    return d;
}

std::string messages(const Diagnostics& d) {
    return d.format();
}

TEST(TiedEmbeddings, TheMatrixIsCountedOnce) {
    Diagnostics d;
    const auto project = project_from_json(gpt_json(), d);
    ASSERT_TRUE(project) << d.format();
    const auto analyzed = analyze_project(*project, {}, d);
    ASSERT_TRUE(analyzed) << d.format();
    ASSERT_TRUE(analyzed->tied);
    EXPECT_EQ(analyzed->tied->embedding, 0);
    EXPECT_EQ(analyzed->tied->head, 2);
    EXPECT_EQ(analyzed->tied->parameters, 64'000);
    std::int64_t layers = 0;
    for (const auto& l : analyzed->layers) {
        layers += l.parameters;
    }
    EXPECT_EQ(model_parameters(*analyzed), layers - 64'000);
    // The position table is the embedding's own: 16 × 64 more.
    EXPECT_EQ(analyzed->layers[0].parameters, 64'000 + 16 * 64);
}

TEST(TiedEmbeddings, AModelThatCannotTieIsToldWhy) {
    json j = gpt_json();
    j["model"]["layers"][2]["bias"] = true;
    EXPECT_NE(messages(analyze_problems(j))
                  .find("model.layers[2].bias: a head tied to the embedding has no bias"),
              std::string::npos)
        << messages(analyze_problems(j));

    j = gpt_json();
    j["model"]["layers"][2]["out_features"] = 999;
    EXPECT_NE(messages(analyze_problems(j))
                  .find("model.tie_word_embeddings: the head \"lm_head\" maps 64 to 999 "
                        "features, but a head tied to the embedding maps its 64 to its 1000"),
              std::string::npos)
        << messages(analyze_problems(j));

    j = gpt_json();
    j["model"]["layers"].erase(2);
    j["model"]["layers"].push_back({{"name", "norm"}, {"type", "layernorm"}, {"features", 64}});
    j["placement"][0]["layers"] = {"wte", "h0", "norm"};
    j["model"]["loss"] = "mse";
    EXPECT_NE(messages(analyze_problems(j))
                  .find("model.tie_word_embeddings: tied embeddings need the last layer to be "
                        "the linear output head, but model.layers[2] (\"norm\") is a layernorm "
                        "layer"),
              std::string::npos)
        << messages(analyze_problems(j));

    j = gpt_json();
    j["model"]["tie_word_embeddings"] = "yes";
    EXPECT_NE(messages(analyze_problems(j)).find("model.tie_word_embeddings"), std::string::npos);

    j = gpt_json();
    j["model"]["layers"][0]["positions"] = 8;
    EXPECT_NE(messages(analyze_problems(j))
                  .find("model.layers[0].positions: \"positions\" must cover the sequence of 16 "
                        "tokens, got 8"),
              std::string::npos)
        << messages(analyze_problems(j));
}

TEST(TiedEmbeddings, TheFileKeepsTheTieAndAnUntiedFileStaysAsItWas) {
    const Project tied = testing::parse_ok(gpt_json());
    EXPECT_TRUE(tied.model.tie_word_embeddings);
    const json written = project_to_json(tied);
    EXPECT_EQ(written["model"]["tie_word_embeddings"], true);
    EXPECT_EQ(testing::parse_ok(written), tied);

    json untied = gpt_json();
    untied["model"].erase("tie_word_embeddings");
    const Project plain = testing::parse_ok(untied);
    EXPECT_FALSE(plain.model.tie_word_embeddings);
    EXPECT_FALSE(project_to_json(plain)["model"].contains("tie_word_embeddings"));
}

}  // namespace
}  // namespace pipewright
