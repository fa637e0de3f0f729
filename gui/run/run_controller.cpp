#include "run/run_controller.h"

#include <QAbstractButton>
#include <QAction>
#include <QDir>
#include <QKeySequence>
#include <QMenu>
#include <QMessageBox>
#include <QStatusBar>
#include <QTabWidget>
#include <QToolBar>

#include "document/project_document.h"
#include "run/costs_bar.h"
#include "run/run_panel.h"
#include "studio_core/processes/cli_locator.h"
#include "studio_core/processes/run_folder.h"
#include "studio_core/simulation/run_comparison.h"
#include "studio_core/simulation/simulation_runner.h"
#include "timeline/timeline_plot.h"

namespace pipewright::gui {

QString runs_dir_of(const ProjectDocument& document) {
    return runs_dir_for(document.filePath(), QString::fromStdString(document.project().model.name));
}

bool ready_to_launch(RunPanel& panel, QTabWidget& views) {
    // One at a time: a profile beside a run would time both wrongly.
    if (panel.isRunning() || panel.costsBar()->isProfiling()) {
        return false;
    }
    if (!panel.cli().found()) {
        panel.setCli(locate_cli());
    }
    views.setCurrentWidget(&panel);
    if (!panel.cli().found()) {
        panel.showError(panel.cli().reason);
        return false;
    }
    return true;
}

RunController::RunController(const ControllerContext& context, RunPanel* panel,
                             TimelinePlot* timeline, QTabWidget* views, QObject* parent)
    : QObject(parent), context_(context), panel_(panel), timeline_(timeline), views_(views) {
    panel_->setCli(locate_cli());
    connectPanel();
    ProjectDocument* document = context_.document;
    connect(document, &ProjectDocument::fileChanged, this, &RunController::projectFileChanged);
    connect(document, &ProjectDocument::projectReplaced, panel_, &RunPanel::clearForNewProject);
    projectFileChanged();
}

void RunController::connectPanel() {
    connect(panel_, &RunPanel::runRequested, this, [this] { startRun(); });
    connect(panel_, &RunPanel::runSucceeded, this, [this](const QString& dir) {
        panel_->refreshPastRuns();
        panel_->selectPastRun(dir);
        if (showRun(dir)) {
            context_.status->showMessage(
                tr("Run finished: its measured timeline is under the simulated one"), 8000);
        }
    });
    connect(panel_, &RunPanel::runFailed, this, [this](const QString& message) {
        context_.status->showMessage(
            tr("Run failed: %1").arg(message.section(QLatin1Char('\n'), -1)), 10000);
    });
    connect(panel_, &RunPanel::pastRunActivated, this, [this](const QString& dir) {
        if (showRun(dir)) {
            views_->setCurrentIndex(0);
        }
    });
}

void RunController::addRunAction(QMenu* simulate, QToolBar* bar) {
    run_action_ =
        simulate->addAction(tr("&Run on Local Devices"), QKeySequence(Qt::CTRL | Qt::Key_R), this,
                            [this] { startRun(); });
    run_action_->setStatusTip(
        tr("Train this layout for real on the local devices (pipewright run) and compare the "
           "measured timeline with the simulated one"));
    // The Run panel's button knows whether a run can start (a command line
    // found, none running); the menu item and toolbar button follow it.
    const auto follow_run_button = [this] {
        run_action_->setEnabled(panel_->runButton()->isEnabled());
        run_action_->setToolTip(panel_->runButton()->toolTip());
    };
    follow_run_button();
    connect(panel_, &RunPanel::runAvailabilityChanged, this, follow_run_button);
    bar->addAction(run_action_);
}

bool RunController::mayClose() {
    return !panel_->isRunning() ||
           QMessageBox::question(
               context_.window, tr("A run is going"),
               tr("A real run of this project is still going. Stop it and quit?")) ==
               QMessageBox::Yes;
}

void RunController::projectFileChanged() {
    const Project& project = context_.document->project();
    // Another project's run does not belong under this one's timeline; a
    // Save As of the layout that was run keeps it.
    if (measured_run_ &&
        !(measured_run_->project && same_run_plan(*measured_run_->project, project))) {
        measured_run_.reset();
        timeline_->clearMeasuredTimeline();
        panel_->clearComparison(tr("Run the layout to compare the simulation with reality."));
    }
    if (!panel_->isRunning()) {
        panel_->setDefaultSteps(project.training.steps);
    }
    panel_->setRunsDir(runs_dir_of(*context_.document), project);
}

bool RunController::startRun() {
    if (!ready_to_launch(*panel_, *views_)) {
        return false;
    }
    const Project& project = context_.document->project();
    const QString dir =
        new_run_dir(runs_dir_of(*context_.document), QString::fromStdString(project.model.name));
    if (!QDir().mkpath(dir)) {
        panel_->showError(tr("Cannot create the run folder %1").arg(dir));
        return false;
    }
    // The run takes the layout on screen, saved or not.
    const QString project_file = QDir(dir).filePath(QStringLiteral("project.json"));
    QString error;
    if (!write_run_project(project, context_.document->baseDir(), project_file, &error)) {
        panel_->showError(tr("Cannot write %1: %2").arg(project_file, error));
        return false;
    }
    RunRequest request;
    request.cli = panel_->cli().path;
    request.project_file = project_file;
    request.out_dir = dir;
    request.steps = panel_->steps();
    request.device = panel_->device();
    panel_->start(request);
    context_.status->showMessage(
        tr("Running %1 on the local devices…").arg(QString::fromStdString(project.model.name)),
        4000);
    return true;
}

bool RunController::showRun(const QString& dir) {
    QString error;
    auto run = load_measured_run(dir, &error);
    if (!run) {
        panel_->showError(error);
        return false;
    }
    measured_run_ = std::make_shared<const MeasuredRun>(std::move(*run));
    timeline_->setMeasuredTimeline(measured_run_->timeline, measured_run_->name);
    updateComparison();
    return true;
}

void RunController::updateComparison() {
    if (!measured_run_) {
        return;
    }
    const auto latest = context_.runner->latest();
    const SimulationReport* simulated = latest && latest->report ? &*latest->report : nullptr;
    QStringList notes;
    if (measured_run_->project &&
        !same_run_plan(*measured_run_->project, context_.document->project())) {
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
    panel_->showComparison(
        measured_run_->name,
        compare_run(simulated, measured_run_->timeline, measured_run_->iteration_time_s),
        notes.join(QLatin1Char(' ')));
}

}  // namespace pipewright::gui
