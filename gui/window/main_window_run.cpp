// Real runs from the studio: the Run panel asks, the main window writes the
// project as edited into a fresh run folder, starts `pipewright run` on it,
// and draws the measured timeline under the simulated one when it ends.
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QMessageBox>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>

#include "document/project_document.h"
#include "run/costs_bar.h"
#include "run/run_panel.h"
#include "studio_core/measured_costs.h"
#include "studio_core/run_comparison.h"
#include "studio_core/run_folder.h"
#include "studio_core/simulation_runner.h"
#include "timeline/timeline_plot.h"
#include "window/file_dialogs.h"
#include "window/main_window.h"
#include "window/message_bar.h"

namespace pipewright::gui {

void MainWindow::connectRun() {
    run_panel_->setCli(locate_cli());
    connect(run_panel_, &RunPanel::runRequested, this, [this] { startRun(); });
    connect(run_panel_, &RunPanel::launchFilesRequested, this,
            &MainWindow::exportLaunchFilesWithDialog);
    connect(run_panel_, &RunPanel::runSucceeded, this, [this](const QString& dir) {
        run_panel_->refreshPastRuns();
        run_panel_->selectPastRun(dir);
        if (showRun(dir)) {
            statusBar()->showMessage(
                tr("Run finished: its measured timeline is under the simulated one"), 8000);
        }
    });
    connect(run_panel_, &RunPanel::runFailed, this, [this](const QString& message) {
        statusBar()->showMessage(tr("Run failed: %1").arg(message.section(QLatin1Char('\n'), -1)),
                                 10000);
    });
    connect(run_panel_, &RunPanel::pastRunActivated, this, [this](const QString& dir) {
        if (showRun(dir)) {
            tabs_->setCurrentIndex(0);
        }
    });
    CostsBar* costs = run_panel_->costsBar();
    connect(costs, &CostsBar::profileRequested, this, [this] { startProfile(); });
    connect(costs, &CostsBar::useMeasuredChanged, this, &MainWindow::applyCosts);
    connect(costs, &CostsBar::profileSucceeded, this, [this] {
        loadMeasuredCosts(true);
        statusBar()->showMessage(
            tr("Profiled: the simulation now uses the costs measured on this machine"), 8000);
    });
    connect(costs, &CostsBar::profileFailed, this, [this](const QString& message) {
        statusBar()->showMessage(
            tr("Profile failed: %1").arg(message.section(QLatin1Char('\n'), 0, 0)), 10000);
    });
    connect(document_, &ProjectDocument::fileChanged, this, &MainWindow::projectFileChanged);
    connect(document_, &ProjectDocument::projectReplaced, this, [this] {
        project_replaced_ = true;
        run_panel_->clearForNewProject();
    });
    projectFileChanged();
    restoreDeviceCalibrations();
}

void MainWindow::loadMeasuredCosts(bool preferMeasured) {
    const Project& project = document_->project();
    const QString path = profile_path_for(runsDir(), QString::fromStdString(project.model.name));
    QString problem;
    const auto costs = load_measured_costs(path, &problem);
    CostsBar* bar = run_panel_->costsBar();
    const bool was_measured = bar->useMeasured();
    bar->setMeasuredCosts(costs, costs ? describe_measured_costs(*costs, project.model) : QString(),
                          problem);
    // A profile of another model would only replace the links: not by default.
    bar->setUseMeasured(
        costs && (preferMeasured ? measured_costs_fit(*costs, project.model) : was_measured));
    applyCosts();
}

void MainWindow::applyCosts() {
    const CostsBar* bar = run_panel_->costsBar();
    StudioCosts costs(bar->useMeasured() ? bar->measuredCosts()->profile : nullptr,
                      calibrations_.catalog);
    if (!(costs == runner_->costs())) {
        runner_->setCosts(std::move(costs));
        projectChanged();
    }
}

namespace {
const QString kCalibrationsKey = QStringLiteral("deviceCalibrations");
}  // namespace

bool MainWindow::useDeviceCalibrations(const QStringList& paths, QString* error) {
    QStringList absolute;
    for (const QString& path : paths) {
        absolute << QFileInfo(path).absoluteFilePath();
    }
    auto loaded = load_device_calibrations(absolute, error);
    if (!loaded) {
        return false;
    }
    calibrations_ = std::move(*loaded);
    QSettings().setValue(kCalibrationsKey, calibrations_.paths);
    if (forget_calibrations_ != nullptr) {
        forget_calibrations_->setEnabled(!calibrations_.empty());
    }
    applyCosts();
    return true;
}

void MainWindow::restoreDeviceCalibrations() {
    const QStringList paths = QSettings().value(kCalibrationsKey).toStringList();
    if (paths.isEmpty()) {
        return;
    }
    QString error;
    if (!useDeviceCalibrations(paths, &error)) {
        // A file moved or broken since: said once, and no longer used.
        QSettings().remove(kCalibrationsKey);
        message_bar_->showMessage(
            tr("The device calibration of the last session is not used: %1").arg(error),
            MessageBar::Kind::problem);
    }
}

void MainWindow::chooseDeviceCalibrations() {
    const QStringList paths = open_file_names(this, tr("Use Device Calibrations"),
                                              QFileInfo(document_->filePath()).absolutePath(),
                                              tr("Device calibrations (*.json);;All files (*)"));
    if (paths.isEmpty()) {
        return;
    }
    QString error;
    if (!useDeviceCalibrations(paths, &error)) {
        message_bar_->showMessage(error, MessageBar::Kind::problem);
        return;
    }
    statusBar()->showMessage(
        tr("Devices priced as calibrated: %1")
            .arg(describe_device_calibrations(calibrations_).section(QLatin1Char('\n'), 0, 0)),
        10000);
}

bool MainWindow::readyToLaunch() {
    // One at a time: a profile beside a run would time both wrongly.
    if (run_panel_->isRunning() || run_panel_->costsBar()->isProfiling()) {
        return false;
    }
    if (!run_panel_->cli().found()) {
        run_panel_->setCli(locate_cli());
    }
    tabs_->setCurrentWidget(run_panel_);
    if (!run_panel_->cli().found()) {
        run_panel_->showError(run_panel_->cli().reason);
        return false;
    }
    return true;
}

bool MainWindow::startProfile() {
    if (!readyToLaunch()) {
        return false;
    }
    CostsBar* bar = run_panel_->costsBar();
    const Project& project = document_->project();
    const QString model = QString::fromStdString(project.model.name);
    const QString dir = runsDir();
    if (!QDir().mkpath(dir)) {
        run_panel_->showError(tr("Cannot create the folder %1 for the profile").arg(dir));
        return false;
    }
    // The layout profiled stays beside its profile, as a run folder keeps
    // the project it ran.
    ProfileRequest request;
    request.cli = run_panel_->cli().path;
    request.out_file = profile_path_for(dir, model);
    request.project_file = request.out_file.chopped(5) + QStringLiteral(".project.json");
    request.device = run_panel_->device();
    QString error;
    if (!write_run_project(project, baseDir(), request.project_file, &error)) {
        run_panel_->showError(tr("Cannot write %1: %2").arg(request.project_file, error));
        return false;
    }
    bar->startProfile(request);
    return true;
}

QString MainWindow::runsDir() const {
    return runs_dir_for(document_->filePath(),
                        QString::fromStdString(document_->project().model.name));
}

void MainWindow::projectFileChanged() {
    // Save As moves the project's runs folder: its profile goes along.
    const auto& costs = run_panel_->costsBar()->measuredCosts();
    const QString profile =
        profile_path_for(runsDir(), QString::fromStdString(document_->project().model.name));
    if (!project_replaced_ && costs && QFileInfo(profile).absoluteFilePath() != costs->path &&
        !QFileInfo::exists(profile) && QDir().mkpath(runsDir())) {
        QFile::copy(costs->path, profile);
    }
    loadMeasuredCosts(project_replaced_);
    project_replaced_ = false;
    // Another project's run does not belong under this one's timeline; a
    // Save As of the layout that was run keeps it.
    if (measured_run_ &&
        !(measured_run_->project && same_run_plan(*measured_run_->project, document_->project()))) {
        measured_run_.reset();
        timeline_->clearMeasuredTimeline();
        run_panel_->clearComparison(tr("Run the layout to compare the simulation with reality."));
    }
    if (!run_panel_->isRunning()) {
        run_panel_->setDefaultSteps(document_->project().training.steps);
    }
    run_panel_->setRunsDir(runsDir(), document_->project());
}

bool MainWindow::startRun() {
    if (!readyToLaunch()) {
        return false;
    }
    const Project& project = document_->project();
    const QString dir = new_run_dir(runsDir(), QString::fromStdString(project.model.name));
    if (!QDir().mkpath(dir)) {
        run_panel_->showError(tr("Cannot create the run folder %1").arg(dir));
        return false;
    }
    // The run takes the layout on screen, saved or not.
    const QString project_file = QDir(dir).filePath(QStringLiteral("project.json"));
    QString error;
    if (!write_run_project(project, baseDir(), project_file, &error)) {
        run_panel_->showError(tr("Cannot write %1: %2").arg(project_file, error));
        return false;
    }
    RunRequest request;
    request.cli = run_panel_->cli().path;
    request.project_file = project_file;
    request.out_dir = dir;
    request.steps = run_panel_->steps();
    request.device = run_panel_->device();
    run_panel_->start(request);
    statusBar()->showMessage(
        tr("Running %1 on the local devices…").arg(QString::fromStdString(project.model.name)),
        4000);
    return true;
}

bool MainWindow::showRun(const QString& dir) {
    QString error;
    auto run = load_measured_run(dir, &error);
    if (!run) {
        run_panel_->showError(error);
        return false;
    }
    measured_run_ = std::make_shared<const MeasuredRun>(std::move(*run));
    timeline_->setMeasuredTimeline(measured_run_->timeline, measured_run_->name);
    updateRunComparison();
    return true;
}

void MainWindow::updateRunComparison() {
    if (!measured_run_) {
        return;
    }
    const auto latest = runner_->latest();
    const SimulationReport* simulated = latest && latest->report ? &*latest->report : nullptr;
    QStringList notes;
    if (measured_run_->project && !same_run_plan(*measured_run_->project, document_->project())) {
        notes << tr(
            "This run was made with another layout or training than the one on screen; "
            "the simulated column is for the layout on screen.");
    }
    if (simulated == nullptr) {
        notes << tr(
            "The layout on screen does not simulate, so there is nothing to compare "
            "with.");
    }
    // What "measured" means is the Measured column's tooltip: a note that is
    // always there took the lines a low window has for the table and log.
    run_panel_->showComparison(
        measured_run_->name,
        compare_run(simulated, measured_run_->timeline, measured_run_->iteration_time_s),
        notes.join(QLatin1Char(' ')));
}

}  // namespace pipewright::gui
