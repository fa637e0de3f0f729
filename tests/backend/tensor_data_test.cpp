// `run --data DIR`: tensors that do not fit the model are refused before any
// worker starts, each in words that name the file and what it must hold.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <torch/torch.h>

#include "backend_test_util.h"
#include "cli_runner.h"
#include "pipewright/backend/backend_error.h"
#include "pipewright/backend/tensor_data.h"

namespace pipewright {
namespace {

namespace fs = std::filesystem;

void save(const torch::Tensor& t, const fs::path& file) {
    const std::vector<char> bytes = torch::pickle_save(t);
    std::ofstream(file, std::ios::binary)
        .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// The refusal of a folder holding `inputs` and `targets` for `project`, ""
// when it is accepted.
std::string refusal(const AnalyzedProject& project, const torch::Tensor& inputs,
                    const torch::Tensor& targets) {
    const auto dir = test::temp_dir("tensor-data");
    save(inputs, dir / "inputs.pt");
    save(targets, dir / "targets.pt");
    std::string why;
    try {
        (void)backend::TensorData(dir, project, torch::kFloat32);
    } catch (const backend::BackendError& e) {
        why = e.what();
    }
    fs::remove_all(dir);
    return why;
}

TEST(TensorData, TokenIdsOutsideTheVocabularyAreRefused) {
    const AnalyzedProject gpt =
        test::analyze_file(PIPEWRIGHT_ASSETS_DIR "/examples/gpt-tiny-t2p2-cpu.json");
    const auto targets = torch::zeros({4, 64}, torch::kInt64);
    auto ids = torch::arange(4 * 64, torch::kInt64).reshape({4, 64}).remainder(512);
    EXPECT_EQ(refusal(gpt, ids, targets), "");
    ids.index_put_({1, 5}, 99999);
    const std::string high = refusal(gpt, ids, targets);
    EXPECT_NE(high.find("inputs.pt holds token ids from 0 to 99999, outside 0 to 511 (the "
                        "model's vocabulary of 512)"),
              std::string::npos)
        << high;
    ids.index_put_({1, 5}, -3);
    const std::string negative = refusal(gpt, ids, targets);
    EXPECT_NE(negative.find("token ids from -3 to"), std::string::npos) << negative;
}

TEST(TensorData, ComplexAndBoolInputsAreRefused) {
    test::MlpSpec spec;
    const AnalyzedProject mlp = test::analyze_text(test::mlp_project_json(spec));
    const auto targets = torch::randn({4, 16});
    EXPECT_EQ(refusal(mlp, torch::randn({4, 16}), targets), "");
    const std::string complex = refusal(mlp, torch::randn({4, 16}, torch::kComplexFloat), targets);
    EXPECT_NE(complex.find("ComplexFloat values; the model takes real numbers"), std::string::npos)
        << complex;
    const std::string flags = refusal(mlp, torch::ones({4, 16}, torch::kBool), targets);
    EXPECT_NE(flags.find("Bool values"), std::string::npos) << flags;
}

// Each rank loads only what its stages read: the first stage's rank the
// inputs, the last stage's the targets (a large folder was held whole by
// every worker).
TEST(TensorData, ARankLoadsOnlyThePartItsStagesRead) {
    test::MlpSpec spec;
    const AnalyzedProject mlp = test::analyze_text(test::mlp_project_json(spec));
    const auto dir = test::temp_dir("tensor-data-parts");
    save(torch::randn({20, 16}), dir / "inputs.pt");
    save(torch::randn({20, 16}), dir / "targets.pt");
    using Parts = backend::TensorData::Parts;
    const backend::TensorData first(dir, mlp, torch::kFloat32, Parts::inputs);
    const backend::TensorData last(dir, mlp, torch::kFloat32, Parts::targets);
    const backend::TensorData both(dir, mlp, torch::kFloat32);
    EXPECT_EQ(first.samples(), 20);
    EXPECT_EQ(last.samples(), 20);
    const auto a = first.batch(1);
    const auto b = last.batch(1);
    const auto c = both.batch(1);
    ASSERT_EQ(a.inputs.size(), c.inputs.size());
    for (std::size_t k = 0; k < c.inputs.size(); ++k) {
        EXPECT_TRUE(torch::equal(a.inputs[k], c.inputs[k]));
        EXPECT_FALSE(a.targets[k].defined());
        EXPECT_TRUE(torch::equal(b.targets[k], c.targets[k]));
        EXPECT_FALSE(b.inputs[k].defined());
    }
    fs::remove_all(dir);
}

}  // namespace
}  // namespace pipewright
