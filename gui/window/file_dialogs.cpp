#include "window/file_dialogs.h"

#include <QDateTime>
#include <QFileDialog>
#include <QFileInfo>
#include <QHeaderView>
#include <QLocale>
#include <QScreen>
#include <QTreeView>
#include <algorithm>

namespace pipewright::gui {
namespace {

QStringList run(QFileDialog& dialog, QWidget* parent) {
    fit_file_dialog(dialog, parent);
    return dialog.exec() == QDialog::Accepted ? dialog.selectedFiles() : QStringList{};
}

}  // namespace

void fit_file_dialog(QFileDialog& dialog, QWidget* parent) {
    dialog.setViewMode(QFileDialog::Detail);
    auto* tree = dialog.findChild<QTreeView*>(QStringLiteral("treeView"));
    if (tree == nullptr) {
        return;  // the platform's own dialog sizes itself
    }
    QHeaderView* header = tree->header();
    header->setStretchLastSection(false);
    header->setSectionResizeMode(0, QHeaderView::Stretch);
    for (int column = 1; column < header->count(); ++column) {
        header->setSectionResizeMode(column, QHeaderView::ResizeToContents);
    }
    // Room for a name of 40 characters beside what the other columns hold
    // (the folder is listed later, in the background), within the screen.
    const QFontMetrics metrics(tree->font());
    int width = metrics.horizontalAdvance(QLatin1Char('M')) * 40;
    const QStringList widest{
        QStringLiteral("1023.9 KiB  "), QStringLiteral("json File  "),
        QLocale().toString(QDateTime(QDate(2026, 12, 28), QTime(23, 58)), QLocale::ShortFormat) +
            QStringLiteral("  ")};
    for (int column = 1; column < header->count(); ++column) {
        const QString sample = widest.value(column - 1);
        width += std::max(header->sectionSizeHint(column), metrics.horizontalAdvance(sample));
    }
    width += 260;  // the sidebar of places
    QSize size(width, std::max(dialog.sizeHint().height(), 480));
    if (const QScreen* screen = parent != nullptr ? parent->screen() : dialog.screen()) {
        size = size.boundedTo(screen->availableSize() * 0.9);
    }
    dialog.resize(size.expandedTo(dialog.sizeHint()));
}

QString open_file_name(QWidget* parent, const QString& caption, const QString& dir,
                       const QString& filter) {
    QFileDialog dialog(parent, caption, dir, filter);
    dialog.setFileMode(QFileDialog::ExistingFile);
    dialog.setAcceptMode(QFileDialog::AcceptOpen);
    return run(dialog, parent).value(0);
}

QStringList open_file_names(QWidget* parent, const QString& caption, const QString& dir,
                            const QString& filter) {
    QFileDialog dialog(parent, caption, dir, filter);
    dialog.setFileMode(QFileDialog::ExistingFiles);
    dialog.setAcceptMode(QFileDialog::AcceptOpen);
    return run(dialog, parent);
}

QString save_file_name(QWidget* parent, const QString& caption, const QString& suggestion,
                       const QString& filter) {
    QFileDialog dialog(parent, caption, QString(), filter);
    dialog.setFileMode(QFileDialog::AnyFile);
    dialog.setAcceptMode(QFileDialog::AcceptSave);
    const QFileInfo info(suggestion);
    if (info.isDir()) {
        dialog.setDirectory(suggestion);
    } else {
        dialog.setDirectory(info.absolutePath());
        dialog.selectFile(info.fileName());
    }
    return run(dialog, parent).value(0);
}

}  // namespace pipewright::gui
