// The File menu and file handling of the main window: open, save, recent
// files, recovery, and the window layout kept between launches.
#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QFileInfo>
#include <QMenuBar>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QStandardPaths>
#include <QStatusBar>

#include "document/project_document.h"
#include "editor/training_bar.h"
#include "pipewright/core/file_names.h"
#include "pipewright/core/project_io.h"
#include "run/run_panel.h"
#include "studio_core/asset_paths.h"
#include "studio_core/project_edit.h"
#include "studio_core/simulation_runner.h"
#include "window/main_window.h"

#include "studio_core/cli_locator.h"
#include "window/file_dialogs.h"
#include "window/import_dialog.h"
#include "window/message_bar.h"

namespace pipewright::gui {

namespace {
constexpr int kMaxRecent = 8;
const QString kRecentKey = QStringLiteral("recentFiles");
}  // namespace

void MainWindow::buildActions() {
    // Each menu is built beside what it drives.
    buildFileMenu();
    buildEditMenu();
    buildViewMenu();
    buildSimulateMenu();
    buildHelpMenu();
}

void MainWindow::buildFileMenu() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QMenu* examples = file->addMenu(tr("&New from Example"));
    for (const QString& path : example_projects()) {
        examples->addAction(QFileInfo(path).completeBaseName(), this,
                            [this, path] { newFromExample(path); });
    }
    examples->setEnabled(!examples->isEmpty());
    file->addAction(tr("&Open…"), QKeySequence::Open, this, &MainWindow::openDialog);
    file->addAction(tr("&Import Model…"), this, &MainWindow::importDialog);
    recent_menu_ = file->addMenu(tr("Open &Recent"));
    connect(recent_menu_, &QMenu::aboutToShow, this, &MainWindow::fillRecentMenu);
    file->addAction(tr("&Save"), QKeySequence::Save, this, &MainWindow::save);
    // Not every platform binds QKeySequence::SaveAs (the offscreen and plain
    // X11 ones do not): Ctrl+Shift+S there, as desktop editors use.
    const QList<QKeySequence> save_as = QKeySequence::keyBindings(QKeySequence::SaveAs);
    file->addAction(
        tr("Save &As…"),
        save_as.isEmpty() ? QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S) : save_as.front(), this,
        &MainWindow::saveAs);
    file->addSeparator();
    buildExportMenu(file->addMenu(tr("&Export")));
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);
}

bool MainWindow::openFile(const QString& path) {
    // A shipped example (read-only once installed, part of the source tree
    // in a build) or a file this user cannot write opens as an untitled
    // copy, so that Save never writes over it.
    const bool example = is_shipped_asset(path);
    const bool read_only = QFileInfo::exists(path) && !QFileInfo(path).isWritable();
    QString error;
    if (!(example || read_only ? document_->openCopy(path, &error)
                               : document_->open(path, &error))) {
        message_bar_->showMessage(tr("Cannot open %1:\n%2").arg(path, error),
                                  MessageBar::Kind::problem);
        statusBar()->showMessage(tr("Cannot open %1 (see above)").arg(QFileInfo(path).fileName()),
                                 10000);
        return false;
    }
    if (!example) {
        addRecent(QFileInfo(path).absoluteFilePath());
    }
    simulateNow();
    const QString name = QFileInfo(path).fileName();
    statusBar()->showMessage(
        example
            ? tr("Opened the example %1 as an untitled copy: Save asks where to keep it").arg(name)
        : read_only ? tr("%1 is read-only: opened as an untitled copy, Save asks where to keep it")
                          .arg(name)
                    : tr("Opened %1").arg(path),
        example || read_only ? 10000 : 4000);
    return true;
}

void MainWindow::restoreRecovered(const Project& project, const QString& path,
                                  const QString& baseDir) {
    document_->restore(project, path, baseDir);
    simulateNow();
    statusBar()->showMessage(
        path.isEmpty() ? tr("Recovered the unsaved project: Save asks where to keep it")
                       : tr("Recovered the unsaved changes to %1: they are written when you save")
                             .arg(QFileInfo(path).fileName()),
        10000);
}

bool MainWindow::saveTo(const QString& path) {
    QString error;
    if (!document_->saveAs(path, &error)) {
        message_bar_->showMessage(tr("Cannot save %1:\n%2").arg(path, error),
                                  MessageBar::Kind::problem);
        statusBar()->showMessage(tr("Not saved (see above)"), 10000);
        return false;
    }
    addRecent(document_->filePath());
    statusBar()->showMessage(tr("Saved %1").arg(path), 4000);
    return true;
}

bool MainWindow::maybeSave() {
    if (!document_->isModified()) {
        return true;
    }
    QMessageBox box(QMessageBox::Warning, tr("Unsaved changes"),
                    tr("%1 has unsaved changes. Save them first?").arg(document_->displayName()),
                    QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, this);
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

void MainWindow::newFromExample(const QString& path) {
    if (!maybeSave()) {
        return;
    }
    // An untitled copy: Save asks where, so the shipped example stays intact.
    QString error;
    if (!document_->openCopy(path, &error)) {
        statusBar()->showMessage(tr("Cannot read example %1: %2").arg(path, error), 8000);
        return;
    }
    simulateNow();
}

void MainWindow::openDialog() {
    if (!maybeSave()) {
        return;
    }
    const QString path = open_file_name(this, tr("Open project"), baseDir(),
                                        tr("Pipewright projects (*.json);;All files (*)"));
    if (!path.isEmpty() && !openFile(path)) {
        QMessageBox::warning(this, tr("Cannot open"), message_bar_->text());
    }
}

void MainWindow::importDialog() {
    if (!maybeSave()) {
        return;
    }
    ImportDialog dialog(locate_cli().path, baseDir(), this);
    if (dialog.exec() == QDialog::Accepted && !openFile(dialog.projectFile())) {
        QMessageBox::warning(this, tr("Cannot open"), message_bar_->text());
    }
}

bool MainWindow::save() {
    if (document_->filePath().isEmpty()) {
        return saveAs();
    }
    return saveTo(document_->filePath());
}

bool MainWindow::saveAs() {
    QString suggestion = document_->filePath();
    if (suggestion.isEmpty()) {
        // An untitled project starts in the user's documents, never beside
        // the example it was copied from.
        QString folder = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
        if (folder.isEmpty()) {
            folder = QDir::homePath();
        }
        suggestion = QDir(folder).filePath(
            QString::fromStdString(safe_file_stem(document_->project().model.name)) +
            QStringLiteral(".json"));
    }
    const QString path =
        save_file_name(this, tr("Save project"), suggestion, tr("Pipewright projects (*.json)"));
    return !path.isEmpty() && saveTo(path);
}

void MainWindow::addRecent(const QString& path) {
    QSettings settings;
    QStringList recent = settings.value(kRecentKey).toStringList();
    recent.removeAll(path);
    recent.prepend(path);
    while (recent.size() > kMaxRecent) {
        recent.removeLast();
    }
    settings.setValue(kRecentKey, recent);
}

void MainWindow::fillRecentMenu() {
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

void MainWindow::closeEvent(QCloseEvent* event) {
    if (run_panel_->isRunning() &&
        QMessageBox::question(this, tr("A run is going"),
                              tr("A real run of this project is still going. Stop it and quit?")) !=
            QMessageBox::Yes) {
        event->ignore();
        return;
    }
    if (maybeSave()) {
        saveLayout();
        event->accept();
    } else {
        event->ignore();
    }
}

namespace {
// Bumped when the docks or toolbars change, so that an older saved layout
// is not applied to widgets it did not know.
constexpr int kLayoutVersion = 1;
}  // namespace

void MainWindow::saveLayout() const {
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState(kLayoutVersion));
}

bool MainWindow::restoreLayout() {
    const QSettings settings;
    const QByteArray geometry = settings.value(QStringLiteral("window/geometry")).toByteArray();
    if (geometry.isEmpty() || !restoreGeometry(geometry)) {
        return false;
    }
    (void)restoreState(settings.value(QStringLiteral("window/state")).toByteArray(),
                       kLayoutVersion);
    return true;
}

}  // namespace pipewright::gui
