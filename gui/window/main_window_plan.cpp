// The Auto-plan action: the same planner as `pipewright plan`, run in the
// background (seconds on large clusters) and applied as one undoable edit.
#include <QHBoxLayout>
#include <QKeySequence>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QProgressBar>
#include <QPushButton>
#include <QStatusBar>
#include <QStringList>
#include <QTabWidget>
#include <QToolBar>

#include "document/project_document.h"
#include "metrics/comparison_panel.h"
#include "run/run_panel.h"
#include "studio_core/plan_runner.h"
#include "studio_core/simulation_runner.h"
#include "window/main_window.h"

#include "pipewright/sim/profile_coverage.h"
#include "studio_core/format.h"
#include "window/message_bar.h"

namespace pipewright::gui {

void MainWindow::connectPlan() {
    planner_ = new PlanRunner(this);
    plan_status_ = new QWidget(this);
    plan_status_->setObjectName(QStringLiteral("planStatus"));
    auto* row = new QHBoxLayout(plan_status_);
    row->setContentsMargins(0, 0, 0, 0);
    auto* spinner = new QProgressBar(plan_status_);
    spinner->setRange(0, 0);  // busy: the planner cannot say how far it is
    spinner->setMaximumWidth(90);
    spinner->setTextVisible(false);
    auto* label = new QLabel(tr("Auto-plan…"), plan_status_);
    auto* cancel = new QPushButton(tr("Cancel"), plan_status_);
    cancel->setObjectName(QStringLiteral("cancelPlanButton"));
    cancel->setToolTip(tr("Stop planning; the layout stays as it is"));
    cancel->setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Fixed);
    row->addWidget(label);
    row->addWidget(spinner);
    row->addWidget(cancel);
    statusBar()->addPermanentWidget(plan_status_);
    plan_status_->hide();

    connect(cancel, &QPushButton::clicked, planner_, &PlanRunner::cancel);
    connect(planner_, &PlanRunner::started, this, [this, label] {
        label->setText(tr("Auto-plan…"));
        plan_status_->show();
        plan_action_->setEnabled(false);
    });
    connect(planner_, &PlanRunner::progress, this, [label](int simulations) {
        label->setText(tr("Auto-plan: %n layout(s) simulated", nullptr, simulations));
    });
    const auto idle = [this] {
        plan_status_->hide();
        plan_action_->setEnabled(true);
    };
    connect(planner_, &PlanRunner::cancelled, this, [this, idle] {
        idle();
        statusBar()->showMessage(tr("Auto-plan cancelled; the layout is unchanged"), 8000);
    });
    connect(planner_, &PlanRunner::failed, this, [this, idle](const QString& message) {
        idle();
        refuse(tr("Auto-plan: %1").arg(message));
    });
    connect(planner_, &PlanRunner::finished, this, [this, idle] {
        idle();
        applyPlan();
    });
    // A plan is made for the layout it started from: an edit (or another
    // project) makes it stale, so it is stopped rather than applied later.
    connect(document_, &ProjectDocument::projectChanged, this, [this] {
        if (planner_->isRunning()) {
            planner_->cancel();
        }
    });
}

bool MainWindow::autoPlan() {
    if (planner_->isRunning()) {
        return false;
    }
    planner_->start(document_->project(), baseDir(), runner_->costs());
    return true;
}

namespace {

// " · zb-h2 beat zb-h1 (56.5 ms), 1f1b (58.8 ms)": why the plan's schedule,
// from the best split of each schedule the planner simulated.
QString scheduleChoice(const PlanResult& result) {
    if (result.schedules.size() < 2 || result.schedules.front().schedule != result.plan.schedule) {
        return {};
    }
    QStringList others;
    for (std::size_t i = 1; i < result.schedules.size(); ++i) {
        const auto& s = result.schedules[i];
        const QString name = QString::fromStdString(s.schedule);
        others << (s.iteration_s ? QObject::tr("%1 (%2)").arg(name, format_duration(*s.iteration_s))
                                 : QObject::tr("%1 (does not fit)").arg(name));
    }
    return QObject::tr(" · %1 beat %2")
        .arg(QString::fromStdString(result.plan.schedule), others.join(QStringLiteral(", ")));
}

}  // namespace

void MainWindow::applyPlan() {
    const auto attempt = planner_->latest();
    if (attempt->input != document_->project()) {
        refuse(tr("Auto-plan: the project changed while planning; plan again"));
        return;
    }
    const PlanResult& result = *attempt->result;
    if (!result.feasible) {
        refuse(tr("Auto-plan found no layout that fits: %1")
                   .arg(QString::fromStdString(result.why_nothing_fits)));
        return;
    }
    // The outcome stays in the message bar until dismissed: the status bar
    // lost it to the re-simulation the edit starts, within a fraction of a
    // second.
    if (result.project == document_->project()) {
        message_bar_->showMessage(tr("Auto-plan: the current layout is already the fastest found"),
                                  MessageBar::Kind::result);
        return;
    }
    const double before = result.input.report ? result.input.report->iteration_time_s : 0;
    const double after = result.plan.report ? result.plan.report->iteration_time_s : 0;
    document_->edit(tr("Auto-plan"), result.project);
    QString said;
    if (before > 0 && after > 0) {
        said = tr("Auto-plan: %1 → %2 per iteration (%3 % faster)%4")
                   .arg(format_duration(before), format_duration(after))
                   .arg((before / after - 1) * 100, 0, 'f', 1)
                   .arg(scheduleChoice(result));
    } else if (after > 0) {
        // The layout as set did not simulate (an invalid tensor size, a
        // schedule that cannot run it): there is nothing to compare with.
        said =
            tr("Auto-plan: the layout as set did not run%1; the plan takes %2 per iteration%3")
                .arg(result.input.reason.empty()
                         ? QString()
                         : QStringLiteral(" (%1)").arg(QString::fromStdString(result.input.reason)))
                .arg(format_duration(after))
                .arg(scheduleChoice(result));
    } else {
        said = tr("Auto-plan: applied the plan found");
    }
    // Planned from measured times at sizes the profile lacks: said, since
    // the figures above are then guesses (issue 30).
    if (const auto& profile = attempt->costs.profile; profile && result.plan.report) {
        if (auto size = profile_size_warning(*profile, result.plan.report->microbatch_size)) {
            QString sentence = QString::fromStdString(*size);
            sentence[0] = sentence[0].toUpper();
            said += QStringLiteral(". ") + sentence + QLatin1Char('.');
        }
    }
    message_bar_->showMessage(said, MessageBar::Kind::result);
}

void MainWindow::buildSimulateMenu() {
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
}

}  // namespace pipewright::gui
