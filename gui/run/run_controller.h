#pragma once

#include <QObject>
#include <QString>
#include <memory>

#include "window/controller_context.h"

class QAction;
class QMenu;
class QTabWidget;
class QToolBar;

namespace pipewright::gui {

class RunPanel;
class TimelinePlot;
struct MeasuredRun;

// Real runs from the studio: the Run panel asks, this writes the project as
// edited into a fresh run folder, starts `pipewright run` on it, and draws
// the measured timeline under the simulated one when it ends.
class RunController : public QObject {
    Q_OBJECT

  public:
    RunController(const ControllerContext& context, RunPanel* panel, TimelinePlot* timeline,
                  QTabWidget* views, QObject* parent = nullptr);

    // Writes the project as edited into a fresh run folder and starts
    // `pipewright run` on it; false with the reason in the Run panel when it
    // cannot start.
    bool startRun();
    // Shows a finished run's measured timeline under the simulated one and
    // its simulated-vs-measured table; false with the reason when the folder
    // cannot be read.
    bool showRun(const QString& dir);
    // The simulated-vs-measured table, again for the latest simulation.
    void updateComparison();

    // Simulate ▸ Run on Local Devices, also a button on `bar`; it follows
    // the Run panel's button.
    void addRunAction(QMenu* simulate, QToolBar* bar);
    [[nodiscard]] QAction* runAction() const { return run_action_; }

    // Closing the window stops a run that is still going: asks first; false
    // when the user keeps it.
    [[nodiscard]] bool mayClose();

  private:
    void connectPanel();
    void projectFileChanged();

    ControllerContext context_;
    RunPanel* panel_;
    TimelinePlot* timeline_;
    QTabWidget* views_;
    QAction* run_action_ = nullptr;
    std::shared_ptr<const MeasuredRun> measured_run_;  // shown under the simulation
};

// Where the project's runs (and its profile) go and are listed from.
[[nodiscard]] QString runs_dir_of(const ProjectDocument& document);

// Before a run or a profile: none is going and the command line is found
// (the Run tab is then shown); otherwise false, with the reason in the Run
// panel.
[[nodiscard]] bool ready_to_launch(RunPanel& panel, QTabWidget& views);

}  // namespace pipewright::gui
