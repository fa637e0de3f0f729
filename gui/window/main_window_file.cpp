// Menus, file handling and exports of the main window.
#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QFileInfo>
#include <QKeySequence>
#include <QMenuBar>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>

#include "document/project_document.h"
#include "document/undo_keys.h"
#include "editor/model_table_model.h"
#include "editor/training_bar.h"
#include "metrics/comparison_panel.h"
#include "metrics/metrics_panel.h"
#include "pipewright/core/file_names.h"
#include "pipewright/core/project_io.h"
#include "pipewright/core/schedule_csv.h"
#include "pipewright/core/schedule_generators.h"
#include "pipewright/core/torch_csv.h"
#include "run/run_panel.h"
#include "studio_core/asset_paths.h"
#include "studio_core/project_edit.h"
#include "studio_core/simulation_runner.h"
#include "timeline/timeline_plot.h"
#include "topology/topology_view.h"
#include "window/help_window.h"
#include "window/image_export.h"
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
    QMenu* exports = file->addMenu(tr("&Export"));
    struct ExportItem {
        const char* text;
        ExportView view;
        ExportFormat format;
        const char* name;  // object name, for tests and scripts
    };
    // The charts of the Metrics and Comparison tabs, as pictures too: PNG to
    // paste, SVG and PDF to print or put in a paper at any size.
    static const ExportItem items[] = {
        {QT_TR_NOOP("Timeline as &PNG…"), ExportView::timeline, ExportFormat::png, "Timeline.png"},
        {QT_TR_NOOP("Timeline as &SVG…"), ExportView::timeline, ExportFormat::svg, "Timeline.svg"},
        {QT_TR_NOOP("Timeline as P&DF…"), ExportView::timeline, ExportFormat::pdf, "Timeline.pdf"},
        {QT_TR_NOOP("Timeline as &Chrome Trace…"), ExportView::timeline, ExportFormat::chrome_trace,
         "Timeline.json"},
        {nullptr, ExportView::timeline, ExportFormat::png, nullptr},
        {QT_TR_NOOP("&Metrics Charts as PNG…"), ExportView::metrics, ExportFormat::png,
         "Metrics.png"},
        {QT_TR_NOOP("Metrics Charts as SVG…"), ExportView::metrics, ExportFormat::svg,
         "Metrics.svg"},
        {QT_TR_NOOP("Metrics Charts as PDF…"), ExportView::metrics, ExportFormat::pdf,
         "Metrics.pdf"},
        {QT_TR_NOOP("C&omparison Charts as PNG…"), ExportView::comparison, ExportFormat::png,
         "Comparison.png"},
        {QT_TR_NOOP("Comparison Charts as SVG…"), ExportView::comparison, ExportFormat::svg,
         "Comparison.svg"},
        {QT_TR_NOOP("Comparison Charts as PDF…"), ExportView::comparison, ExportFormat::pdf,
         "Comparison.pdf"},
        {nullptr, ExportView::timeline, ExportFormat::png, nullptr},
        {QT_TR_NOOP("Schedule as C&SV…"), ExportView::schedule, ExportFormat::csv, "Schedule.csv"},
        {QT_TR_NOOP("Schedule for PyTorch, Compute &Only…"), ExportView::schedule,
         ExportFormat::torch_compute_only, "ScheduleTorchComputeOnly.csv"},
        {QT_TR_NOOP("Schedule for PyTorch, &Lowered…"), ExportView::schedule,
         ExportFormat::torch_compute_comms, "ScheduleTorchComputeComms.csv"},
    };
    for (const ExportItem& item : items) {
        if (item.text == nullptr) {
            exports->addSeparator();
            continue;
        }
        QAction* action = exports->addAction(
            tr(item.text), this, [this, item] { exportWithDialog(item.view, item.format); });
        action->setObjectName(QStringLiteral("export") + QString::fromLatin1(item.name));
    }
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

    QMenu* edit = menuBar()->addMenu(tr("&Edit"));
    QAction* undo = document_->undoStack()->createUndoAction(this, tr("&Undo"));
    undo->setShortcut(QKeySequence::Undo);
    QAction* redo = document_->undoStack()->createRedoAction(this, tr("&Redo"));
    redo->setShortcuts(redo_keys());
    edit->addAction(undo);
    edit->addAction(redo);
    edit->addSeparator();
    auto selected_range = [this](int* first, int* last) {
        const QModelIndexList rows = table_->selectionModel()->selectedRows();
        if (rows.isEmpty()) {
            return false;
        }
        *first = rows.front().row();
        *last = *first;
        for (const QModelIndex& i : rows) {
            *first = std::min(*first, i.row());
            *last = std::max(*last, i.row());
        }
        return true;
    };
    QAction* remove = edit->addAction(tr("Remove Layers"), this, [this, selected_range] {
        int first = 0;
        int last = 0;
        if (selected_range(&first, &last)) {
            document_->edit(tr("Remove layers"), remove_layers(document_->project(), first, last));
        }
    });
    remove->setShortcut(QKeySequence::Delete);
    remove->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    table_->addAction(remove);
    QAction* up = edit->addAction(tr("Move Layer Up"), this, [this, selected_range] {
        int first = 0;
        int last = 0;
        if (selected_range(&first, &last) && first > 0) {
            document_->edit(tr("Move layer"), move_layer(document_->project(), first - 1, last));
            selectLayers(first - 1, last - 1);
        }
    });
    up->setShortcut(QKeySequence(Qt::ALT | Qt::Key_Up));
    QAction* down = edit->addAction(tr("Move Layer Down"), this, [this, selected_range] {
        int first = 0;
        int last = 0;
        if (selected_range(&first, &last) && last + 1 < model_->rowCount()) {
            document_->edit(tr("Move layer"), move_layer(document_->project(), last + 1, first));
            selectLayers(first + 1, last + 1);
        }
    });
    down->setShortcut(QKeySequence(Qt::ALT | Qt::Key_Down));

    QMenu* view = menuBar()->addMenu(tr("&View"));
    view->addAction(tr("&Fit Timeline"), QKeySequence(Qt::Key_F), timeline_,
                    &TimelinePlot::fitToWindow);
    view->addAction(tr("&Timeline"), QKeySequence(Qt::CTRL | Qt::Key_1), this,
                    [this] { tabs_->setCurrentIndex(0); });
    view->addAction(tr("&Metrics"), QKeySequence(Qt::CTRL | Qt::Key_2), this,
                    [this] { tabs_->setCurrentIndex(1); });
    // "Com&parison": C belongs to View ▸ Cluster Canvas.
    view->addAction(tr("Com&parison"), QKeySequence(Qt::CTRL | Qt::Key_3), this,
                    [this] { tabs_->setCurrentIndex(2); });
    view->addAction(tr("&Run"), QKeySequence(Qt::CTRL | Qt::Key_4), this,
                    [this] { tabs_->setCurrentIndex(3); });
    dark_action_ = view->addAction(tr("&Dark Theme"));
    dark_action_->setCheckable(true);
    connect(dark_action_, &QAction::toggled, this, [this](bool on) { setDarkTheme(on); });
    view->addSeparator();
    for (QDockWidget* dock : findChildren<QDockWidget*>()) {
        view->addAction(dock->toggleViewAction());
    }

    QMenu* simulate = menuBar()->addMenu(tr("&Simulate"));
    simulate->addAction(tr("&Compare Schedules"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C),
                        this, [this] {
                            tabs_->setCurrentIndex(2);
                            comparison_->compare(document_->project(), baseDir(), runner_->costs());
                        });
    simulate->addAction(tr("Compare &Data × Pipeline Layouts"), this, [this] {
        tabs_->setCurrentIndex(2);
        comparison_->compareLayouts(document_->project(), baseDir(), runner_->costs());
    });
    plan_action_ =
        simulate->addAction(tr("&Auto-plan"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_P), this,
                            [this] { autoPlan(); });
    plan_action_->setObjectName(QStringLiteral("autoPlanAction"));
    plan_action_->setStatusTip(
        tr("Find the fastest split of the layers over the devices, schedule and micro-batch "
           "count that fits in memory (undoable)"));
    simulate->addSeparator();
    QAction* calibrate = simulate->addAction(tr("&Use Device Calibration…"), this,
                                             [this] { chooseDeviceCalibrations(); });
    calibrate->setObjectName(QStringLiteral("useCalibrationAction"));
    calibrate->setStatusTip(
        tr("Price the devices with kernels measured by `pipewright calibrate` (for every "
           "project, until forgotten)"));
    forget_calibrations_ = simulate->addAction(tr("&Forget Device Calibrations"), this, [this] {
        (void)useDeviceCalibrations({}, nullptr);
        statusBar()->showMessage(tr("Devices priced with the built-in catalog"), 8000);
    });
    forget_calibrations_->setObjectName(QStringLiteral("forgetCalibrationsAction"));
    forget_calibrations_->setEnabled(!calibrations_.empty());
    simulate->addSeparator();
    run_action_ =
        simulate->addAction(tr("&Run on Local Devices"), QKeySequence(Qt::CTRL | Qt::Key_R), this,
                            [this] { startRun(); });
    run_action_->setStatusTip(
        tr("Train this layout for real on the local devices (pipewright run) and compare the "
           "measured timeline with the simulated one"));
    // The Run panel's button knows whether a run can start (a command line
    // found, none running); the menu item and toolbar button follow it.
    const auto follow_run_button = [this] {
        run_action_->setEnabled(run_panel_->runButton()->isEnabled());
        run_action_->setToolTip(run_panel_->runButton()->toolTip());
    };
    follow_run_button();
    connect(run_panel_, &RunPanel::runAvailabilityChanged, this, follow_run_button);
    run_bar_->addAction(run_action_);

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    QAction* guide = help->addAction(tr("&User Guide"), QKeySequence::HelpContents, this, [this] {
        if (help_window_ == nullptr) {
            help_window_ = new HelpWindow(docs_dir(), this);
        }
        help_window_->show();
        help_window_->raise();
    });
    guide->setObjectName(QStringLiteral("userGuideAction"));
    help->addAction(tr("&Keyboard and Mouse"), this, [this] {
        QMessageBox box(this);
        box.setWindowTitle(tr("Keyboard and mouse"));
        box.setTextFormat(Qt::RichText);
        box.setText(tr("<b>Menu shortcuts</b>") + shortcuts_table(menuBar()) +
                    tr("<b>Timeline</b><br>%1").arg(timeline_->toolTip()) +
                    tr("<br><br><b>Cluster canvas</b><br>%1").arg(view_->toolTip()));
        box.exec();
    });
    help->addSeparator();
    help->addAction(tr("&About Pipewright Studio"), this, [this] {
        QMessageBox::about(this, tr("About Pipewright Studio"),
                           tr("<b>Pipewright Studio</b><p>Plan, simulate and run pipeline "
                              "model-parallel training: place layers on devices, pick a schedule, "
                              "read the predicted timeline, bubbles, throughput and memory, then "
                              "train the same layout on the local devices and compare.</p>"));
    });
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

bool MainWindow::exportTo(ExportView view, ExportFormat format, const QString& path,
                          QString* error) {
    const auto result = runner_->latest();
    if (const QString nothing = nothingToExport(view); !nothing.isEmpty()) {
        *error = nothing;
        return false;
    }
    QByteArray bytes;
    switch (view) {
        case ExportView::timeline:
            if (format == ExportFormat::chrome_trace) {
                bytes = QByteArray::fromStdString(
                    timeline_to_chrome_trace(result->report->timeline).dump(1));
            } else {
                bytes = render_plot(timeline_, format);
            }
            break;
        case ExportView::metrics:
        case ExportView::comparison: {
            // Shown first, so that a tab never opened has its charts laid out.
            QWidget* page =
                view == ExportView::metrics ? static_cast<QWidget*>(metrics_) : comparison_;
            tabs_->setCurrentWidget(page);
            bytes = render_widgets(view == ExportView::metrics ? page : comparison_->chartArea(),
                                   format);
            break;
        }
        case ExportView::schedule:
            try {
                bytes = QByteArray::fromStdString(
                    format == ExportFormat::torch_compute_only
                        ? schedule_to_torch_csv(result->schedule, TorchCsvFormat::compute_only)
                    : format == ExportFormat::torch_compute_comms
                        ? schedule_to_torch_csv(result->schedule, TorchCsvFormat::compute_comms)
                        : schedule_to_csv(result->schedule));
            } catch (const ScheduleError& e) {
                *error = tr("The schedule cannot be written for PyTorch: %1")
                             .arg(QString::fromStdString(e.what()));
                return false;
            }
            break;
    }
    return write_export(path, bytes, error);
}

QString MainWindow::nothingToExport(ExportView view) const {
    if (view == ExportView::comparison) {
        return comparison_->rows().empty()
                   ? tr("Nothing to export: compare the schedules first (Simulate ▸ Compare "
                        "Schedules)")
                   : QString();
    }
    const auto result = runner_->latest();
    return result && result->report ? QString()
                                    : tr("Nothing to export: the project does not simulate");
}

void MainWindow::exportWithDialog(ExportView view, ExportFormat format) {
    if (const QString nothing = nothingToExport(view); !nothing.isEmpty()) {
        statusBar()->showMessage(nothing, 6000);
        return;
    }
    static const char* const what[] = {"timeline", "metrics", "comparison", "schedule"};
    const QString kind = QString::fromLatin1(what[static_cast<int>(view)]);
    // Beside a saved project, else in the user's documents; named after the model.
    QString folder = document_->filePath().isEmpty() || is_shipped_asset(document_->filePath())
                         ? QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation)
                         : QFileInfo(document_->filePath()).absolutePath();
    if (folder.isEmpty()) {
        folder = QDir::homePath();
    }
    QString suggestion = QDir(folder).filePath(
        QString::fromStdString(safe_file_stem(document_->project().model.name)) + QLatin1Char('-') +
        kind + QLatin1Char('.') + export_extension(format));
    for (;;) {
        const QString chosen =
            save_file_name(this, tr("Export %1 as %2").arg(kind, export_format_name(format)),
                           suggestion, export_filter(format));
        if (chosen.isEmpty()) {
            return;
        }
        const ExportPath resolved = resolve_export_path(chosen, format);
        if (resolved.path.isEmpty()) {
            // Asked again with the right name filled in: one click to accept it.
            QMessageBox::warning(this, tr("Not a %1 name").arg(export_format_name(format)),
                                 resolved.refusal);
            suggestion = resolved.suggestion.isEmpty() ? chosen : resolved.suggestion;
            continue;
        }
        // The dialog asked about replacing the name as typed, not the one
        // with the extension added.
        if (resolved.path != chosen && QFileInfo::exists(resolved.path) &&
            QMessageBox::question(
                this, tr("Replace file"),
                tr("%1 already exists. Replace it?").arg(QFileInfo(resolved.path).fileName())) !=
                QMessageBox::Yes) {
            suggestion = resolved.path;
            continue;
        }
        QString error;
        if (exportTo(view, format, resolved.path, &error)) {
            statusBar()->showMessage(tr("Exported %1").arg(resolved.path), 6000);
        } else {
            statusBar()->showMessage(tr("Export failed: %1").arg(error), 8000);
            QMessageBox::warning(this, tr("Export failed"), tr("Export failed: %1").arg(error));
        }
        return;
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
