// File ▸ Import Model…: the dialog, driven as a user would, runs the
// real command line on a TorchScript file written by python3-torch: Preview
// lists the layers, a module that does not split is explained, and Import
// writes a project that loads.
#include <gtest/gtest.h>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

#include "document/project_document.h"
#include "editor/model_table_model.h"
#include "pipewright/core/project_io.h"
#include "real_cli.h"
#include "window/import_dialog.h"

namespace pipewright::gui {
namespace {

const QString kFixtures = QStringLiteral(PIPEWRIGHT_TORCHSCRIPT_FIXTURES);

template <typename T>
T* child(QWidget& parent, const char* name) {
    auto* w = parent.findChild<T*>(QString::fromLatin1(name));
    EXPECT_NE(w, nullptr) << name;
    return w;
}

TEST(ImportDialogTest, PreviewListsTheLayersAndImportWritesTheProject) {
    if (kFixtures.isEmpty() || !PIPEWRIGHT_TEST_HAVE_BACKEND) {
        GTEST_SKIP() << "no TorchScript fixtures (python3-torch) or no backend in this build";
    }
    QTemporaryDir dir;
    const QString module = QDir(dir.path()).filePath(QStringLiteral("cnn.pt"));
    ASSERT_TRUE(QFile::copy(kFixtures + QStringLiteral("/cnn.pt"), module));
    ImportDialog dialog(cli_path(), dir.path());
    dialog.show();
    QTest::keyClicks(child<QLineEdit>(dialog, "importModule"), module);
    EXPECT_EQ(child<QLineEdit>(dialog, "importOut")->text(),
              QDir(dir.path()).filePath(QStringLiteral("cnn.json")));
    QTest::keyClicks(child<QLineEdit>(dialog, "importShape"), QStringLiteral("3,16,16"));
    child<QSpinBox>(dialog, "importDevices")->setValue(2);
    EXPECT_EQ(dialog.request().device_spec, QStringLiteral("cpu"));
    EXPECT_TRUE(import_arguments(dialog.request(), true).contains(QStringLiteral("--dry-run")));

    QSignalSpy shown(&dialog, &ImportDialog::previewShown);
    QTest::mouseClick(child<QPushButton>(dialog, "importPreviewButton"), Qt::LeftButton);
    ASSERT_TRUE(shown.wait(60000));
    auto* table = child<QTableWidget>(dialog, "importPreview");
    ASSERT_EQ(table->rowCount(), 7);
    EXPECT_EQ(table->item(5, 0)->text(), QStringLiteral("avgpool"));
    EXPECT_EQ(table->item(5, 1)->text(), QStringLiteral("AdaptiveAvgPool2d, then flatten"));
    EXPECT_EQ(table->item(6, 2)->text(), QStringLiteral("[5]"));
    // Where each layer went, and each stage's work: a lopsided split shows.
    EXPECT_EQ(table->item(0, 5)->text(), QStringLiteral("0"));
    EXPECT_EQ(table->item(6, 5)->text(), QStringLiteral("1"));
    EXPECT_FALSE(table->item(0, 4)->text().isEmpty());
    const QString status = child<QLabel>(dialog, "importStatus")->text();
    EXPECT_TRUE(
        status.startsWith(QStringLiteral("7 layers, placed as 2 stages. Forward FLOPs "
                                         "per sample by stage: ")))
        << status.toStdString();
    EXPECT_FALSE(QFile::exists(QDir(dir.path()).filePath(QStringLiteral("cnn.json"))))
        << "a preview writes nothing";

    QSignalSpy done(&dialog, &QDialog::accepted);
    QTest::mouseClick(child<QPushButton>(dialog, "importButton"), Qt::LeftButton);
    ASSERT_TRUE(done.wait(60000)) << child<QLabel>(dialog, "importStatus")->text().toStdString();
    const auto loaded = load_project_file(dialog.projectFile().toStdString());
    ASSERT_TRUE(loaded.project);
    EXPECT_EQ(loaded.project->model.layers.size(), 7u);
    EXPECT_EQ(loaded.project->placement.size(), 2u);

    // Opened, the model table names each layer's class; its type cannot be
    // changed to a catalog one (import again instead).
    ProjectDocument document;
    QString error;
    ASSERT_TRUE(document.open(dialog.projectFile(), &error)) << error.toStdString();
    ModelTableModel model(&document);
    const QModelIndex type = model.index(0, ModelTableModel::Type);
    EXPECT_EQ(model.data(type, Qt::DisplayRole).toString(), QStringLiteral("Conv2d (TorchScript)"));
    EXPECT_FALSE(model.flags(type) & Qt::ItemIsEditable);
    EXPECT_TRUE(model.data(type, Qt::ToolTipRole).toString().contains(QStringLiteral("cnn.pt")));
    EXPECT_EQ(model.data(model.index(4, ModelTableModel::OutputShape), Qt::DisplayRole).toString(),
              QStringLiteral("[16, 4, 4]"));
}

// A Hugging Face config: the module's fields give way to the sequence and
// the nodes, and Preview sums the model up (the front end reads it: no
// backend needed).
TEST(ImportDialogTest, AConfigIsPreviewedAndImportedAsADecoder) {
    QTemporaryDir dir;
    const QString config = QDir(dir.path()).filePath(QStringLiteral("llama-3.1-8b.json"));
    ASSERT_TRUE(
        QFile::copy(QStringLiteral(PIPEWRIGHT_ASSETS_DIR "/models/llama-3.1-8b.json"), config));
    ImportDialog dialog(cli_path(), dir.path());
    dialog.show();
    QTest::keyClicks(child<QLineEdit>(dialog, "importModule"), config);
    EXPECT_EQ(child<QLineEdit>(dialog, "importOut")->text(),
              QDir(dir.path()).filePath(QStringLiteral("llama-3.1-8b-project.json")));
    EXPECT_FALSE(child<QLineEdit>(dialog, "importShape")->isEnabled());
    EXPECT_TRUE(child<QSpinBox>(dialog, "importSeqLen")->isEnabled());
    EXPECT_EQ(dialog.request().device_spec, QStringLiteral("H100-SXM"));
    child<QSpinBox>(dialog, "importDevices")->setValue(4);
    child<QSpinBox>(dialog, "importNodes")->setValue(2);
    child<QSpinBox>(dialog, "importSeqLen")->setValue(2048);
    EXPECT_TRUE(import_arguments(dialog.request(), false).contains(QStringLiteral("--nodes")));

    QSignalSpy shown(&dialog, &ImportDialog::previewShown);
    QTest::mouseClick(child<QPushButton>(dialog, "importPreviewButton"), Qt::LeftButton);
    ASSERT_TRUE(shown.wait(60000)) << child<QLabel>(dialog, "importStatus")->text().toStdString();
    const QString status = child<QLabel>(dialog, "importStatus")->text();
    EXPECT_TRUE(status.startsWith(QStringLiteral("LlamaForCausalLM: 32 blocks, ")))
        << status.toStdString();
    EXPECT_TRUE(status.contains(QStringLiteral("sequence 2048; placed as 8 stages")))
        << status.toStdString();

    QSignalSpy done(&dialog, &QDialog::accepted);
    QTest::mouseClick(child<QPushButton>(dialog, "importButton"), Qt::LeftButton);
    ASSERT_TRUE(done.wait(60000)) << child<QLabel>(dialog, "importStatus")->text().toStdString();
    const auto loaded = load_project_file(dialog.projectFile().toStdString());
    ASSERT_TRUE(loaded.project);
    EXPECT_EQ(loaded.project->model.layers.size(), 35u);
    EXPECT_EQ(loaded.project->topology.nodes.size(), 2u);
}

TEST(ImportDialogTest, AWrongInputShapeIsNamedByTheDialogsOwnFields) {
    if (kFixtures.isEmpty() || !PIPEWRIGHT_TEST_HAVE_BACKEND) {
        GTEST_SKIP() << "no TorchScript fixtures (python3-torch) or no backend in this build";
    }
    ImportDialog dialog(cli_path(), kFixtures);
    dialog.show();
    QTest::keyClicks(child<QLineEdit>(dialog, "importModule"),
                     kFixtures + QStringLiteral("/cnn.pt"));
    QTest::keyClicks(child<QLineEdit>(dialog, "importShape"), QStringLiteral("7"));
    QSignalSpy failed(&dialog, &ImportDialog::failed);
    QTest::mouseClick(child<QPushButton>(dialog, "importPreviewButton"), Qt::LeftButton);
    ASSERT_TRUE(failed.wait(60000));
    const QString text = child<QLabel>(dialog, "importStatus")->text();
    EXPECT_TRUE(text.contains(QStringLiteral("check Input shape and Input type")))
        << text.toStdString();
    EXPECT_FALSE(text.contains(QStringLiteral("--"))) << text.toStdString();
}

TEST(ImportDialogTest, AModuleThatDoesNotSplitIsExplained) {
    if (kFixtures.isEmpty() || !PIPEWRIGHT_TEST_HAVE_BACKEND) {
        GTEST_SKIP() << "no TorchScript fixtures (python3-torch) or no backend in this build";
    }
    ImportDialog dialog(cli_path(), kFixtures);
    dialog.show();
    QTest::keyClicks(child<QLineEdit>(dialog, "importModule"),
                     kFixtures + QStringLiteral("/skip.pt"));
    QTest::keyClicks(child<QLineEdit>(dialog, "importShape"), QStringLiteral("8"));
    QSignalSpy failed(&dialog, &ImportDialog::failed);
    QTest::mouseClick(child<QPushButton>(dialog, "importPreviewButton"), Qt::LeftButton);
    ASSERT_TRUE(failed.wait(60000));
    const QString text = child<QLabel>(dialog, "importStatus")->text();
    EXPECT_TRUE(text.contains(QStringLiteral("skip connection"))) << text.toStdString();
    EXPECT_EQ(child<QTableWidget>(dialog, "importPreview")->rowCount(), 0);
}

}  // namespace
}  // namespace pipewright::gui
