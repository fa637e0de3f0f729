#pragma once

class QStatusBar;
class QWidget;

namespace pipewright::gui {

class MessageBar;
class ProjectDocument;
class SimulationRunner;

// What the main window lends each feature's controller (run, profile, plan,
// export, file): the project and its simulation, the two places that speak
// to the user, and the window as the parent of its dialogs, so that a
// controller reaches no widget it was not handed.
struct ControllerContext {
    QWidget* window = nullptr;
    ProjectDocument* document = nullptr;
    SimulationRunner* runner = nullptr;
    // Whole sentences that stay until dismissed: refusals, failures, results.
    MessageBar* messages = nullptr;
    // What just happened, for a few seconds.
    QStatusBar* status = nullptr;
};

}  // namespace pipewright::gui
