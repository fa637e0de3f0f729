// The studio with context parallelism: the Parallelism bar's Context box,
// shown only for a model with attention, edits context_parallel.size; the
// timeline draws the wait for keys and values that attention did not hide.

#include <gtest/gtest.h>
#include <QGraphicsRectItem>
#include <QLabel>
#include <QSignalSpy>
#include <QSpinBox>
#include <QUndoStack>

#include "document/project_document.h"
#include "editor/training_bar.h"
#include "studio_core/simulation/simulation_runner.h"
#include "timeline/timeline_plot.h"
#include "topology/topology_scene.h"
#include "window/main_window.h"

namespace pipewright::gui {
namespace {

TEST(ContextParallelStudio, TheContextBoxSplitsEverySequenceOverReplicas) {
    MainWindow window;
    window.resize(1400, 900);
    window.runner()->setDebounceMs(10);
    ASSERT_TRUE(
        window.openFile(QStringLiteral(PIPEWRIGHT_ASSETS_DIR "/examples/resnet50-4gpu-2x2.json")));
    window.show();
    QCoreApplication::processEvents();
    TrainingBar* bar = window.trainingBar();
    // A model without attention has no sequence to split: no box.
    EXPECT_FALSE(bar->contextParallelBox()->isVisible());

    QSignalSpy finished(window.runner(), &SimulationRunner::finished);
    ASSERT_TRUE(window.openFile(
        QStringLiteral(PIPEWRIGHT_ASSETS_DIR "/examples/llama3.1-8b-h100-128k.json")));
    // Opening simulates at once, or soon after.
    const auto opened = [&window] {
        const auto& latest = window.runner()->latest();
        return latest && latest->report && latest->report->context_parallel.size == 2;
    };
    if (!opened()) {
        ASSERT_TRUE(finished.wait(20000));
    }
    QCoreApplication::processEvents();
    ASSERT_TRUE(opened());
    ASSERT_TRUE(bar->contextParallelBox()->isVisible());
    EXPECT_EQ(bar->contextParallelBox()->value(), 2);
    auto* summary = window.findChild<QLabel*>(QStringLiteral("simulationSummary"));
    ASSERT_NE(summary, nullptr);
    EXPECT_TRUE(summary->text().contains(QStringLiteral("2 replicas, 2 to a sequence")))
        << summary->text().toStdString();
    ASSERT_TRUE(window.runner()->latest()->report);
    EXPECT_TRUE(window.runner()->latest()->report->all_fit);

    // The canvas says which part of every sequence each replica's device runs.
    QStringList tips;
    for (const QString& path : {QStringLiteral("node0/c0/gpu0"), QStringLiteral("node2/c0/gpu0")}) {
        QGraphicsRectItem* box = window.topologyScene()->deviceItem(path);
        ASSERT_NE(box, nullptr) << path.toStdString();
        for (QGraphicsItem* child : box->childItems()) {
            tips << child->toolTip();
        }
    }
    EXPECT_FALSE(tips.filter(QStringLiteral("it runs part 1 of 2 of every sequence")).isEmpty())
        << tips.join(QLatin1Char('\n')).toStdString();
    EXPECT_FALSE(tips.filter(QStringLiteral("it runs part 2 of 2 of every sequence")).isEmpty())
        << tips.join(QLatin1Char('\n')).toStdString();

    // Gathered before attention, the keys and values are waited for: the
    // timeline draws that inside the blocks, and its key says what it is.
    Project gathered = window.document()->project();
    gathered.context_parallel.exchange = ContextExchange::all_gather;
    window.document()->edit(QStringLiteral("all-gather"), gathered, -1);
    ASSERT_TRUE(finished.wait(20000));
    EXPECT_GT(window.runner()->latest()->report->stages[0].context_forward_s, 0);
    window.timelinePlot()->fitToWindow();
    window.timelinePlot()->replot(QCustomPlot::rpImmediateRefresh);
    EXPECT_GT(window.timelinePlot()->drawnSubBlocks(gui::SubBlock::context), 0);
    auto* legend = window.findChild<QLabel*>(QStringLiteral("timelineLegend"));
    ASSERT_NE(legend, nullptr);
    EXPECT_TRUE(legend->text().contains(QStringLiteral("Keys&nbsp;and&nbsp;values&nbsp;awaited")))
        << legend->text().toStdString();

    // Without it each GPU of the first stage keeps the whole sequence's
    // activations: close to twice as much.
    const auto split =
        static_cast<double>(window.runner()->latest()->report->devices[0].peak_memory_bytes);
    bar->contextParallelBox()->setValue(1);
    ASSERT_TRUE(finished.wait(20000));
    EXPECT_EQ(window.document()->project().context_parallel.size, 1);
    EXPECT_GT(static_cast<double>(window.runner()->latest()->report->devices[0].peak_memory_bytes),
              1.7 * split);
    // It fits, but with less to spare than NCCL's buffers take: the Memory
    // figure says so, and its tooltip who and why.
    auto* memory = window.findChild<QLabel*>(QStringLiteral("memoryFigure"));
    ASSERT_NE(memory, nullptr);
    EXPECT_TRUE(memory->text().contains(QStringLiteral("every device fits, ")) &&
                memory->text().contains(QStringLiteral(" to spare")))
        << memory->text().toStdString();
    EXPECT_TRUE(memory->toolTip().startsWith(QStringLiteral("node0/c0/gpu0 has ")))
        << memory->toolTip().toStdString();
    window.timelinePlot()->replot(QCustomPlot::rpImmediateRefresh);
    EXPECT_EQ(window.timelinePlot()->drawnSubBlocks(gui::SubBlock::context), 0);
    // One undo step puts it back.
    window.document()->undoStack()->undo();
    ASSERT_TRUE(finished.wait(20000));
    EXPECT_EQ(memory->text().contains(QStringLiteral(" to spare")), false);
    EXPECT_EQ(window.document()->project().context_parallel.size, 2);
    EXPECT_EQ(bar->contextParallelBox()->value(), 2);
}

}  // namespace
}  // namespace pipewright::gui
