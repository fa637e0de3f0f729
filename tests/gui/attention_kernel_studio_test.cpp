// The studio's attention kernel box: shown for a model with flash
// attention, it edits training.attention_kernel (one undoable edit) and the
// simulation follows; a device without the kernel's rate shows under
// Problems.

#include <gtest/gtest.h>

#include <QComboBox>
#include <QLabel>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QUndoStack>
#include <nlohmann/json.hpp>

#include "document/project_document.h"
#include "editor/problems_panel.h"
#include "editor/training_bar.h"
#include "pipewright/core/input_file.h"
#include "pipewright/core/project_io.h"
#include "studio_core/simulation/simulation_runner.h"
#include "window/main_window.h"

namespace pipewright::gui {
namespace {

const QString kLlama = QStringLiteral(PIPEWRIGHT_ASSETS_DIR "/examples/llama3.1-8b-h100-node.json");

// The iteration of the simulation of the document's project as it is now.
double simulated(MainWindow& window, QSignalSpy& finished) {
    const auto current = [&window] {
        const auto& latest = window.runner()->latest();
        return latest && latest->project == window.document()->project();
    };
    while (!current()) {
        if (!finished.wait(30000)) {
            ADD_FAILURE() << "no simulation of the project as edited";
            return 0;
        }
    }
    const auto& report = window.runner()->latest()->report;
    return report ? report->iteration_time_s : 0;
}

TEST(AttentionKernelStudio, TheBoxPicksTheKernelTheSimulationPrices) {
    MainWindow window;
    window.resize(1600, 1000);
    window.runner()->setDebounceMs(10);
    ASSERT_TRUE(
        window.openFile(QStringLiteral(PIPEWRIGHT_ASSETS_DIR "/examples/resnet50-4gpu-2x2.json")));
    window.show();
    QCoreApplication::processEvents();
    QComboBox* box = window.trainingBar()->attentionKernelBox();
    EXPECT_FALSE(box->isVisible());  // no attention to run

    QSignalSpy finished(window.runner(), &SimulationRunner::finished);
    ASSERT_TRUE(window.openFile(kLlama));
    const double fa2 = simulated(window, finished);
    ASSERT_GT(fa2, 0);
    QCoreApplication::processEvents();
    ASSERT_TRUE(box->isVisible());
    EXPECT_EQ(box->currentText(), QStringLiteral("FlashAttention-2"));

    box->setCurrentIndex(box->findText(QStringLiteral("FlashAttention-3")));
    EXPECT_EQ(window.document()->project().training.attention_kernel, AttentionKernel::flash3);
    EXPECT_EQ(window.document()->undoStack()->undoText(),
              QStringLiteral("Change attention kernel"));
    const double fa3 = simulated(window, finished);
    EXPECT_LT(fa3, fa2);
    // The summary's tooltip says which rate priced it.
    auto* summary = window.findChild<QLabel*>(QStringLiteral("simulationSummary"));
    ASSERT_NE(summary, nullptr);
    EXPECT_TRUE(summary->toolTip().contains(
        QStringLiteral("Flash attention: FlashAttention-3 at 62 % / 57 % of H100-SXM's peak")))
        << summary->toolTip().toStdString();

    window.document()->undoStack()->undo();
    EXPECT_EQ(box->currentText(), QStringLiteral("FlashAttention-2"));
    EXPECT_EQ(window.document()->project().training.attention_kernel, AttentionKernel::flash2);
}

TEST(AttentionKernelStudio, ADeviceWithoutTheKernelsRateShowsUnderProblems) {
    QTemporaryDir dir;
    auto j = nlohmann::json::parse(read_text_file(kLlama.toStdString()));
    for (auto& device : j["topology"]["nodes"][0]["containers"][0]["devices"]) {
        device["spec"] = "A100-80GB";
    }
    j["training"]["attention_kernel"] = "cudnn";
    const QString path = dir.filePath(QStringLiteral("a100.json"));
    write_file_atomically(path.toStdString(), j.dump(2));
    MainWindow window;
    window.runner()->setDebounceMs(10);
    QSignalSpy finished(window.runner(), &SimulationRunner::finished);
    ASSERT_TRUE(window.openFile(path));
    QStringList problems;
    for (int i = 0; i < window.problemsPanel()->count(); ++i) {
        problems << window.problemsPanel()->model()->index(i, 0).data().toString();
    }
    ASSERT_EQ(problems.size(), 1) << problems.join('\n').toStdString();
    EXPECT_TRUE(problems.front().contains(
        QStringLiteral("cuDNN fused attention has no measured rate on node0/c0/gpu0 (A100-80GB)")))
        << problems.front().toStdString();
    // The box says what the file chose; picking FlashAttention-2 clears it.
    QComboBox* box = window.trainingBar()->attentionKernelBox();
    EXPECT_EQ(box->currentText(), QStringLiteral("cuDNN attention"));
    box->setCurrentIndex(box->findText(QStringLiteral("FlashAttention-2")));
    EXPECT_GT(simulated(window, finished), 0);
    EXPECT_EQ(window.problemsPanel()->count(), 0);
}

}  // namespace
}  // namespace pipewright::gui
