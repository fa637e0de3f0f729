#pragma once

#include <QObject>

#include "window/controller_context.h"

class QAction;
class QLabel;
class QMenu;

namespace pipewright::gui {

class PlanRunner;

// Simulate ▸ Auto-plan: the same planner as `pipewright plan`, run in the
// background (seconds on large clusters) behind a busy indicator in the
// status bar, and applied as one undoable edit.
class PlanController : public QObject {
    Q_OBJECT

  public:
    explicit PlanController(const ControllerContext& context, QObject* parent = nullptr);

    // Starts the planner; when it finishes, its best placement, schedule and
    // micro-batches replace the project's as one undoable edit. False when a
    // plan is already running.
    bool autoPlan();
    [[nodiscard]] PlanRunner* planRunner() const { return planner_; }

    // Simulate ▸ Auto-plan, off while a plan runs.
    void addPlanAction(QMenu* simulate);

  signals:
    // The plan cannot be applied, with why (the window shows refusals).
    void refused(const QString& message);

  private:
    // The busy indicator and its Cancel button, in the status bar.
    void buildStatus();
    void connectPlanner();
    void applyPlan();

    ControllerContext context_;
    PlanRunner* planner_ = nullptr;
    QAction* plan_action_ = nullptr;
    QWidget* plan_status_ = nullptr;
    QLabel* plan_label_ = nullptr;
};

}  // namespace pipewright::gui
