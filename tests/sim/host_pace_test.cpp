// Where the simulated kernels come faster than an eager framework's host
// issues them (docs/validation.md, vTrain's measured runs): simulate and the
// studio say so.
#include "pipewright/sim/host_pace.h"
#include "analyzed_json.h"

#include <gtest/gtest.h>

#include "decoder_project_json.h"
#include "pipewright/core/project_io.h"
#include "pipewright/sim/cost_model.h"

namespace pipewright {
namespace {

using nlohmann::json;

// A GPT block of `hidden` over `sequence` tokens on two stages of `spec`.
json gpt(int hidden, int sequence, int microbatch_size, const std::string& spec) {
    testing::DecoderProject p;
    p.block = {{"type", "transformer_block"}, {"hidden", hidden}, {"heads", 16}};
    p.sequence = sequence;
    p.hidden = hidden;
    p.device_spec = spec;
    p.link = {{"bandwidth_GBps", 300}, {"latency_us", 5}};
    p.training = {{"batch_size", 4 * microbatch_size},
                  {"microbatch_size", microbatch_size},
                  {"schedule", "1f1b"},
                  {"dtype", "float16"},
                  {"activation_checkpointing", true},
                  {"optimizer", {{"type", "adamw"}}}};
    return testing::decoder_project_json(p);
}

AnalyzedProject analyze(const json& j) {
    return testing::analyzed_json(j);
}

TEST(HostPace, ASmallGptsKernelsAreShorterThanAHostIssuesThem) {
    // vTrain's smallest runs: hidden 1024, sequence 1024, one sequence a
    // micro-batch, which took at least 2.98 ms a layer where their kernels
    // take well under a millisecond.
    const AnalyzedProject project = analyze(gpt(1024, 1024, 1, "A100-80GB"));
    const CostModelOptions costs;
    const auto kernels = stage_kernels(project, costs);
    const auto pace = shortest_kernels(project, kernels);
    ASSERT_TRUE(pace);
    EXPECT_LT(pace->seconds_per_kernel, kMeasuredHostSecondsPerKernel);
    // The pace is the stage's kernel time over its launches.
    const StageKernels& stage = kernels.at(static_cast<std::size_t>(pace->stage));
    int launches = 0;
    for (const PassKernels* pass :
         {&stage.forward, &stage.backward_input, &stage.backward_weight}) {
        for (const KernelShare& k : pass->kernels) {
            launches += k.count;
        }
    }
    EXPECT_EQ(pace->launches, launches);
    EXPECT_NEAR(
        pace->seconds_per_kernel,
        (stage.forward.seconds + stage.backward_input.seconds + stage.backward_weight.seconds) /
            launches,
        1e-15);
    // No stage has shorter kernels than the one named.
    for (std::size_t s = 0; s < kernels.size(); ++s) {
        int n = 0;
        for (const PassKernels* pass :
             {&kernels[s].forward, &kernels[s].backward_input, &kernels[s].backward_weight}) {
            for (const KernelShare& k : pass->kernels) {
                n += k.count;
            }
        }
        const double seconds = kernels[s].forward.seconds + kernels[s].backward_input.seconds +
                               kernels[s].backward_weight.seconds;
        EXPECT_GE(seconds / n, pace->seconds_per_kernel - 1e-15);
    }

    const auto warning = host_pace_warning(project, kernels);
    ASSERT_TRUE(warning);
    EXPECT_NE(warning->find("stage " + std::to_string(pace->stage) + " (" + pace->device + ")"),
              std::string::npos)
        << *warning;
    EXPECT_NE(warning->find("paced by its host"), std::string::npos) << *warning;
    EXPECT_NE(warning->find("55.0 µs"), std::string::npos) << *warning;
    // A layout not yet analysed (a plan's) is analysed and judged alike.
    EXPECT_EQ(host_pace_warning(project.project, {}, costs), warning);
}

TEST(HostPace, LargeKernelsKeepTheHostBehind) {
    // Hidden 8192 over 4,096 tokens: every GEMM runs for milliseconds.
    const AnalyzedProject project = analyze(gpt(8192, 4096, 2, "A100-80GB"));
    const auto kernels = stage_kernels(project, {});
    const auto pace = shortest_kernels(project, kernels);
    ASSERT_TRUE(pace);
    EXPECT_GT(pace->seconds_per_kernel, kMeasuredHostSecondsPerKernel);
    EXPECT_FALSE(host_pace_warning(project, kernels));
}

TEST(HostPace, OnlyGpusPricedByKernelsAreJudged) {
    // CPU workers: the kernels are the host's own work.
    AnalyzedProject project = analyze(gpt(1024, 1024, 1, "cpu"));
    EXPECT_FALSE(shortest_kernels(project, stage_kernels(project, {})));

    // Measured layers have no kernels to judge: a profile covering every
    // layer says nothing, one covering stage 0 leaves stage 1 judged.
    project = analyze(gpt(1024, 1024, 1, "A100-80GB"));
    Profile profile;
    profile.microbatch_size = 1;
    for (const LayerSpec& layer : project.project.model.layers) {
        profile.layers.push_back({layer.name, 1.0, 1.0, 1.0, std::nullopt});
    }
    CostModelOptions costs;
    costs.profile = &profile;
    EXPECT_FALSE(shortest_kernels(project, stage_kernels(project, costs)));
    profile.layers.resize(2);  // embed and block0: stage 0
    const auto pace = shortest_kernels(project, stage_kernels(project, costs));
    ASSERT_TRUE(pace);
    EXPECT_EQ(pace->stage, 1);
    EXPECT_EQ(pace->device, "node0/c0/gpu1");

    // The flat model has no kernels either.
    costs = {};
    costs.flat_efficiency = 0.5;
    EXPECT_FALSE(host_pace_warning(project, stage_kernels(project, costs)));
}

}  // namespace
}  // namespace pipewright
