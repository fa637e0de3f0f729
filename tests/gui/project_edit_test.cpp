#include "studio_core/project/project_edit.h"

#include <gtest/gtest.h>

#include "pipewright/core/project_io.h"
#include "studio_core/project/layer_blocks.h"

namespace pipewright::gui {
namespace {

Project resnet() {
    auto loaded = load_project_file(std::string(PIPEWRIGHT_ASSETS_DIR) +
                                    "/examples/resnet50-2gpu-pipelined.json");
    EXPECT_TRUE(loaded.project.has_value());
    return *loaded.project;
}

constexpr const char* kGpu0 = "node0/c0/gpu0";
constexpr const char* kGpu1 = "node0/c0/gpu1";

TEST(ProjectEdit, MovingTheFirstLayerOfAStageToThePreviousDeviceShiftsTheBoundary) {
    const Project p = resnet();
    const int first_of_second = p.model.layer_index("layer3.0");
    auto result = place_layers(p, first_of_second, first_of_second, kGpu0);
    ASSERT_TRUE(result.project) << result.refusal;
    ASSERT_EQ(result.project->placement.size(), 2u);
    EXPECT_EQ(result.project->placement[0].layers.back(), "layer3.0");
    EXPECT_EQ(result.project->placement[1].layers.front(), "layer3.1");
}

TEST(ProjectEdit, SplittingAStageIsRefusedForOneStagePerDeviceSchedules) {
    Project p = resnet();
    p.training.schedule.name = "1f1b";
    const int middle = p.model.layer_index("layer1.1");
    auto result = place_layers(p, middle, middle, kGpu1);
    EXPECT_FALSE(result.project);
    EXPECT_NE(result.refusal.find("model order"), std::string::npos) << result.refusal;
}

TEST(ProjectEdit, SplittingAStageIsAllowedForInterleavedSchedules) {
    Project p = resnet();
    p.training.schedule.name = "interleaved-1f1b";
    const int middle = p.model.layer_index("layer1.1");
    auto result = place_layers(p, middle, middle, kGpu1);
    ASSERT_TRUE(result.project) << result.refusal;
    EXPECT_EQ(result.project->placement.size(), 4u);
}

TEST(ProjectEdit, GpipeRunsAnyPlacement) {
    const Project p = resnet();
    const int middle = p.model.layer_index("layer1.1");
    EXPECT_TRUE(place_layers(p, middle, middle, kGpu1).project);
}

TEST(ProjectEdit, ADeviceGivenTwoStagesApartIsAllowedWhereTheScheduleRunsThemAndSaidSo) {
    const Project p = resnet();  // gpipe: gpu0 holds conv1 … layer2.3, gpu1 the rest
    const auto moved = place_layers(p, 0, 0, kGpu1);
    ASSERT_TRUE(moved.project) << moved.refusal;
    ASSERT_EQ(moved.project->placement.size(), 3U);
    EXPECT_EQ(moved.project->placement[0].device, kGpu1);  // conv1 alone: stage 0
    EXPECT_EQ(moved.note, std::string(kGpu1) +
                              " now holds stages 0 and 2, which the gpipe schedule runs in turn; "
                              "the pipeline (and the timeline) starts at " +
                              kGpu1 + ".");
    // A move along a stage boundary says nothing.
    const int last_of_gpu0 = p.model.layer_index("layer2.3");
    EXPECT_TRUE(place_layers(p, last_of_gpu0, last_of_gpu0, kGpu1).note.empty());
}

TEST(ProjectEdit, UnknownDeviceIsRefused) {
    auto result = place_layers(resnet(), 0, 0, "node9/c0/gpu0");
    EXPECT_FALSE(result.project);
}

TEST(ProjectEdit, InsertedLayerJoinsThePreviousLayersDevice) {
    const Project p = resnet();
    const int at = p.model.layer_index("layer3.0");
    auto layers = make_palette_entry("layer:relu", {1024, 8, 8});
    ASSERT_EQ(layers.size(), 1u);
    const Project out = insert_layer(p, at, layers.front());
    EXPECT_EQ(out.model.layers.size(), p.model.layers.size() + 1);
    EXPECT_EQ(out.placement[0].layers.back(), "relu_1");  // "relu" is taken
    EXPECT_EQ(layer_devices(out)[static_cast<std::size_t>(at)], kGpu0);
}

TEST(ProjectEdit, RemoveAndRenameKeepThePlacementConsistent) {
    const Project p = resnet();
    Project out = remove_layers(p, 0, 3);
    EXPECT_EQ(out.placement[0].layers.front(), "layer1.0");
    auto renamed = rename_layer(out, 0, "entry");
    ASSERT_TRUE(renamed.project);
    EXPECT_EQ(renamed.project->placement[0].layers.front(), "entry");
    EXPECT_FALSE(rename_layer(out, 0, "fc").project);
}

TEST(ProjectEdit, RenamedDeviceCarriesItsStages) {
    auto result = rename_device(resnet(), kGpu1, "big");
    ASSERT_TRUE(result.project);
    EXPECT_EQ(result.project->placement[1].device, "node0/c0/big");
}

TEST(ProjectEdit, RemovedDeviceLeavesItsLayersUnplaced) {
    const Project out = remove_device(resnet(), kGpu1);
    EXPECT_EQ(out.placement.size(), 1u);
    EXPECT_EQ(layer_devices(out).back(), "");
}

TEST(ProjectEdit, ChangingALayerTypeKeepsTheNameAndRefitsTheParameters) {
    Project p = resnet();
    p.model.layers[2].cost = CostOverride{1.0, {}, {}};
    auto result = change_layer_type(p, 2, "linear", {64, 64, 64});
    ASSERT_TRUE(result.project) << result.refusal;
    const LayerSpec& layer = result.project->model.layers[2];
    EXPECT_EQ(layer.name, p.model.layers[2].name);
    EXPECT_EQ(layer.type, "linear");
    EXPECT_EQ(layer.params["in_features"], 64);
    EXPECT_FALSE(layer.cost);  // measured for the old type
    EXPECT_EQ(result.project->placement, p.placement);
    EXPECT_FALSE(change_layer_type(p, 2, "no_such_type", {64}).project);
    EXPECT_FALSE(change_layer_type(p, 999, "relu", {64}).project);
}

TEST(LayerBlocks, MlpFitsTheInputWidth) {
    auto layers = make_palette_entry("block:mlp", {128, 768});
    ASSERT_EQ(layers.size(), 3u);
    EXPECT_EQ(layers[0].params["in_features"], 768);
    EXPECT_EQ(layers[0].params["out_features"], 4 * 768);
    EXPECT_EQ(layers[2].params["out_features"], 768);
    EXPECT_TRUE(make_palette_entry("block:nope", {}).empty());
}

}  // namespace
}  // namespace pipewright::gui
