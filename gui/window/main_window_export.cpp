// File ▸ Export: pictures of the views, the timeline as a Chrome trace, the
// schedule as CSV (ours or PyTorch's).
#include <QAction>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QMessageBox>
#include <QStandardPaths>
#include <QTabWidget>

#include "document/project_document.h"
#include "metrics/comparison_panel.h"
#include "metrics/metrics_panel.h"
#include "pipewright/core/analysis.h"
#include "pipewright/core/file_names.h"
#include "pipewright/core/launch_files.h"
#include "pipewright/core/schedule_csv.h"
#include "pipewright/core/schedule_generators.h"
#include "pipewright/core/timeline.h"
#include "pipewright/core/torch_csv.h"
#include "studio_core/asset_paths.h"
#include "studio_core/export_path.h"
#include "studio_core/simulation_runner.h"
#include "timeline/timeline_plot.h"
#include "window/file_dialogs.h"
#include "window/image_export.h"
#include "window/main_window.h"
#include "window/message_bar.h"

namespace pipewright::gui {

void MainWindow::buildExportMenu(QMenu* exports) {
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
    // Before the loop's items: the cluster's files come first for a run.
    QAction* launch = exports->addAction(tr("Launch Files for a Cl&uster…"), this,
                                         [this] { exportLaunchFilesWithDialog(); });
    launch->setObjectName(QStringLiteral("exportLaunchFiles"));
    launch->setStatusTip(
        tr("Write a Slurm batch script, Kubeflow PyTorchJob and TrainJob manifests and a torchrun "
           "script that run this project (pipewright launch-files)"));
    exports->addSeparator();
    for (const ExportItem& item : items) {
        if (item.text == nullptr) {
            exports->addSeparator();
            continue;
        }
        QAction* action = exports->addAction(
            tr(item.text), this, [this, item] { exportWithDialog(item.view, item.format); });
        action->setObjectName(QStringLiteral("export") + QString::fromLatin1(item.name));
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

bool MainWindow::exportLaunchFiles(const QString& folder, QString* error) {
    const QString path = document_->filePath();
    if (path.isEmpty() || document_->isModified()) {
        *error = tr("Save the project first: every launch file runs the project file by its path");
        return false;
    }
    AnalysisOptions options;
    options.base_dir = baseDir().toStdString();
    Diagnostics problems;
    const auto project = analyze_project(document_->project(), options, problems);
    if (!project) {
        *error = tr("The project has problems to fix first (see Problems)");
        return false;
    }
    LaunchFileOptions launch;
    launch.project_path = QFileInfo(path).absoluteFilePath().toStdString();
    try {
        const auto files = make_launch_files(*project, launch);
        (void)write_launch_files(files, folder.toStdString());
        QStringList names;
        for (const LaunchFile& f : files) {
            names << QString::fromStdString(f.name);
        }
        message_bar_->showMessage(
            tr("Wrote %1 into %2 for %3. Each file starts with the assumptions it makes (the "
               "project at this path on every node, the image, the network interface).")
                .arg(names.join(QStringLiteral(", ")), folder,
                     QString::fromStdString(describe(launch_layout(*project)))),
            MessageBar::Kind::result);
        return true;
    } catch (const std::exception& e) {
        *error = QString::fromStdString(e.what());
        return false;
    }
}

void MainWindow::exportLaunchFilesWithDialog() {
    if (document_->filePath().isEmpty() || document_->isModified()) {
        const auto answer = QMessageBox::question(
            this, tr("Export launch files"),
            tr("The launch files run the project file by its path, so it must be saved first. "
               "Save it now?"),
            QMessageBox::Save | QMessageBox::Cancel, QMessageBox::Save);
        if (answer != QMessageBox::Save || !save() || document_->isModified()) {
            return;
        }
    }
    const QFileInfo project(document_->filePath());
    const QString name = project.completeBaseName() + QStringLiteral("-launch");
    const QString parent = QFileDialog::getExistingDirectory(
        this, tr("Where to put the folder %1").arg(name), project.absolutePath());
    if (parent.isEmpty()) {
        return;
    }
    QString error;
    if (!exportLaunchFiles(QDir(parent).filePath(name), &error)) {
        QMessageBox::warning(this, tr("Export launch files"), error);
    }
}

}  // namespace pipewright::gui
