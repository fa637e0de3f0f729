// The Auto-plan action: the same planner as `pipewright plan`, applied as one
// undoable edit.
#include <QApplication>
#include <QMessageBox>
#include <QStatusBar>

#include "main_window.h"
#include "pipewright/sim/planner.h"
#include "project_document.h"

namespace pipewright::gui {

bool MainWindow::autoPlan() {
    PlanOptions options;
    options.base_dir = base_dir().toStdString();
    PlanResult result;
    try {
        // Under a second even for thousands of layers (bench/README.md), so it
        // runs here rather than in the background.
        QApplication::setOverrideCursor(Qt::WaitCursor);
        result = plan_pipeline(document_->project(), options);
        QApplication::restoreOverrideCursor();
    } catch (const std::exception& e) {
        QApplication::restoreOverrideCursor();
        refuse(tr("Auto-plan: %1").arg(QString::fromStdString(e.what())));
        return false;
    }
    if (!result.feasible) {
        refuse(tr("Auto-plan found no layout that fits: %1")
                   .arg(QString::fromStdString(result.why_nothing_fits)));
        return false;
    }
    if (result.project == document_->project()) {
        statusBar()->showMessage(tr("Auto-plan: the current layout is already the fastest found"),
                                 8000);
        return true;
    }
    const double before = result.input.report ? result.input.report->iteration_time_s : 0;
    const double after = result.plan.report ? result.plan.report->iteration_time_s : 0;
    document_->edit(tr("Auto-plan"), result.project);
    if (before > 0 && after > 0) {
        statusBar()->showMessage(tr("Auto-plan: %1 ms → %2 ms per iteration (%3 % faster)")
                                     .arg(before * 1e3, 0, 'f', 1)
                                     .arg(after * 1e3, 0, 'f', 1)
                                     .arg((before / after - 1) * 100, 0, 'f', 1),
                                 10000);
    }
    return true;
}

}  // namespace pipewright::gui
