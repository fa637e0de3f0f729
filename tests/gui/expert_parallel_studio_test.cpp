// The studio with a mixture of experts: the Parallelism bar's Experts box,
// shown only for such a model, edits expert_parallel.size and the
// simulation follows.

#include <gtest/gtest.h>
#include <QGraphicsRectItem>
#include <QLabel>
#include <QSignalSpy>
#include <QSpinBox>
#include <QUndoStack>

#include "document/project_document.h"
#include "editor/training_bar.h"
#include "pipewright/core/project_io.h"
#include "studio_core/simulation/simulation_runner.h"
#include "timeline/timeline_plot.h"
#include "topology/topology_scene.h"
#include "window/main_window.h"

namespace pipewright::gui {
namespace {

using nlohmann::json;

// Two replicas of a two-stage pipeline on 4 GPUs whose blocks have 4
// experts each.
Project moe_project() {
    const json block = {{"type", "transformer_block"},
                        {"hidden", 256},
                        {"heads", 4},
                        {"experts", 4},
                        {"top_k", 2},
                        {"activation", "swiglu"},
                        {"bias", false},
                        {"qkv_bias", false}};
    json b0 = block;
    b0["name"] = "block0";
    json b1 = block;
    b1["name"] = "block1";
    json gpus = json::array();
    for (int g = 0; g < 4; ++g) {
        gpus.push_back({{"name", "gpu" + std::to_string(g)}, {"spec", "H100-SXM"}});
    }
    const json j = {
        {"format", "pipewright-project"},
        {"version", 1},
        {"model",
         {{"name", "moe"},
          {"input", {{"shape", {64, 256}}, {"dtype", "float32"}}},
          {"loss", "mse"},
          {"layers", {b0, b1}}}},
        {"topology",
         {{"nodes",
           json::array({{{"name", "node0"},
                         {"containers", json::array({{{"name", "c0"}, {"devices", gpus}}})}}})}}},
        {"placement", json::array({{{"device", "node0/c0/gpu0"}, {"layers", {"block0"}}},
                                   {{"device", "node0/c0/gpu1"}, {"layers", {"block1"}}}})},
        {"training",
         {{"batch_size", 16}, {"microbatches", 4}, {"schedule", "1f1b"}, {"dtype", "bfloat16"}}},
        {"data_parallel", {{"size", 2}}}};
    Diagnostics d;
    auto p = project_from_json(j, d);
    EXPECT_TRUE(p) << d.format();
    return p.value_or(Project{});
}

TEST(ExpertParallelStudio, TheExpertsBoxSplitsTheExpertsOfAMixtureOfExperts) {
    MainWindow window;
    window.resize(1400, 900);
    window.runner()->setDebounceMs(10);
    ASSERT_TRUE(
        window.openFile(QStringLiteral(PIPEWRIGHT_ASSETS_DIR "/examples/resnet50-4gpu-2x2.json")));
    window.show();
    QCoreApplication::processEvents();
    TrainingBar* bar = window.trainingBar();
    // A model without experts has nothing to split: no box.
    EXPECT_FALSE(bar->expertParallelBox()->isVisible());

    QSignalSpy finished(window.runner(), &SimulationRunner::finished);
    window.document()->edit(QStringLiteral("experts"), moe_project(), -1);
    ASSERT_TRUE(finished.wait(10000));
    QCoreApplication::processEvents();
    ASSERT_TRUE(bar->expertParallelBox()->isVisible());
    EXPECT_EQ(bar->expertParallelBox()->value(), 1);
    const double held_before =
        static_cast<double>(window.runner()->latest()->report->stages[0].expert_parameters);

    bar->expertParallelBox()->setValue(2);
    ASSERT_TRUE(finished.wait(10000));
    EXPECT_EQ(window.document()->project().expert_parallel.size, 2);
    const auto& report = *window.runner()->latest()->report;
    EXPECT_EQ(report.expert_parallel.size, 2);
    EXPECT_EQ(static_cast<double>(report.stages[0].expert_parameters), held_before / 2);
    EXPECT_GT(report.stages[0].expert_forward_s, 0);
    // The timeline draws them inside the blocks, and its key says what they are.
    window.timelinePlot()->fitToWindow();
    window.timelinePlot()->replot(QCustomPlot::rpImmediateRefresh);
    EXPECT_GT(window.timelinePlot()->drawnSubBlocks(gui::SubBlock::experts), 0);
    auto* legend = window.findChild<QLabel*>(QStringLiteral("timelineLegend"));
    ASSERT_NE(legend, nullptr);
    EXPECT_TRUE(legend->text().contains(QStringLiteral("Experts'&nbsp;all") + QChar(0x2011) +
                                        QStringLiteral("to") + QChar(0x2011) +
                                        QStringLiteral("all")))
        << legend->text().toStdString();
    // The canvas says which share of the experts each replica's device holds.
    QStringList tips;
    for (const QString& path : {QStringLiteral("node0/c0/gpu0"), QStringLiteral("node0/c0/gpu2"),
                                QStringLiteral("node0/c0/gpu3")}) {
        QGraphicsRectItem* box = window.topologyScene()->deviceItem(path);
        ASSERT_NE(box, nullptr) << path.toStdString();
        for (QGraphicsItem* child : box->childItems()) {
            tips << child->toolTip();
        }
    }
    EXPECT_EQ(tips.filter(QStringLiteral("share 1 of 2 of its experts is here")).size(), 1)
        << tips.join(QLatin1Char('\n')).toStdString();
    EXPECT_EQ(tips.filter(QStringLiteral("holds share 2 of 2 of each mixture-of-experts")).size(),
              2)
        << tips.join(QLatin1Char('\n')).toStdString();
    // One undo step puts it back.
    window.document()->undoStack()->undo();
    EXPECT_EQ(window.document()->project().expert_parallel.size, 1);
    EXPECT_EQ(bar->expertParallelBox()->value(), 1);
}

}  // namespace
}  // namespace pipewright::gui
