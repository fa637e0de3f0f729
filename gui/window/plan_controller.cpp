#include "window/plan_controller.h"

#include <QAction>
#include <QHBoxLayout>
#include <QKeySequence>
#include <QLabel>
#include <QMenu>
#include <QProgressBar>
#include <QPushButton>
#include <QStatusBar>
#include <QStringList>

#include "document/project_document.h"
#include "pipewright/core/memory_headroom.h"
#include "pipewright/sim/profile_coverage.h"
#include "studio_core/format/format.h"
#include "studio_core/simulation/plan_runner.h"
#include "studio_core/simulation/simulation_runner.h"
#include "window/message_bar.h"

namespace pipewright::gui {

PlanController::PlanController(const ControllerContext& context, QObject* parent)
    : QObject(parent), context_(context), planner_(new PlanRunner(this)) {
    buildStatus();
    connectPlanner();
    // A plan is made for the layout it started from: an edit (or another
    // project) makes it stale, so it is stopped rather than applied later.
    connect(context_.document, &ProjectDocument::projectChanged, this, [this] {
        if (planner_->isRunning()) {
            planner_->cancel();
        }
    });
}

void PlanController::buildStatus() {
    plan_status_ = new QWidget(context_.window);
    plan_status_->setObjectName(QStringLiteral("planStatus"));
    auto* row = new QHBoxLayout(plan_status_);
    row->setContentsMargins(0, 0, 0, 0);
    auto* spinner = new QProgressBar(plan_status_);
    spinner->setRange(0, 0);  // busy: the planner cannot say how far it is
    spinner->setMaximumWidth(90);
    spinner->setTextVisible(false);
    plan_label_ = new QLabel(tr("Auto-plan…"), plan_status_);
    auto* cancel = new QPushButton(tr("Cancel"), plan_status_);
    cancel->setObjectName(QStringLiteral("cancelPlanButton"));
    cancel->setToolTip(tr("Stop planning; the layout stays as it is"));
    cancel->setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Fixed);
    row->addWidget(plan_label_);
    row->addWidget(spinner);
    row->addWidget(cancel);
    context_.status->addPermanentWidget(plan_status_);
    plan_status_->hide();
    connect(cancel, &QPushButton::clicked, planner_, &PlanRunner::cancel);
}

void PlanController::connectPlanner() {
    connect(planner_, &PlanRunner::started, this, [this] {
        plan_label_->setText(tr("Auto-plan…"));
        plan_status_->show();
        plan_action_->setEnabled(false);
    });
    connect(planner_, &PlanRunner::progress, this, [this](int simulations) {
        plan_label_->setText(tr("Auto-plan: %n layout(s) simulated", nullptr, simulations));
    });
    const auto idle = [this] {
        plan_status_->hide();
        plan_action_->setEnabled(true);
    };
    connect(planner_, &PlanRunner::cancelled, this, [this, idle] {
        idle();
        context_.status->showMessage(tr("Auto-plan cancelled; the layout is unchanged"), 8000);
    });
    connect(planner_, &PlanRunner::failed, this, [this, idle](const QString& message) {
        idle();
        emit refused(tr("Auto-plan: %1").arg(message));
    });
    connect(planner_, &PlanRunner::finished, this, [this, idle] {
        idle();
        applyPlan();
    });
}

void PlanController::addPlanAction(QMenu* simulate) {
    plan_action_ =
        simulate->addAction(tr("&Auto-plan"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_P), this,
                            [this] { autoPlan(); });
    plan_action_->setObjectName(QStringLiteral("autoPlanAction"));
    plan_action_->setStatusTip(
        tr("Find the fastest split of the layers over the devices, schedule and micro-batch "
           "count that fits in memory (undoable)"));
}

bool PlanController::autoPlan() {
    if (planner_->isRunning()) {
        return false;
    }
    planner_->start(context_.document->project(), context_.document->baseDir(),
                    context_.runner->costs());
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

// What applying `result` changed, in one message: the iteration time before
// and after, and why this schedule.
QString planOutcome(const PlanResult& result) {
    const double before = result.input.report ? result.input.report->iteration_time_s : 0;
    const double after = result.plan.report ? result.plan.report->iteration_time_s : 0;
    if (before > 0 && after > 0) {
        return QObject::tr("Auto-plan: %1 → %2 per iteration (%3 % faster)%4")
            .arg(format_duration(before), format_duration(after))
            .arg((before / after - 1) * 100, 0, 'f', 1)
            .arg(scheduleChoice(result));
    }
    if (after > 0) {
        // The layout as set did not simulate (an invalid tensor size, a
        // schedule that cannot run it): there is nothing to compare with.
        return QObject::tr(
                   "Auto-plan: the layout as set did not run%1; the plan takes %2 per iteration%3")
            .arg(result.input.reason.empty()
                     ? QString()
                     : QStringLiteral(" (%1)").arg(QString::fromStdString(result.input.reason)))
            .arg(format_duration(after))
            .arg(scheduleChoice(result));
    }
    return QObject::tr("Auto-plan: applied the plan found");
}

}  // namespace

void PlanController::applyPlan() {
    ProjectDocument* document = context_.document;
    const auto attempt = planner_->latest();
    if (attempt->input != document->project()) {
        emit refused(tr("Auto-plan: the project changed while planning; plan again"));
        return;
    }
    const PlanResult& result = *attempt->result;
    if (!result.feasible) {
        emit refused(tr("Auto-plan found no layout that fits: %1")
                         .arg(QString::fromStdString(result.why_nothing_fits)));
        return;
    }
    // The outcome stays in the message bar until dismissed: the status bar
    // lost it to the re-simulation the edit starts, within a fraction of a
    // second.
    if (result.project == document->project()) {
        context_.messages->showMessage(
            tr("Auto-plan: the current layout is already the fastest found"),
            MessageBar::Kind::result);
        return;
    }
    document->edit(tr("Auto-plan"), result.project);
    QString said = planOutcome(result);
    // Planned from measured times at sizes the profile lacks: said, since
    // the figures above are then guesses (issue 30).
    if (const auto& profile = attempt->costs.profile; profile && result.plan.report) {
        if (auto size = profile_size_warning(*profile, result.plan.report->microbatch_size)) {
            QString sentence = QString::fromStdString(*size);
            sentence[0] = sentence[0].toUpper();
            said += QStringLiteral(". ") + sentence + QLatin1Char('.');
        }
    }
    // What the plan recomputes, where it narrowed a recomputation of every
    // unit; a narrowed recomputation it replaced is said, not dropped in
    // silence.
    if (!result.recomputation_choice.empty()) {
        said += tr(". It recomputes %1").arg(QString::fromStdString(result.recomputation_choice));
    } else if (const auto& given = attempt->input.training.recompute_blocks;
               given && !result.project.training.recompute_blocks) {
        said += result.project.training.full_recompute()
                    ? tr(". It recomputes every block, not the first %n of each stage: the "
                         "planner prices recomputation per stage",
                         nullptr, *given)
                    : tr(". It recomputes nothing, where the project recomputed the first %n "
                         "blocks of each stage",
                         nullptr, *given);
    }
    // A layout packed to within NCCL's buffers of a GPU's memory, which the
    // model does not count (memory_headroom.h).
    if (result.plan.report && attempt->costs.memory_margin_bytes == 0) {
        if (const auto tight = tightest_gpu(result.plan.report->devices)) {
            said += QStringLiteral(". ") + QString::fromStdString(tight_memory_note(*tight));
        }
    }
    // Kernels shorter than an eager framework's host issues them: the
    // figures above are the GPUs' side only.
    if (!attempt->host_pace.empty()) {
        said +=
            tr(". Its kernels are shorter than an eager framework's host issues them, so the "
               "real run is likely host-bound (the summary's tool tip says more)");
    }
    context_.messages->showMessage(said, MessageBar::Kind::result);
}

}  // namespace pipewright::gui
