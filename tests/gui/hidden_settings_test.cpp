// Issue 36 #10: no hidden settings in the training bar. The micro-batch
// size is shown beside the count; an edit that changes the count through
// the file's micro-batch size says so; and a value the file gives but that
// cannot be used shows as such, not as the default that stands in for it.
#include <gtest/gtest.h>

#include <QLineEdit>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStatusBar>
#include <QTemporaryDir>
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

// The two-GPU example with its training settings changed by `edit`,
// written to `dir`.
QString variant(const QTemporaryDir& dir, const std::function<void(nlohmann::json&)>& edit) {
    auto j =
        nlohmann::json::parse(read_text_file(PIPEWRIGHT_ASSETS_DIR "/examples/dummy-2gpu.json"));
    edit(j);
    const QString path = dir.filePath(QStringLiteral("p.json"));
    write_file_atomically(path.toStdString(), j.dump(2));
    return path;
}

QStringList problems(const MainWindow& window) {
    QStringList out;
    for (int i = 0; i < window.problemsPanel()->count(); ++i) {
        out << window.problemsPanel()->model()->index(i, 0).data().toString();
    }
    return out;
}

QString shown(const QSpinBox* box) {
    return box->findChild<QLineEdit*>()->text();
}

TEST(HiddenSettings, TheMicroBatchSizeIsShownBesideTheCount) {
    QTemporaryDir dir;
    MainWindow window;
    ASSERT_TRUE(window.openFile(variant(dir, [](nlohmann::json&) {})));  // 32 in 4
    QSpinBox* count = window.trainingBar()->microbatchesBox();
    EXPECT_EQ(shown(count), QStringLiteral("4 of 8"));
    count->setValue(8);
    EXPECT_EQ(shown(count), QStringLiteral("8 of 4"));
    count->setValue(5);  // does not divide 32
    EXPECT_EQ(shown(count), QStringLiteral("5 of ?"));
    EXPECT_TRUE(count->toolTip().contains(QStringLiteral("does not split into 5 equal")))
        << count->toolTip().toStdString();
}

TEST(HiddenSettings, ABatchEditThatChangesTheCountThroughTheFilesSizeSaysSo) {
    QTemporaryDir dir;
    MainWindow window;
    ASSERT_TRUE(window.openFile(variant(dir, [](nlohmann::json& j) {
        j["training"]["batch_size"] = 120;
        j["training"].erase("microbatches");
        j["training"]["microbatch_size"] = 20;
    })));
    QSpinBox* count = window.trainingBar()->microbatchesBox();
    EXPECT_EQ(shown(count), QStringLiteral("6 of 20"));
    EXPECT_TRUE(count->toolTip().contains(QStringLiteral("fixed by the project")))
        << count->toolTip().toStdString();
    window.trainingBar()->batchSizeBox()->setValue(240);
    EXPECT_EQ(shown(count), QStringLiteral("12 of 20"));
    EXPECT_TRUE(window.statusBar()->currentMessage().startsWith(
        QStringLiteral("Micro-batches 6 → 12: the project fixes micro-batches of 20 samples")))
        << window.statusBar()->currentMessage().toStdString();
}

TEST(HiddenSettings, ARefusedBatchShowsAsRefusedWithoutKnockOnsUntilOneIsSet) {
    QTemporaryDir dir;
    MainWindow window;
    window.runner()->setDebounceMs(10);
    ASSERT_TRUE(
        window.openFile(variant(dir, [](nlohmann::json& j) { j["training"]["batch_size"] = -5; })));
    QSpinBox* batch = window.trainingBar()->batchSizeBox();
    EXPECT_EQ(shown(batch), QStringLiteral("—"));
    // Only the file's own problem: none about the batch of 1 standing in.
    EXPECT_EQ(problems(window),
              QStringList{QStringLiteral("training.batch_size: must be at least 1, got -5")});
    ASSERT_TRUE(window.runner()->latest());
    EXPECT_FALSE(window.runner()->latest()->ok());  // no timeline of a batch the file lacks
    {
        // What the status bar says of it: not "stopped on 0 problems".
        SimulationRunner runner;
        QSignalSpy failed(&runner, &SimulationRunner::failed);
        runner.runSynchronously(window.document()->project(), window.document()->baseDir(),
                                window.document()->loadDiagnostics());
        ASSERT_EQ(failed.size(), 1);
        EXPECT_EQ(failed.front().front().toString(),
                  QStringLiteral("Not simulated: fix the problems of the file listed under "
                                 "Problems"));
    }

    QSignalSpy done(window.runner(), &SimulationRunner::finished);
    batch->setValue(64);
    ASSERT_TRUE(done.wait(10000));
    EXPECT_EQ(shown(batch), QStringLiteral("64"));
    EXPECT_TRUE(problems(window).isEmpty()) << problems(window).join('\n').toStdString();
    EXPECT_TRUE(window.runner()->latest()->ok());
}

}  // namespace
}  // namespace pipewright::gui
