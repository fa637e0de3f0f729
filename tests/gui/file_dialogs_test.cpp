// Issue 36 #15: Qt's own file dialog opened too small for its columns. The
// studio's dialogs open wide enough that, in the examples folder, every
// name and every Size, Type and Date entry is read whole.
#include <gtest/gtest.h>

#include <QApplication>
#include <QDir>
#include <QFileDialog>
#include <QHeaderView>
#include <QTest>
#include <QTreeView>
#include <algorithm>

#include "window/file_dialogs.h"

namespace pipewright::gui {
namespace {

TEST(FileDialogs, NamesAndDetailColumnsAreReadWholeInTheExamplesFolder) {
    const QString folder = QStringLiteral(PIPEWRIGHT_ASSETS_DIR "/examples");
    QFileDialog dialog(nullptr, QStringLiteral("Open project"), folder,
                       QStringLiteral("Pipewright projects (*.json)"));
    dialog.setOption(QFileDialog::DontUseNativeDialog);
    fit_file_dialog(dialog, nullptr);
    dialog.show();
    ASSERT_TRUE(QTest::qWaitForWindowExposed(&dialog));
    auto* tree = dialog.findChild<QTreeView*>(QStringLiteral("treeView"));
    ASSERT_NE(tree, nullptr);
    const QStringList files = QDir(folder).entryList({QStringLiteral("*.json")}, QDir::Files);
    // The model lists the folder in the background.
    QTRY_VERIFY_WITH_TIMEOUT(tree->model()->rowCount(tree->rootIndex()) == files.size(), 5000);
    QApplication::processEvents();
    const QHeaderView* header = tree->header();
    ASSERT_GE(header->count(), 4);
    const QAbstractItemView* view = tree;  // sizeHintForColumn is public there
    for (int column = 1; column < 4; ++column) {
        EXPECT_GE(header->sectionSize(column), view->sizeHintForColumn(column))
            << "column " << column;
    }
    // The longest example's name, beside its icon.
    int longest = 0;
    for (const QString& name : files) {
        longest = std::max(longest, tree->fontMetrics().horizontalAdvance(name));
    }
    EXPECT_GE(header->sectionSize(0), longest + tree->iconSize().width() + 16)
        << "name column " << header->sectionSize(0) << " for names of " << longest << " px";
    dialog.reject();
}

}  // namespace
}  // namespace pipewright::gui
