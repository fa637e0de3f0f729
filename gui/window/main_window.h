#pragma once

#include <QMainWindow>
#include <QSet>

#include "editor/inspector.h"
#include "timeline/sub_blocks.h"

class QAction;
class QLabel;
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
class ComparisonPanel;
class ExportController;
class FileController;
class HelpWindow;
class LayerPalette;
class MessageBar;
class MetricsPanel;
class ModelTableModel;
class PlanController;
class ProblemsPanel;
class ProfileController;
class ProjectDocument;
class RunController;
class RunPanel;
class SimulationRunner;
class TimelinePlot;
class TimelineView;
class TopologyCanvas;
class TopologyScene;
class TopologyView;
class TrainingBar;

// The studio's window: it builds the widgets, gives each feature its
// controller (file, export, run, profile, plan) and wires them together; it
// keeps what the views show of the simulation, and the editing of the model
// and the cluster.
class MainWindow : public QMainWindow {
    Q_OBJECT

  public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    // What the program's start asks of the window (main.cpp, the recovery
    // prompt, --screenshot); the features' own operations are their
    // controllers' (fileController() and the others below).
    bool openFile(const QString& path);
    void restoreRecovered(const Project& project, const QString& path, const QString& baseDir);
    // The window's size, place and docks as the user left them last time
    // (QSettings); false when none were saved (a first start).
    bool restoreLayout();
    void saveLayout() const;
    // Re-simulates on this thread and updates every view (--screenshot).
    void simulateNow();
    void setDarkTheme(bool dark);

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

    [[nodiscard]] QString lastRefusal() const { return last_refusal_; }
    // The strip above the views where refusals and failures are shown whole.
    [[nodiscard]] MessageBar* messageBar() const { return message_bar_; }
    [[nodiscard]] ProjectDocument* document() const { return document_; }
    [[nodiscard]] SimulationRunner* runner() const { return runner_; }
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

    // Each feature's state and actions, beside the widgets it drives.
    [[nodiscard]] FileController* fileController() const { return files_; }
    [[nodiscard]] ExportController* exportController() const { return exports_; }
    [[nodiscard]] RunController* runController() const { return run_; }
    [[nodiscard]] ProfileController* profileController() const { return profile_; }
    [[nodiscard]] PlanController* planController() const { return plan_; }

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
    // The features' controllers, on the widgets built before them.
    void buildControllers();
    // Each menu is built beside what it drives (main_window_menus.cpp).
    void buildActions();
    void buildEditMenu();  // main_window_edit.cpp
    void buildViewMenu();
    void buildSimulateMenu();
    void buildHelpMenu();
    void buildLayout();
    void connectViews();
    void connectTopology();  // main_window_topology.cpp
    // A press on the canvas outside any device or container: the node box
    // under it, or nothing.
    void selectCanvasBackground();
    void projectChanged();
    // The canvas with the figures of `report` (null before a simulation),
    // every replica's devices included.
    void rebuildCanvas(const Project& project, const SimulationReport* report);
    // The timeline's keys: the tensor-parallel all-reduce's with tensor
    // parallelism, the busy share's while a group of lanes is collapsed.
    // The keys of the blocks, and of the sub-blocks the timeline draws.
    void setLegend(const SubBlockSeconds& sub_blocks);
    // " · 16 replicas, ZeRO-1, drawn once (all alike)" for the status bar.
    [[nodiscard]] QString replicasSummary(const SimulationReport& report) const;
    void simulationDone();
    void showProblems();
    void selectProblem(const QString& path);
    void refuse(const QString& message);
    void updateTitle();
    void selectLayers(int first, int last);
    QString baseDir() const;

    ProjectDocument* document_ = nullptr;
    SimulationRunner* runner_ = nullptr;
    ModelTableModel* model_ = nullptr;
    QTableView* table_ = nullptr;
    SubBlockSeconds legend_sub_blocks_;  // what the legend was last set for
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
    QAction* dark_action_ = nullptr;
    RunPanel* run_panel_ = nullptr;
    HelpWindow* help_window_ = nullptr;  // made on first use
    FileController* files_ = nullptr;
    ExportController* exports_ = nullptr;
    RunController* run_ = nullptr;
    ProfileController* profile_ = nullptr;
    PlanController* plan_ = nullptr;
    QString last_refusal_;
    QSet<QString> problem_devices_;
    QPoint canvas_press_;
    QToolBar* run_bar_ = nullptr;  // the Run button, on a second row when narrow
    AdaptiveLayout* adaptive_ = nullptr;
};

}  // namespace pipewright::gui
