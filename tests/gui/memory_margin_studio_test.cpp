// Simulate ▸ Keep GPU Memory Free: every GPU fits with that much to spare,
// as `--memory-margin` does; the Memory figure says so instead of cautioning,
// and the choice is kept for the next session.
#include <gtest/gtest.h>

#include <QLabel>
#include <QSettings>
#include <QSignalSpy>

#include "document/project_document.h"
#include "run/profile_controller.h"
#include "studio_core/simulation/simulation_runner.h"
#include "window/main_window.h"

namespace pipewright::gui {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
const QString kKey = QStringLiteral("memoryMarginGiB");

class MemoryMarginStudio : public ::testing::Test {
  protected:
    void SetUp() override {
        QSettings().remove(kKey);
        window.runner()->setDebounceMs(10);
        ASSERT_TRUE(window.openFile(
            QStringLiteral(PIPEWRIGHT_ASSETS_DIR "/examples/llama3.1-8b-h100-128k.json")));
        settle();
    }
    void TearDown() override { QSettings().remove(kKey); }

    // Waits until the runner has simulated what is on screen.
    void settle() {
        QSignalSpy spy(window.runner(), &SimulationRunner::finished);
        while (!window.runner()->latest() || !window.runner()->latest()->report ||
               window.runner()->busy()) {
            ASSERT_TRUE(spy.wait(20000));
        }
    }
    QString memory() const {
        const auto* label = window.findChild<QLabel*>(QStringLiteral("memoryFigure"));
        return label ? label->text() : QString();
    }
    const SimulationReport& report() const { return *window.runner()->latest()->report; }

    MainWindow window;
};

TEST_F(MemoryMarginStudio, EveryGpuKeepsTheMarginFreeAndTheFigureSaysSo) {
    // The whole 131,072-token sequence on each rank: it fits, with less to
    // spare than NCCL's buffers take.
    Project whole = window.document()->project();
    whole.context_parallel.size = 1;
    window.document()->edit(QStringLiteral("whole sequence"), whole, -1);
    settle();
    EXPECT_TRUE(report().all_fit);
    EXPECT_TRUE(memory().contains(QStringLiteral(" to spare"))) << memory().toStdString();

    // With 2 GiB kept free it no longer fits.
    window.profileController()->setMemoryMargin(2);
    settle();
    EXPECT_EQ(window.runner()->costs().memory_margin_bytes, static_cast<std::int64_t>(2 * kGiB));
    EXPECT_FALSE(report().all_fit);
    EXPECT_NEAR(static_cast<double>(report().devices[0].memory_capacity_bytes), 76.6 * kGiB, 1.0);
    EXPECT_TRUE(memory().contains(QStringLiteral("over capacity"))) << memory().toStdString();
    EXPECT_DOUBLE_EQ(QSettings().value(kKey).toDouble(), 2.0);
    // The summary names the margin, and no calibration that is not there.
    const auto* summary = window.findChild<QLabel*>(QStringLiteral("simulationSummary"));
    ASSERT_NE(summary, nullptr);
    EXPECT_TRUE(summary->text().contains(QStringLiteral("2.00 GiB kept free on each GPU")))
        << summary->text().toStdString();
    EXPECT_FALSE(summary->text().contains(QStringLiteral("calibrated")))
        << summary->text().toStdString();

    // Split again, it fits with the margin, which the figure names.
    window.document()->undoStack()->undo();
    settle();
    EXPECT_TRUE(report().all_fit);
    EXPECT_TRUE(memory().contains(QStringLiteral("every device fits, 2.00 GiB kept free")))
        << memory().toStdString();

    window.profileController()->setMemoryMargin(0);
    settle();
    EXPECT_EQ(window.runner()->costs().memory_margin_bytes, 0);
    EXPECT_NEAR(static_cast<double>(report().devices[0].memory_capacity_bytes), 78.6 * kGiB, 1.0);
}

}  // namespace
}  // namespace pipewright::gui
