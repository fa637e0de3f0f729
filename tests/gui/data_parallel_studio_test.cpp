// The studio with data-parallel replicas: the training bar's Replicas and
// ZeRO controls, the canvas showing what the other replicas' devices run,
// and the collectives in the timeline.

#include <gtest/gtest.h>
#include <QCheckBox>
#include <QComboBox>
#include <QGraphicsRectItem>
#include <QLabel>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStatusBar>

#include "document/project_document.h"
#include "editor/training_bar.h"
#include "metrics/bar_chart.h"
#include "metrics/comparison_panel.h"
#include "studio_core/simulation/simulation_runner.h"
#include "timeline/timeline_plot.h"
#include "topology/topology_scene.h"
#include "wide_project.h"
#include "window/main_window.h"
#include "window/message_bar.h"

namespace pipewright::gui {
namespace {

class DataParallelStudioTest : public ::testing::Test {
  protected:
    void SetUp() override {
        window.resize(1400, 900);
        window.runner()->setDebounceMs(10);
        ASSERT_TRUE(window.openFile(
            QStringLiteral(PIPEWRIGHT_ASSETS_DIR "/examples/resnet50-4gpu-2x2.json")));
        window.show();
        QCoreApplication::processEvents();
    }

    bool wait_simulation() {
        QSignalSpy spy(window.runner(), &SimulationRunner::finished);
        return spy.wait(10000);
    }
    bool wait_simulation_or_failure() {
        QSignalSpy spy(window.runner(), &SimulationRunner::failed);
        return spy.wait(10000);
    }

    // The tool tips of everything drawn inside a device box.
    QStringList tips_inside(const QString& path) {
        QStringList tips;
        QGraphicsRectItem* box = window.topologyScene()->deviceItem(path);
        if (box == nullptr) {
            return tips;
        }
        for (QGraphicsItem* child : box->childItems()) {
            tips << child->toolTip();
        }
        return tips;
    }

    int collectives_in_timeline() {
        int n = 0;
        for (const auto& e : window.timelinePlot()->timeline().events) {
            n += is_collective(e.action.type) ? 1 : 0;
        }
        return n;
    }

    MainWindow window;
};

TEST_F(DataParallelStudioTest, TheBarShowsTheReplicasAndEachReplicasMicroBatches) {
    TrainingBar* bar = window.trainingBar();
    EXPECT_EQ(bar->replicasBox()->value(), 2);
    EXPECT_EQ(bar->zeroBox()->currentIndex(), 1);
    EXPECT_TRUE(bar->zeroBox()->isEnabled());
    // 240 samples, 120 per replica, in micro-batches of 20.
    EXPECT_EQ(bar->microbatchesBox()->value(), 6);
    EXPECT_EQ(collectives_in_timeline(), 2);  // one REDUCE_GRAD per stage
}

TEST_F(DataParallelStudioTest, TheOtherReplicasDevicesSayWhatTheyRun) {
    const QStringList tips = tips_inside(QStringLiteral("node0/c0/gpu3"));
    EXPECT_TRUE(tips.filter(QStringLiteral("Replica 1 runs stage 1 here")).size() == 1)
        << tips.join(QLatin1Char('\n')).toStdString();
    EXPECT_TRUE(tips.filter(QStringLiteral("node0/c0/gpu1")).size() == 1);
    // Replica 0's devices keep their draggable layer chips.
    EXPECT_TRUE(tips_inside(QStringLiteral("node0/c0/gpu0"))
                    .filter(QStringLiteral("drag to another device"))
                    .size() > 1);
}

TEST_F(DataParallelStudioTest, TooManyReplicasAreNamedAndTheSummaryComesBackOnUndo) {
    window.trainingBar()->replicasBox()->setValue(32);
    ASSERT_TRUE(wait_simulation_or_failure());
    EXPECT_TRUE(window.statusBar()->currentMessage().contains(QStringLiteral("32 replicas")))
        << window.statusBar()->currentMessage().toStdString();
    window.document()->undoStack()->undo();
    ASSERT_TRUE(wait_simulation());
    EXPECT_TRUE(window.statusBar()->currentMessage().isEmpty())
        << window.statusBar()->currentMessage().toStdString();
}

TEST_F(DataParallelStudioTest, ReplicasAndZeroAreEditsThatUndo) {
    TrainingBar* bar = window.trainingBar();
    bar->replicasBox()->setValue(1);
    EXPECT_EQ(window.document()->project().data_parallel.size, 1);
    EXPECT_FALSE(bar->zeroBox()->isEnabled());
    EXPECT_EQ(bar->microbatchesBox()->value(), 12);  // the whole batch on one pipeline
    ASSERT_TRUE(wait_simulation());
    EXPECT_EQ(window.runner()->latest()->report->data_parallel, 1);
    EXPECT_EQ(collectives_in_timeline(), 0);
    EXPECT_TRUE(
        tips_inside(QStringLiteral("node0/c0/gpu3")).filter(QStringLiteral("Replica")).empty());

    window.document()->undoStack()->undo();
    EXPECT_EQ(window.document()->project().data_parallel.size, 2);
    EXPECT_EQ(bar->replicasBox()->value(), 2);
    ASSERT_TRUE(wait_simulation());

    bar->zeroBox()->setCurrentIndex(3);
    EXPECT_EQ(window.document()->project().data_parallel.zero_stage, 3);
    ASSERT_TRUE(wait_simulation());
    // ZeRO-3 gathers and frees each stage's weights as well.
    EXPECT_EQ(collectives_in_timeline(), 6);
}

// The comparison tab's second comparison: every count of replicas of the
// four GPUs, each planned, against the layout as set; the fastest applied.
TEST_F(DataParallelStudioTest, DataTimesPipelineLayoutsAreComparedAndOneIsApplied) {
    ComparisonPanel* panel = window.comparisonPanel();
    const Project before = window.document()->project();
    QSignalSpy compared(panel, &ComparisonPanel::compared);
    emit panel->compareLayoutsRequested();  // what the button does
    ASSERT_TRUE(compared.wait(60000));
    EXPECT_EQ(panel->kind(), ComparisonPanel::Kind::layouts);
    // The layout as set, then 1, 2 and 4 replicas.
    ASSERT_EQ(panel->rows().size(), 4U);
    EXPECT_TRUE(panel->rows()[0].baseline);
    EXPECT_EQ(panel->rows()[0].label, "as set: 2 × 2 stages · ZeRO-1");
    EXPECT_EQ(panel->gainChart()->title().toStdString(), "Gain over the layout as set");
    const ChartBar& as_set = panel->gainChart()->bars().front();
    EXPECT_EQ(as_set.label, "baseline");
    double fastest = 1e300;
    std::string fastest_label;
    for (std::size_t i = 1; i < panel->rows().size(); ++i) {
        const ComparisonRow& row = panel->rows()[i];
        ASSERT_TRUE(row.report) << row.label << ": " << row.reason;
        EXPECT_FALSE(row.detail.empty());
        if (row.report->iteration_time_s < fastest) {
            fastest = row.report->iteration_time_s;
            fastest_label = row.label;
        }
    }
    EXPECT_TRUE(panel->notesText().contains(QStringLiteral("Fastest:")));
    // Every planned layout can be applied; the fastest is offered first.
    EXPECT_EQ(panel->applicableLayouts().size(), 3);
    auto* choice = panel->findChild<QComboBox*>();
    ASSERT_NE(choice, nullptr);
    EXPECT_EQ(choice->currentText().toStdString(), fastest_label);

    panel->applyLayout(choice->currentText());
    ASSERT_TRUE(wait_simulation());
    const Project& applied = window.document()->project();
    EXPECT_NE(applied, before);
    EXPECT_NEAR(window.runner()->latest()->report->iteration_time_s, fastest, 1e-12);
    window.document()->undoStack()->undo();
    EXPECT_EQ(window.document()->project(), before);

    // A layout compared for another project is not applied over this one.
    window.trainingBar()->replicasBox()->setValue(1);
    panel->applyLayout(choice->currentText());
    EXPECT_EQ(window.document()->project().data_parallel.size, 1);
    EXPECT_FALSE(window.messageBar()->isHidden());
    EXPECT_TRUE(window.messageBar()->text().contains(QStringLiteral("compare again")))
        << window.messageBar()->text().toStdString();
}

// 256 GPUs and a batch of 1,024: nine counts of replicas and the layout as
// set. The charts grow taller (and scroll) rather than draw their rows'
// labels over each other.
TEST(LayoutComparisonCharts, ManyRowsKeepTheirLabelsApart) {
    Project project = wide_project(256, 8);
    project.training.batch_size = 1024;
    ComparisonPanel panel;
    panel.resize(1100, 540);
    panel.show();
    QSignalSpy compared(&panel, &ComparisonPanel::compared);
    panel.compareLayouts(project, QStringLiteral("."));
    ASSERT_TRUE(compared.wait(120000));
    QCoreApplication::processEvents();
    ASSERT_GE(panel.rows().size(), 10U);
    for (BarChart* chart :
         {panel.timeChart(), panel.gainChart(), panel.bubbleChart(), panel.memoryChart()}) {
        chart->replot();
        const int n = static_cast<int>(chart->bars().size());
        ASSERT_GE(n, 10) << chart->objectName().toStdString();
        for (int i = 0; i + 1 < n; ++i) {
            EXPECT_FALSE(chart->labelRect(i).intersects(chart->labelRect(i + 1)))
                << chart->objectName().toStdString() << " rows " << i << " and " << i + 1;
        }
    }
}

// A project with tensor parallelism simulates in the studio, and the status
// bar says how each stage is split.
TEST(TensorParallelStudio, TheSummarySaysHowEachStageIsSplit) {
    MainWindow window;
    window.resize(1400, 900);
    window.runner()->setDebounceMs(10);
    QSignalSpy finished(window.runner(), &SimulationRunner::finished);
    ASSERT_TRUE(
        window.openFile(QStringLiteral(PIPEWRIGHT_ASSETS_DIR "/examples/gpt3-175b-p4d-t8.json")));
    window.show();
    // Opening simulates at once, or soon after.
    if (!window.runner()->latest() || !window.runner()->latest()->report) {
        ASSERT_TRUE(finished.wait(20000));
    }
    QCoreApplication::processEvents();
    ASSERT_TRUE(window.runner()->latest()->report.has_value());
    EXPECT_EQ(window.runner()->latest()->report->tensor_parallel.size, 8);
    auto* summary = window.findChild<QLabel*>(QStringLiteral("simulationSummary"));
    ASSERT_NE(summary, nullptr);
    EXPECT_TRUE(summary->text().contains(
        QStringLiteral("8 devices a stage (tensor and sequence parallel)")))
        << summary->text().toStdString();
}

// A small GPT on one node of 8 GPUs in two stages (gpu0 and gpu4): the
// training bar's Tensor box splits each stage over a group, the canvas
// draws the groups' other devices and the timeline their all-reduces.
TEST(TensorParallelStudio, TheBarSetsTheGroupsTheCanvasAndTimelineShowThem) {
    MainWindow window;
    window.resize(1400, 900);
    window.runner()->setDebounceMs(10);
    ASSERT_TRUE(window.openFile(
        QStringLiteral(PIPEWRIGHT_ASSETS_DIR "/examples/transformer-interleaved-4gpu.json")));
    window.show();
    QCoreApplication::processEvents();
    // Eight GPUs in the container, the second stage from gpu4.
    Project project = window.document()->project();
    auto& devices = project.topology.nodes[0].containers[0].devices;
    const Device first = devices[0];
    devices.resize(8, first);
    for (std::size_t g = 0; g < devices.size(); ++g) {
        devices[g].name = "gpu" + std::to_string(g);
    }
    project.placement = {project.placement.front()};
    for (std::size_t s = 1; s < window.document()->project().placement.size(); ++s) {
        const auto& more = window.document()->project().placement[s].layers;
        project.placement.front().layers.insert(project.placement.front().layers.end(),
                                                more.begin(), more.end());
    }
    auto& layers = project.placement.front().layers;
    const std::size_t half = layers.size() / 2;
    project.placement.push_back({"node0/c0/gpu4", {layers.begin() + half, layers.end()}});
    layers.resize(half);
    project.training.schedule = ScheduleChoice{"1f1b", ""};
    QSignalSpy finished(window.runner(), &SimulationRunner::finished);
    window.document()->edit(QStringLiteral("eight GPUs"), project, -1);
    ASSERT_TRUE(finished.wait(10000));
    const double whole = window.runner()->latest()->report->iteration_time_s;

    TrainingBar* bar = window.trainingBar();
    EXPECT_FALSE(bar->sequenceParallelBox()->isEnabled());
    bar->tensorParallelBox()->setValue(4);
    ASSERT_TRUE(finished.wait(10000));
    QCoreApplication::processEvents();
    EXPECT_EQ(window.document()->project().tensor_parallel.size, 4);
    EXPECT_TRUE(bar->sequenceParallelBox()->isEnabled());
    const auto& report = *window.runner()->latest()->report;
    EXPECT_EQ(report.tensor_parallel.size, 4);
    EXPECT_LT(report.iteration_time_s, whole);
    // gpu5 runs slice 2 of 4 of stage 1, and shows its leader's memory.
    QGraphicsRectItem* gpu5 = window.topologyScene()->deviceItem(QStringLiteral("node0/c0/gpu5"));
    ASSERT_NE(gpu5, nullptr);
    QStringList tips;
    for (QGraphicsItem* child : gpu5->childItems()) {
        tips << child->toolTip();
    }
    EXPECT_EQ(tips.filter(QStringLiteral("slice 2 of 4 of stage 1 runs here")).size(), 1)
        << tips.join(QLatin1Char('\n')).toStdString();
    EXPECT_EQ(tips.filter(QStringLiteral("node0/c0/gpu4 leads")).size(), 1);
    // The timeline draws the all-reduces, and its key says what they are.
    window.timelinePlot()->fitToWindow();
    window.timelinePlot()->replot(QCustomPlot::rpImmediateRefresh);
    EXPECT_GT(window.timelinePlot()->drawnSubBlocks(gui::SubBlock::tensor), 0);
    auto* legend = window.findChild<QLabel*>(QStringLiteral("timelineLegend"));
    ASSERT_NE(legend, nullptr);
    // One key, unbroken: spaces and the hyphen are non-breaking (issue 36 #15).
    EXPECT_TRUE(legend->text().contains(QStringLiteral("Tensor&nbsp;all") + QChar(0x2011) +
                                        QStringLiteral("reduce")))
        << legend->text().toStdString();
    // Collapsed groups draw their busy share in a colour of its own, with
    // its key while any group is collapsed (it was the forward's blue).
    const QString busy_key =
        QStringLiteral("busy&nbsp;share&nbsp;of&nbsp;a&nbsp;collapsed&nbsp;group");
    window.timelinePlot()->expandAllGroups();
    EXPECT_FALSE(legend->text().contains(busy_key)) << legend->text().toStdString();
    window.timelinePlot()->collapseAllGroups();
    EXPECT_TRUE(legend->text().contains(busy_key)) << legend->text().toStdString();
    EXPECT_TRUE(legend->text().contains(QStringLiteral("Tensor&nbsp;all")));
    window.timelinePlot()->expandAllGroups();
    // The second lane's name stands for its whole group.
    TimelinePlot* plot = window.timelinePlot();
    const auto& rows = plot->lanes().rows();
    int second = -1;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        if (rows[i].kind == LaneRowKind::lane && rows[i].section == 0 && rows[i].rank == 1) {
            second = static_cast<int>(i);
        }
    }
    ASSERT_GE(second, 0);
    const QRectF lane = plot->rowRect(second);
    const QString name_tip =
        plot->tooltipAt(QPointF(plot->axisRect()->left() - 10, lane.center().y()).toPoint());
    EXPECT_TRUE(name_tip.contains(
        QStringLiteral("and node0/c0/gpu5 to node0/c0/gpu7, the rest of its tensor-parallel")))
        << name_tip.toStdString();

    // Sequence parallelism from its box; undo takes both back.
    bar->sequenceParallelBox()->click();
    ASSERT_TRUE(finished.wait(10000));
    EXPECT_TRUE(window.document()->project().tensor_parallel.sequence_parallel);
    window.document()->undoStack()->undo();
    window.document()->undoStack()->undo();
    ASSERT_TRUE(finished.wait(10000));
    QCoreApplication::processEvents();
    EXPECT_EQ(window.document()->project().tensor_parallel.size, 1);
    EXPECT_EQ(bar->tensorParallelBox()->value(), 1);
    EXPECT_FALSE(legend->text().contains(QStringLiteral("Tensor&nbsp;all")));
}

}  // namespace
}  // namespace pipewright::gui
