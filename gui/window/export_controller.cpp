#include "window/export_controller.h"

#include <QAction>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QMessageBox>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTabWidget>

#include "document/project_document.h"
#include "metrics/comparison_panel.h"
#include "metrics/metrics_panel.h"
#include "pipewright/core/analysis.h"
#include "pipewright/core/file_names.h"
#include "pipewright/core/launch_files.h"
#include "pipewright/core/output_file.h"
#include "pipewright/core/schedule_csv.h"
#include "pipewright/core/schedule_generators.h"
#include "pipewright/core/timeline.h"
#include "pipewright/core/torch_csv.h"
#include "pipewright/sim/report_inner_waits.h"
#include "studio_core/project/asset_paths.h"
#include "studio_core/simulation/simulation_runner.h"
#include "timeline/timeline_plot.h"
#include "window/file_controller.h"
#include "window/file_dialogs.h"
#include "window/image_export.h"
#include "window/message_bar.h"

namespace pipewright::gui {

ExportController::ExportController(const ControllerContext& context, const Views& views,
                                   FileController* files, QObject* parent)
    : QObject(parent), context_(context), views_(views), files_(files) {}

void ExportController::buildMenu(QMenu* exports) {
    struct ExportItem {
        const char* text;
        View view;
        ExportFormat format;
        const char* name;  // object name, for tests and scripts
    };
    // The charts of the Metrics and Comparison tabs, as pictures too: PNG to
    // paste, SVG and PDF to print or put in a paper at any size.
    static const ExportItem items[] = {
        {QT_TR_NOOP("Timeline as &PNG…"), View::timeline, ExportFormat::png, "Timeline.png"},
        {QT_TR_NOOP("Timeline as &SVG…"), View::timeline, ExportFormat::svg, "Timeline.svg"},
        {QT_TR_NOOP("Timeline as P&DF…"), View::timeline, ExportFormat::pdf, "Timeline.pdf"},
        {QT_TR_NOOP("Timeline as &Chrome Trace…"), View::timeline, ExportFormat::chrome_trace,
         "Timeline.json"},
        {nullptr, View::timeline, ExportFormat::png, nullptr},
        {QT_TR_NOOP("&Metrics Charts as PNG…"), View::metrics, ExportFormat::png, "Metrics.png"},
        {QT_TR_NOOP("Metrics Charts as SVG…"), View::metrics, ExportFormat::svg, "Metrics.svg"},
        {QT_TR_NOOP("Metrics Charts as PDF…"), View::metrics, ExportFormat::pdf, "Metrics.pdf"},
        {QT_TR_NOOP("C&omparison Charts as PNG…"), View::comparison, ExportFormat::png,
         "Comparison.png"},
        {QT_TR_NOOP("Comparison Charts as SVG…"), View::comparison, ExportFormat::svg,
         "Comparison.svg"},
        {QT_TR_NOOP("Comparison Charts as PDF…"), View::comparison, ExportFormat::pdf,
         "Comparison.pdf"},
        {nullptr, View::timeline, ExportFormat::png, nullptr},
        {QT_TR_NOOP("Schedule as C&SV…"), View::schedule, ExportFormat::csv, "Schedule.csv"},
        {QT_TR_NOOP("Schedule for PyTorch, Compute &Only…"), View::schedule,
         ExportFormat::torch_compute_only, "ScheduleTorchComputeOnly.csv"},
        {QT_TR_NOOP("Schedule for PyTorch, &Lowered…"), View::schedule,
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

bool ExportController::exportTo(View view, ExportFormat format, const QString& path,
                                QString* error) {
    const auto result = context_.runner->latest();
    if (const QString nothing = nothingToExport(view); !nothing.isEmpty()) {
        *error = nothing;
        return false;
    }
    QByteArray bytes;
    switch (view) {
        case View::timeline:
            if (format == ExportFormat::chrome_trace) {
                // With the waits inside the forwards and backwards, as the
                // timeline's sub-blocks show them.
                StringSink text;
                write_chrome_trace(result->report->timeline, inner_waits(*result->report), text);
                bytes = QByteArray::fromStdString(nlohmann::json::parse(text.text()).dump(1));
            } else {
                bytes = render_plot(views_.timeline, format);
            }
            break;
        case View::metrics:
        case View::comparison: {
            // Shown first, so that a tab never opened has its charts laid out.
            QWidget* page =
                view == View::metrics ? static_cast<QWidget*>(views_.metrics) : views_.comparison;
            views_.tabs->setCurrentWidget(page);
            bytes = render_widgets(view == View::metrics ? page : views_.comparison->chartArea(),
                                   format);
            break;
        }
        case View::schedule:
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

QString ExportController::nothingToExport(View view) const {
    if (view == View::comparison) {
        return views_.comparison->rows().empty()
                   ? tr("Nothing to export: compare the schedules first (Simulate ▸ Compare "
                        "Schedules)")
                   : QString();
    }
    const auto result = context_.runner->latest();
    return result && result->report ? QString()
                                    : tr("Nothing to export: the project does not simulate");
}

namespace {
const char* const kViewWords[] = {"timeline", "metrics", "comparison", "schedule"};
}  // namespace

QString ExportController::suggestedPath(View view, ExportFormat format) const {
    const QString file = context_.document->filePath();
    QString folder = file.isEmpty() || is_shipped_asset(file)
                         ? QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation)
                         : QFileInfo(file).absolutePath();
    if (folder.isEmpty()) {
        folder = QDir::homePath();
    }
    return QDir(folder).filePath(
        QString::fromStdString(safe_file_stem(context_.document->project().model.name)) +
        QLatin1Char('-') + QString::fromLatin1(kViewWords[static_cast<int>(view)]) +
        QLatin1Char('.') + export_extension(format));
}

void ExportController::exportWithDialog(View view, ExportFormat format) {
    if (const QString nothing = nothingToExport(view); !nothing.isEmpty()) {
        context_.status->showMessage(nothing, 6000);
        return;
    }
    QWidget* window = context_.window;
    const QString kind = QString::fromLatin1(kViewWords[static_cast<int>(view)]);
    QString suggestion = suggestedPath(view, format);
    for (;;) {
        const QString chosen =
            save_file_name(window, tr("Export %1 as %2").arg(kind, export_format_name(format)),
                           suggestion, export_filter(format));
        if (chosen.isEmpty()) {
            return;
        }
        const ExportPath resolved = resolve_export_path(chosen, format);
        if (resolved.path.isEmpty()) {
            // Asked again with the right name filled in: one click to accept it.
            QMessageBox::warning(window, tr("Not a %1 name").arg(export_format_name(format)),
                                 resolved.refusal);
            suggestion = resolved.suggestion.isEmpty() ? chosen : resolved.suggestion;
            continue;
        }
        // The dialog asked about replacing the name as typed, not the one
        // with the extension added.
        if (resolved.path != chosen && QFileInfo::exists(resolved.path) &&
            QMessageBox::question(
                window, tr("Replace file"),
                tr("%1 already exists. Replace it?").arg(QFileInfo(resolved.path).fileName())) !=
                QMessageBox::Yes) {
            suggestion = resolved.path;
            continue;
        }
        QString error;
        if (exportTo(view, format, resolved.path, &error)) {
            context_.status->showMessage(tr("Exported %1").arg(resolved.path), 6000);
        } else {
            context_.status->showMessage(tr("Export failed: %1").arg(error), 8000);
            QMessageBox::warning(window, tr("Export failed"), tr("Export failed: %1").arg(error));
        }
        return;
    }
}

bool ExportController::exportLaunchFiles(const QString& folder, QString* error) {
    const ProjectDocument& document = *context_.document;
    const QString path = document.filePath();
    if (path.isEmpty() || document.isModified()) {
        *error = tr("Save the project first: every launch file runs the project file by its path");
        return false;
    }
    AnalysisOptions options;
    options.base_dir = document.baseDir().toStdString();
    Diagnostics problems;
    const auto project = analyze_project(document.project(), options, problems);
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
        context_.messages->showMessage(
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

void ExportController::exportLaunchFilesWithDialog() {
    ProjectDocument* document = context_.document;
    QWidget* window = context_.window;
    if (document->filePath().isEmpty() || document->isModified()) {
        const auto answer = QMessageBox::question(
            window, tr("Export launch files"),
            tr("The launch files run the project file by its path, so it must be saved first. "
               "Save it now?"),
            QMessageBox::Save | QMessageBox::Cancel, QMessageBox::Save);
        if (answer != QMessageBox::Save || !files_->save() || document->isModified()) {
            return;
        }
    }
    const QFileInfo project(document->filePath());
    const QString name = project.completeBaseName() + QStringLiteral("-launch");
    const QString parent = QFileDialog::getExistingDirectory(
        window, tr("Where to put the folder %1").arg(name), project.absolutePath());
    if (parent.isEmpty()) {
        return;
    }
    QString error;
    if (!exportLaunchFiles(QDir(parent).filePath(name), &error)) {
        QMessageBox::warning(window, tr("Export launch files"), error);
    }
}

}  // namespace pipewright::gui
