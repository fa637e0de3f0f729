#pragma once

#include <QMainWindow>
#include <QSet>
#include <memory>

#include "editor/inspector.h"
#include "studio_core/device_calibrations.h"
#include "studio_core/export_path.h"

class QAction;
class QLabel;
class QMenu;
class QTableView;
class QTabWidget;
class QToolBar;
class QDockWidget;

namespace pipewright {
struct Project;
struct SimulationReport;
}  // namespace pipewright

namespace pipewright::gui {

class AdaptiveLayout;
class HelpWindow;

class ComparisonPanel;
class LayerPalette;
class MetricsPanel;
class ModelTableModel;
class ProblemsPanel;
class MessageBar;
class PlanRunner;
class ProjectDocument;
class RunPanel;
class SimulationRunner;
struct MeasuredRun;
class TimelinePlot;
class TimelineView;
class TopologyCanvas;
class TopologyScene;
class TopologyView;
class TrainingBar;

class MainWindow : public QMainWindow {
    Q_OBJECT

  public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    // Opens a project file without asking about unsaved changes; false (and
    // a status message) when the file cannot be read at all.
    bool openFile(const QString& path);
    // The window's size, place and docks as the user left them last time
    // (QSettings); false when none were saved (a first start).
    bool restoreLayout();
    void saveLayout() const;
    // Edits an earlier session autosaved (recovery_prompt.h), shown modified.
    void restoreRecovered(const Project& project, const QString& path, const QString& baseDir);
    bool saveTo(const QString& path);
    // Places layers [first, last] on `device`; false when refused, with the
    // reason in lastRefusal() and the refused() signal.
    bool placeLayers(int first, int last, const QString& device);
    // Renames the node "n", container "n/c" or device "n/c/d" at `path`;
    // false when refused (the reason as for placeLayers).
    bool renameTopologyItem(const QString& path, const QString& name);
    // Removes the node, container or device at `path` with its placement.
    void removeTopologyItem(const QString& path);
    // Inserts a palette entry at `row` (-1: end), optionally placing it on a device.
    bool insertPaletteEntry(const QString& entry, int row, const QString& device = {});
    // Re-simulates on this thread and updates every view (--screenshot).
    void simulateNow();
    // Starts the planner in the background (main_window_plan.cpp); when it
    // finishes, its best placement, schedule and micro-batches replace the
    // project's as one undoable edit. False when a plan is already running.
    bool autoPlan();
    void setDarkTheme(bool dark);
    // Real runs (main_window_run.cpp). startRun writes the project as edited
    // into a fresh run folder and starts `pipewright run` on it; false with
    // the reason in the Run panel when it cannot start.
    bool startRun();
    // Shows a finished run's measured timeline under the simulated one and
    // its simulated-vs-measured table; false with the reason when the folder
    // cannot be read.
    bool showRun(const QString& dir);
    // Profile this machine: writes the layout on screen beside the project's
    // runs and starts `pipewright profile` on it; the profile it writes is
    // kept there (measured_costs.h) and used at once. False with the reason
    // in the Run panel when it cannot start.
    bool startProfile();
    // Where this project's runs go and are listed from.
    [[nodiscard]] QString runsDir() const;

    // What File ▸ Export writes (main_window_file.cpp): the timeline (PNG,
    // SVG, PDF, Chrome trace), the Metrics or Comparison charts (PNG, SVG,
    // PDF) or the schedule (CSV), to `path` as given; false with the reason.
    enum class ExportView { timeline, metrics, comparison, schedule };
    bool exportTo(ExportView view, ExportFormat format, const QString& path, QString* error);

    // File ▸ Export ▸ Launch Files (and the Run tab's button): what a
    // cluster user submits to run the saved project (`pipewright
    // launch-files`), written into `folder`; false with the reason. The
    // project must be saved, since every file runs it by its path.
    bool exportLaunchFiles(const QString& folder, QString* error);
    // Asks to save first where needed, then where, then exportLaunchFiles.
    void exportLaunchFilesWithDialog();

    [[nodiscard]] QString lastRefusal() const { return last_refusal_; }
    // The strip above the views where refusals and failures are shown whole.
    [[nodiscard]] MessageBar* messageBar() const { return message_bar_; }
    [[nodiscard]] ProjectDocument* document() const { return document_; }
    [[nodiscard]] SimulationRunner* runner() const { return runner_; }
    [[nodiscard]] PlanRunner* planRunner() const { return planner_; }
    [[nodiscard]] TrainingBar* trainingBar() const { return training_; }
    [[nodiscard]] TimelinePlot* timelinePlot() const { return timeline_; }
    [[nodiscard]] HelpWindow* helpWindow() const { return help_window_; }
    [[nodiscard]] TimelineView* timelineView() const { return timeline_view_; }
    [[nodiscard]] MetricsPanel* metricsPanel() const { return metrics_; }
    [[nodiscard]] ComparisonPanel* comparisonPanel() const { return comparison_; }
    [[nodiscard]] ModelTableModel* modelTableModel() const { return model_; }
    [[nodiscard]] QTableView* modelTable() const { return table_; }
    [[nodiscard]] TopologyScene* topologyScene() const { return scene_; }
    [[nodiscard]] ProblemsPanel* problemsPanel() const { return problems_; }
    [[nodiscard]] Inspector* inspector() const { return inspector_; }
    [[nodiscard]] QTabWidget* views() const { return tabs_; }
    [[nodiscard]] TopologyView* topologyView() const { return view_; }
    [[nodiscard]] TopologyCanvas* topologyCanvas() const { return canvas_; }
    [[nodiscard]] RunPanel* runPanel() const { return run_panel_; }
    [[nodiscard]] QAction* runAction() const { return run_action_; }

    // Prices every simulation, comparison and plan with the device
    // calibrations in `paths` (`pipewright calibrate` files; empty: none),
    // for this and later sessions. False with the reason when a file cannot
    // be used; the calibrations in use stay (main_window_run.cpp).
    bool useDeviceCalibrations(const QStringList& paths, QString* error);
    [[nodiscard]] const DeviceCalibrations& deviceCalibrations() const { return calibrations_; }

  signals:
    void refused(const QString& message);

  protected:
    void closeEvent(QCloseEvent* event) override;
    // Notes where the canvas was pressed, to tell a node box from the
    // background (main_window_topology.cpp).
    bool eventFilter(QObject* watched, QEvent* event) override;

  private:
    [[nodiscard]] QWidget* buildTimelinePage();
    void buildDocksAndBars();
    void buildActions();
    void buildFileMenu();
    void buildExportMenu(QMenu* exports);
    void buildEditMenu();
    void buildViewMenu();
    void buildSimulateMenu();
    void buildHelpMenu();
    void buildLayout();
    void connectViews();
    void connectTopology();  // main_window_topology.cpp
    void connectRun();       // main_window_run.cpp
    void connectPlan();      // main_window_plan.cpp
    void applyPlan();
    // A press on the canvas outside any device or container: the node box
    // under it, or nothing.
    void selectCanvasBackground();
    void projectFileChanged();
    void updateRunComparison();
    // Before a run or a profile: none is going and the command line is
    // found; otherwise false, with the reason in the Run panel.
    bool readyToLaunch();
    // Reads the project's profile, if any, into the Run panel's costs bar;
    // `preferMeasured` chooses it when there is one.
    void loadMeasuredCosts(bool preferMeasured);
    // Simulates with the costs chosen in the Run panel and the device
    // calibrations.
    void applyCosts();
    // The calibrations of the last session, from the settings.
    void restoreDeviceCalibrations();
    // Simulate ▸ Use Device Calibration…: a file dialog.
    void chooseDeviceCalibrations();
    void projectChanged();
    // The canvas with the figures of `report` (null before a simulation),
    // every replica's devices included.
    void rebuildCanvas(const Project& project, const SimulationReport* report);
    // The timeline's key, with the tensor-parallel all-reduces where they are drawn.
    // The timeline's keys: the tensor-parallel all-reduce's with tensor
    // parallelism, the busy share's while a group of lanes is collapsed.
    void setLegend(bool tensor_parallel);
    // " · 16 replicas, ZeRO-1, drawn once (all alike)" for the status bar.
    [[nodiscard]] QString replicasSummary(const SimulationReport& report) const;
    void simulationDone();
    void showProblems();
    void selectProblem(const QString& path);
    void refuse(const QString& message);
    void updateTitle();
    void selectLayers(int first, int last);
    QString baseDir() const;

    // File handling (main_window_file.cpp).
    bool maybeSave();
    void newFromExample(const QString& path);
    void openDialog();
    void importDialog();
    bool save();
    bool saveAs();
    void addRecent(const QString& path);
    void fillRecentMenu();
    // Asks where (the name's extension checked against `format`), then exportTo.
    void exportWithDialog(ExportView view, ExportFormat format);
    // Why `view` cannot be exported now; empty when it can.
    [[nodiscard]] QString nothingToExport(ExportView view) const;

    ProjectDocument* document_ = nullptr;
    SimulationRunner* runner_ = nullptr;
    ModelTableModel* model_ = nullptr;
    QTableView* table_ = nullptr;
    bool legend_tensor_ = false;  // what the legend was last set for
    TopologyScene* scene_ = nullptr;
    TopologyView* view_ = nullptr;  // inside canvas_
    TopologyCanvas* canvas_ = nullptr;
    LayerPalette* palette_ = nullptr;
    Inspector* inspector_ = nullptr;
    TrainingBar* training_ = nullptr;
    TimelinePlot* timeline_ = nullptr;  // inside timeline_view_
    TimelineView* timeline_view_ = nullptr;
    MetricsPanel* metrics_ = nullptr;
    ComparisonPanel* comparison_ = nullptr;
    ProblemsPanel* problems_ = nullptr;
    QDockWidget* problems_dock_ = nullptr;
    QTabWidget* tabs_ = nullptr;
    QLabel* summary_ = nullptr;
    MessageBar* message_bar_ = nullptr;
    QLabel* legend_ = nullptr;
    QMenu* recent_menu_ = nullptr;
    QAction* dark_action_ = nullptr;
    RunPanel* run_panel_ = nullptr;
    QAction* run_action_ = nullptr;
    PlanRunner* planner_ = nullptr;
    QAction* plan_action_ = nullptr;
    HelpWindow* help_window_ = nullptr;  // made on first use
    QWidget* plan_status_ = nullptr;     // busy indicator and Cancel, in the status bar
    std::shared_ptr<const MeasuredRun> measured_run_;  // shown under the simulation
    DeviceCalibrations calibrations_;
    QAction* forget_calibrations_ = nullptr;
    QString last_refusal_;
    // Another project was opened: its own profile, not this one's, applies.
    bool project_replaced_ = true;
    QSet<QString> problem_devices_;
    QPoint canvas_press_;
    QToolBar* run_bar_ = nullptr;  // the Run button, on a second row when narrow
    AdaptiveLayout* adaptive_ = nullptr;
};

}  // namespace pipewright::gui
