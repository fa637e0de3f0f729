#include "window/file_controller.h"

#include <QAction>
#include <QDir>
#include <QFileInfo>
#include <QMenuBar>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QStandardPaths>
#include <QStatusBar>

#include "document/project_document.h"
#include "pipewright/core/file_names.h"
#include "studio_core/processes/cli_locator.h"
#include "studio_core/project/asset_paths.h"
#include "window/file_dialogs.h"
#include "window/import_dialog.h"
#include "window/message_bar.h"

namespace pipewright::gui {

namespace {
constexpr int kMaxRecent = 8;
const QString kRecentKey = QStringLiteral("recentFiles");
}  // namespace

FileController::FileController(const ControllerContext& context, QObject* parent)
    : QObject(parent), context_(context) {}

QMenu* FileController::buildMenu(QMenuBar* bar) {
    QMenu* file = bar->addMenu(tr("&File"));
    QMenu* examples = file->addMenu(tr("&New from Example"));
    for (const QString& path : example_projects()) {
        examples->addAction(QFileInfo(path).completeBaseName(), this,
                            [this, path] { newFromExample(path); });
    }
    examples->setEnabled(!examples->isEmpty());
    file->addAction(tr("&Open…"), QKeySequence::Open, this, &FileController::openDialog);
    file->addAction(tr("&Import Model…"), this, &FileController::importDialog);
    recent_menu_ = file->addMenu(tr("Open &Recent"));
    connect(recent_menu_, &QMenu::aboutToShow, this, &FileController::fillRecentMenu);
    file->addAction(tr("&Save"), QKeySequence::Save, this, &FileController::save);
    // Not every platform binds QKeySequence::SaveAs (the offscreen and plain
    // X11 ones do not): Ctrl+Shift+S there, as desktop editors use.
    const QList<QKeySequence> save_as = QKeySequence::keyBindings(QKeySequence::SaveAs);
    file->addAction(
        tr("Save &As…"),
        save_as.isEmpty() ? QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S) : save_as.front(), this,
        &FileController::saveAs);
    file->addSeparator();
    QMenu* exports = file->addMenu(tr("&Export"));
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, context_.window, &QWidget::close);
    return exports;
}

bool FileController::openFile(const QString& path) {
    ProjectDocument* document = context_.document;
    // A shipped example (read-only once installed, part of the source tree
    // in a build) or a file this user cannot write opens as an untitled
    // copy, so that Save never writes over it.
    const bool example = is_shipped_asset(path);
    const bool read_only = QFileInfo::exists(path) && !QFileInfo(path).isWritable();
    QString error;
    if (!(example || read_only ? document->openCopy(path, &error) : document->open(path, &error))) {
        context_.messages->showMessage(tr("Cannot open %1:\n%2").arg(path, error),
                                       MessageBar::Kind::problem);
        context_.status->showMessage(
            tr("Cannot open %1 (see above)").arg(QFileInfo(path).fileName()), 10000);
        return false;
    }
    if (!example) {
        addRecent(QFileInfo(path).absoluteFilePath());
    }
    emit projectOpened();
    const QString name = QFileInfo(path).fileName();
    context_.status->showMessage(
        example
            ? tr("Opened the example %1 as an untitled copy: Save asks where to keep it").arg(name)
        : read_only ? tr("%1 is read-only: opened as an untitled copy, Save asks where to keep it")
                          .arg(name)
                    : tr("Opened %1").arg(path),
        example || read_only ? 10000 : 4000);
    return true;
}

void FileController::restoreRecovered(const Project& project, const QString& path,
                                      const QString& baseDir) {
    context_.document->restore(project, path, baseDir);
    emit projectOpened();
    context_.status->showMessage(
        path.isEmpty() ? tr("Recovered the unsaved project: Save asks where to keep it")
                       : tr("Recovered the unsaved changes to %1: they are written when you save")
                             .arg(QFileInfo(path).fileName()),
        10000);
}

bool FileController::saveTo(const QString& path) {
    QString error;
    if (!context_.document->saveAs(path, &error)) {
        context_.messages->showMessage(tr("Cannot save %1:\n%2").arg(path, error),
                                       MessageBar::Kind::problem);
        context_.status->showMessage(tr("Not saved (see above)"), 10000);
        return false;
    }
    addRecent(context_.document->filePath());
    context_.status->showMessage(tr("Saved %1").arg(path), 4000);
    return true;
}

bool FileController::maybeSave() {
    if (!context_.document->isModified()) {
        return true;
    }
    QMessageBox box(
        QMessageBox::Warning, tr("Unsaved changes"),
        tr("%1 has unsaved changes. Save them first?").arg(context_.document->displayName()),
        QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, context_.window);
    box.setDefaultButton(QMessageBox::Save);
    // Mnemonics, so Alt+S and Alt+D answer from the keyboard.
    box.button(QMessageBox::Save)->setText(tr("&Save"));
    box.button(QMessageBox::Discard)->setText(tr("&Discard"));
    box.setObjectName(QStringLiteral("unsavedChangesBox"));
    const int answer = box.exec();
    if (answer == QMessageBox::Save) {
        return save();
    }
    return answer == QMessageBox::Discard;
}

void FileController::newFromExample(const QString& path) {
    if (!maybeSave()) {
        return;
    }
    // An untitled copy: Save asks where, so the shipped example stays intact.
    QString error;
    if (!context_.document->openCopy(path, &error)) {
        context_.status->showMessage(tr("Cannot read example %1: %2").arg(path, error), 8000);
        return;
    }
    emit projectOpened();
}

void FileController::openDialog() {
    if (!maybeSave()) {
        return;
    }
    const QString path =
        open_file_name(context_.window, tr("Open project"), context_.document->baseDir(),
                       tr("Pipewright projects (*.json);;All files (*)"));
    if (!path.isEmpty() && !openFile(path)) {
        QMessageBox::warning(context_.window, tr("Cannot open"), context_.messages->text());
    }
}

void FileController::importDialog() {
    if (!maybeSave()) {
        return;
    }
    ImportDialog dialog(locate_cli().path, context_.document->baseDir(), context_.window);
    if (dialog.exec() == QDialog::Accepted && !openFile(dialog.projectFile())) {
        QMessageBox::warning(context_.window, tr("Cannot open"), context_.messages->text());
    }
}

bool FileController::save() {
    if (context_.document->filePath().isEmpty()) {
        return saveAs();
    }
    return saveTo(context_.document->filePath());
}

bool FileController::saveAs() {
    QString suggestion = context_.document->filePath();
    if (suggestion.isEmpty()) {
        // An untitled project starts in the user's documents, never beside
        // the example it was copied from.
        QString folder = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
        if (folder.isEmpty()) {
            folder = QDir::homePath();
        }
        suggestion = QDir(folder).filePath(
            QString::fromStdString(safe_file_stem(context_.document->project().model.name)) +
            QStringLiteral(".json"));
    }
    const QString path = save_file_name(context_.window, tr("Save project"), suggestion,
                                        tr("Pipewright projects (*.json)"));
    return !path.isEmpty() && saveTo(path);
}

void FileController::addRecent(const QString& path) {
    QSettings settings;
    QStringList recent = settings.value(kRecentKey).toStringList();
    recent.removeAll(path);
    recent.prepend(path);
    while (recent.size() > kMaxRecent) {
        recent.removeLast();
    }
    settings.setValue(kRecentKey, recent);
}

void FileController::fillRecentMenu() {
    recent_menu_->clear();
    const QStringList recent = QSettings().value(kRecentKey).toStringList();
    for (const QString& path : recent) {
        QAction* action = recent_menu_->addAction(QFileInfo(path).fileName(), this, [this, path] {
            if (maybeSave()) {
                openFile(path);
            }
        });
        action->setToolTip(path);
        action->setEnabled(QFileInfo::exists(path));
    }
    if (recent.isEmpty()) {
        recent_menu_->addAction(tr("(none)"))->setEnabled(false);
    }
}

}  // namespace pipewright::gui
