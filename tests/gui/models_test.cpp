#include <gtest/gtest.h>
#include <QAbstractItemModelTester>
#include <QSignalSpy>

#include "document/project_document.h"
#include "editor/model_table_model.h"
#include "pipewright/core/project_io.h"
#include "studio_core/project/project_edit.h"

namespace pipewright::gui {
namespace {

QString example() {
    return QStringLiteral(PIPEWRIGHT_ASSETS_DIR "/examples/resnet50-2gpu-pipelined.json");
}

TEST(ModelTableModel, PassesTheItemModelTesterThroughEdits) {
    ProjectDocument document;
    QString error;
    ASSERT_TRUE(document.open(example(), &error)) << error.toStdString();
    ModelTableModel model(&document);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);

    EXPECT_EQ(model.rowCount(), 23);
    EXPECT_EQ(model.columnCount(), ModelTableModel::ColumnCount);
    EXPECT_EQ(model.data(model.index(0, ModelTableModel::Name), Qt::DisplayRole).toString(),
              QStringLiteral("conv1"));
    EXPECT_EQ(model.data(model.index(0, ModelTableModel::OutputShape), Qt::DisplayRole).toString(),
              QStringLiteral("[64, 64, 64]"));
    EXPECT_EQ(model.data(model.index(22, ModelTableModel::Device), Qt::DisplayRole).toString(),
              QStringLiteral("node0/c0/gpu1"));

    // Rows appear and disappear through document edits, undo and redo.
    document.edit(QStringLiteral("remove"), remove_layers(document.project(), 20, 22));
    EXPECT_EQ(model.rowCount(), 20);
    document.undoStack()->undo();
    EXPECT_EQ(model.rowCount(), 23);
    document.undoStack()->redo();
    EXPECT_EQ(model.rowCount(), 20);
}

TEST(ModelTableModel, EditsGoThroughTheUndoStack) {
    ProjectDocument document;
    QString error;
    ASSERT_TRUE(document.open(example(), &error));
    Project one_stage_per_device = document.project();
    one_stage_per_device.training.schedule.name = "1f1b";
    document.reset(one_stage_per_device, QStringLiteral("/tmp/x.json"));
    ModelTableModel model(&document);
    const Project before = document.project();

    EXPECT_TRUE(
        model.setData(model.index(2, ModelTableModel::Name), QStringLiteral("act"), Qt::EditRole));
    EXPECT_EQ(document.project().placement[0].layers[2], "act");
    EXPECT_TRUE(document.isModified());

    QSignalSpy refused(&model, &ModelTableModel::refused);
    EXPECT_FALSE(model.setData(model.index(5, ModelTableModel::Device),
                               QStringLiteral("node0/c0/gpu1"), Qt::EditRole));
    EXPECT_EQ(refused.count(), 1);

    document.undoStack()->undo();
    EXPECT_EQ(document.project(), before);
}

}  // namespace
}  // namespace pipewright::gui
