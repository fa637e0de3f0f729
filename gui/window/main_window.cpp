#include "window/main_window.h"

#include <QAction>
#include <QCloseEvent>
#include <QDockWidget>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QMenu>
#include <QScrollArea>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>

#include "document/project_document.h"
#include "editor/layer_palette.h"
#include "editor/model_table_delegate.h"
#include "editor/model_table_model.h"
#include "editor/problems_panel.h"
#include "editor/training_bar.h"
#include "metrics/comparison_panel.h"
#include "metrics/metrics_panel.h"
#include "run/profile_controller.h"
#include "run/run_controller.h"
#include "run/run_panel.h"
#include "studio_core/simulation/simulation_runner.h"
#include "timeline/timeline_plot.h"
#include "timeline/timeline_view.h"
#include "topology/topology_canvas.h"
#include "topology/topology_scene.h"
#include "topology/topology_view.h"
#include "window/adaptive_layout.h"
#include "window/controller_context.h"
#include "window/export_controller.h"
#include "window/file_controller.h"
#include "window/message_bar.h"
#include "window/plan_controller.h"

namespace pipewright::gui {

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
    setObjectName(QStringLiteral("mainWindow"));
    document_ = new ProjectDocument(this);
    runner_ = new SimulationRunner(this);
    model_ = new ModelTableModel(document_, this);
    scene_ = new TopologyScene(this);
    buildLayout();
    buildControllers();
    buildActions();
    connectViews();
    // Only now, since other costs re-simulate: every view must listen.
    profile_->restoreCosts();
    statusBar()->showMessage(tr("Ready"), 2000);
    updateTitle();
}

MainWindow::~MainWindow() = default;

void MainWindow::buildLayout() {
    table_ = new QTableView(this);
    table_->setModel(model_);
    table_->setItemDelegate(new ModelTableDelegate(document_, table_));
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::ContiguousSelection);
    table_->setDragEnabled(true);
    table_->setAcceptDrops(true);
    table_->setDropIndicatorShown(true);
    table_->setDragDropMode(QAbstractItemView::DragDrop);
    table_->setDefaultDropAction(Qt::MoveAction);
    table_->setAlternatingRowColors(true);
    // Tab leaves the table for the next view (the arrows move between
    // cells): it used to walk 110+ cells before reaching the canvas.
    table_->setTabKeyNavigation(false);
    table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);
    table_->horizontalHeader()->setStretchLastSection(true);
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table_->verticalHeader()->hide();
    table_->setToolTip(tr("Drag rows onto a device to place them, or within the table to reorder"));

    canvas_ = new TopologyCanvas(scene_, this);
    view_ = canvas_->view();

    auto* top = new QSplitter(Qt::Horizontal, this);
    top->addWidget(table_);
    top->addWidget(canvas_);
    top->setStretchFactor(0, 3);
    top->setStretchFactor(1, 2);
    top->setSizes({640, 420});

    metrics_ = new MetricsPanel(this);
    comparison_ = new ComparisonPanel(this);
    tabs_ = new QTabWidget(this);
    tabs_->addTab(buildTimelinePage(), tr("Timeline"));
    tabs_->addTab(metrics_, tr("Metrics"));
    tabs_->addTab(comparison_, tr("Comparison"));
    run_panel_ = new RunPanel(this);
    tabs_->addTab(run_panel_, tr("Run"));

    // The views scroll, rather than set the window's minimum width, when the
    // window is narrower than a view needs: the docks beside keep their width.
    auto* views = new QScrollArea(this);
    views->setWidget(tabs_);
    views->setWidgetResizable(true);
    views->setFrameShape(QFrame::NoFrame);

    auto* central = new QSplitter(Qt::Vertical, this);
    central->addWidget(top);
    central->addWidget(views);
    central->setStretchFactor(0, 2);
    central->setStretchFactor(1, 3);
    central->setSizes({380, 520});
    message_bar_ = new MessageBar(this);
    auto* centre = new QWidget(this);
    auto* centre_layout = new QVBoxLayout(centre);
    centre_layout->setContentsMargins(0, 0, 0, 0);
    centre_layout->setSpacing(2);
    centre_layout->addWidget(message_bar_);
    centre_layout->addWidget(central, 1);
    setCentralWidget(centre);

    buildDocksAndBars();

    summary_ = new QLabel(this);
    summary_->setObjectName(QStringLiteral("simulationSummary"));
    statusBar()->addPermanentWidget(summary_);
    // A message and the summary share one line: when both do not fit, the
    // message is shown whole and the summary steps aside until it goes.
    connect(statusBar(), &QStatusBar::messageChanged, this, [this](const QString& message) {
        const int needed = statusBar()->fontMetrics().horizontalAdvance(message) +
                           summary_->sizeHint().width() + 48;
        summary_->setVisible(message.isEmpty() || needed <= statusBar()->width());
    });
}

// The timeline tab: the legend and the Arrows and Fit buttons over the plot.
QWidget* MainWindow::buildTimelinePage() {
    timeline_view_ = new TimelineView(this);
    timeline_ = timeline_view_->plot();
    legend_ = new QLabel(this);
    legend_->setObjectName(QStringLiteral("timelineLegend"));
    setLegend({});
    connect(timeline_, &TimelinePlot::lanesChanged, this,
            [this] { setLegend(legend_sub_blocks_); });
    legend_->setWordWrap(true);
    auto* fit = new QToolButton(this);
    fit->setObjectName(QStringLiteral("fitTimeline"));
    fit->setText(tr("Fit"));
    fit->setToolTip(
        tr("Show the whole iteration (F); the arrow fits the simulated or the measured one "
           "alone"));
    fit->setPopupMode(QToolButton::MenuButtonPopup);
    auto* fit_menu = new QMenu(fit);
    fit_menu->addAction(tr("Fit Everything"), timeline_, &TimelinePlot::fitToWindow);
    QAction* fit_simulated = fit_menu->addAction(tr("Fit the Simulated Iteration"), this,
                                                 [this] { timeline_->fitSectionTime(0); });
    fit_simulated->setObjectName(QStringLiteral("fitSimulated"));
    QAction* fit_measured = fit_menu->addAction(tr("Fit the Measured Iteration"), this,
                                                [this] { timeline_->fitSectionTime(1); });
    fit_measured->setObjectName(QStringLiteral("fitMeasured"));
    connect(fit_menu, &QMenu::aboutToShow, this,
            [this, fit_measured] { fit_measured->setEnabled(timeline_->hasMeasured()); });
    fit->setMenu(fit_menu);
    connect(fit, &QToolButton::clicked, timeline_, &TimelinePlot::fitToWindow);
    auto* arrows = new QToolButton(this);
    arrows->setObjectName(QStringLiteral("transferArrows"));
    arrows->setText(tr("Arrows"));
    arrows->setCheckable(true);
    arrows->setToolTip(tr("Draw an arrow from each send to the receive that takes its data"));
    connect(arrows, &QToolButton::toggled, timeline_, &TimelinePlot::setShowTransfers);
    auto* timeline_page = new QWidget(this);
    auto* tl = new QVBoxLayout(timeline_page);
    tl->setContentsMargins(2, 2, 2, 2);
    auto* head = new QHBoxLayout;
    head->addWidget(legend_, 1);
    head->addWidget(arrows);
    head->addWidget(fit);
    tl->addLayout(head);
    tl->addWidget(timeline_view_, 1);
    return timeline_page;
}

// The palette, inspector and problem docks, and the toolbars.
void MainWindow::buildDocksAndBars() {
    palette_ = new LayerPalette(this);
    auto* palette_dock = new QDockWidget(tr("Layer palette"), this);
    palette_dock->setObjectName(QStringLiteral("paletteDock"));
    palette_dock->setWidget(palette_);
    addDockWidget(Qt::LeftDockWidgetArea, palette_dock);

    inspector_ = new Inspector(document_, this);
    auto* inspector_dock = new QDockWidget(tr("Inspector"), this);
    inspector_dock->setObjectName(QStringLiteral("inspectorDock"));
    inspector_dock->setWidget(inspector_);
    addDockWidget(Qt::RightDockWidgetArea, inspector_dock);

    problems_ = new ProblemsPanel(this);
    problems_dock_ = new QDockWidget(tr("Problems"), this);
    problems_dock_->setObjectName(QStringLiteral("problemsDock"));
    problems_dock_->setWidget(problems_);
    addDockWidget(Qt::BottomDockWidgetArea, problems_dock_);
    problems_dock_->hide();

    training_ = new TrainingBar(document_, this);
    connect(training_, &TrainingBar::knockOn, this,
            [this](const QString& message) { statusBar()->showMessage(message, 15000); });
    addToolBar(Qt::TopToolBarArea, training_);
    addToolBar(Qt::TopToolBarArea, training_->parallelismBar());
    run_bar_ = addToolBar(tr("Run"));
    run_bar_->setObjectName(QStringLiteral("runBar"));
    // A narrow window starts a second row of toolbars at the replicas.
    adaptive_ = new AdaptiveLayout(this, training_->parallelismBar());
    adaptive_->keepWidths({palette_dock, inspector_dock}, {170, 340});
}

void MainWindow::buildControllers() {
    const ControllerContext context{this, document_, runner_, message_bar_, statusBar()};
    files_ = new FileController(context, this);
    exports_ =
        new ExportController(context, {timeline_, metrics_, comparison_, tabs_}, files_, this);
    run_ = new RunController(context, run_panel_, timeline_, tabs_, this);
    profile_ = new ProfileController(context, run_panel_, tabs_, this);
    plan_ = new PlanController(context, this);
    // Opened or recovered: simulated on this thread, so that the views are
    // current before the next event.
    connect(files_, &FileController::projectOpened, this, &MainWindow::simulateNow);
    connect(profile_, &ProfileController::costsChanged, this, &MainWindow::projectChanged);
    connect(plan_, &PlanController::refused, this, &MainWindow::refuse);
    connect(run_panel_, &RunPanel::launchFilesRequested, exports_,
            &ExportController::exportLaunchFilesWithDialog);
}

void MainWindow::connectViews() {
    connect(document_, &ProjectDocument::projectChanged, this, &MainWindow::projectChanged);
    connect(document_, &ProjectDocument::fileChanged, this, &MainWindow::updateTitle);
    connect(document_, &ProjectDocument::modifiedChanged, this, &MainWindow::updateTitle);
    connect(runner_, &SimulationRunner::started, this,
            [this] { summary_->setText(tr("Simulating…")); });
    connect(runner_, &SimulationRunner::finished, this, &MainWindow::simulationDone);
    connect(runner_, &SimulationRunner::failed, this, [this](const QString& message) {
        simulationDone();
        statusBar()->showMessage(message, 8000);
    });

    connect(model_, &ModelTableModel::refused, this, &MainWindow::refuse);
    connect(inspector_, &Inspector::refused, this, &MainWindow::refuse);
    connect(model_, &ModelTableModel::paletteDropped, this,
            [this](const QString& entry, int row) { insertPaletteEntry(entry, row); });
    connect(palette_, &LayerPalette::entryActivated, this,
            [this](const QString& entry) { insertPaletteEntry(entry, -1); });
    connect(view_, &TopologyView::paletteDropped, this,
            [this](const QString& entry, const QString& device) {
                insertPaletteEntry(entry, -1, device);
            });
    connect(
        view_, &TopologyView::layersDropped, this,
        [this](int first, int last, const QString& device) { placeLayers(first, last, device); });
    connect(view_, &TopologyView::layerClicked, this,
            [this](int index) { selectLayers(index, index); });
    connect(view_, &TopologyView::deviceClicked, this, [this](const QString& path) {
        inspector_->setSelection({Selection::Kind::device, -1, path});
    });
    connect(view_, &TopologyView::containerClicked, this, [this](const QString& path) {
        inspector_->setSelection({Selection::Kind::container, -1, path});
    });
    connect(view_, &TopologyView::backgroundClicked, this, &MainWindow::selectCanvasBackground);
    connectTopology();

    connect(table_->selectionModel(), &QItemSelectionModel::selectionChanged, this, [this] {
        const QModelIndexList rows = table_->selectionModel()->selectedRows();
        if (rows.isEmpty()) {
            scene_->selectLayers(-1, -2);
            return;
        }
        int first = rows.front().row();
        int last = first;
        for (const QModelIndex& i : rows) {
            first = std::min(first, i.row());
            last = std::max(last, i.row());
        }
        scene_->selectLayers(first, last);
        inspector_->setSelection({Selection::Kind::layer, first, {}});
    });
    connect(problems_, &ProblemsPanel::problemActivated, this, &MainWindow::selectProblem);
    connect(comparison_, &ComparisonPanel::compareRequested, this,
            [this] { comparison_->compare(document_->project(), baseDir(), runner_->costs()); });
    connect(comparison_, &ComparisonPanel::compareLayoutsRequested, this, [this] {
        comparison_->compareLayouts(document_->project(), baseDir(), runner_->costs());
    });
    connect(comparison_, &ComparisonPanel::applyLayoutRequested, this,
            [this](const Project& layout, const Project& comparedFrom) {
                if (comparedFrom != document_->project()) {
                    refuse(
                        tr("The project changed since the layouts were compared; compare "
                           "again before applying one"));
                    return;
                }
                document_->edit(tr("Apply layout"), layout);
            });
}

QString MainWindow::baseDir() const {
    return document_->baseDir();
}

void MainWindow::refuse(const QString& message) {
    last_refusal_ = message;
    // Whole in the message bar; the status bar only points at it.
    message_bar_->showMessage(message, MessageBar::Kind::problem);
    statusBar()->showMessage(tr("Refused (see above)"), 10000);
    emit refused(message);
}

void MainWindow::updateTitle() {
    setWindowTitle(QStringLiteral("%1[*] — Pipewright Studio").arg(document_->displayName()));
    setWindowModified(document_->isModified());
}

bool MainWindow::openFile(const QString& path) {
    return files_->openFile(path);
}

void MainWindow::restoreRecovered(const Project& project, const QString& path,
                                  const QString& baseDir) {
    files_->restoreRecovered(project, path, baseDir);
}

void MainWindow::closeEvent(QCloseEvent* event) {
    if (!run_->mayClose() || !files_->maybeSave()) {
        event->ignore();
        return;
    }
    saveLayout();
    event->accept();
}

namespace {
// Bumped when the docks or toolbars change, so that an older saved layout
// is not applied to widgets it did not know.
constexpr int kLayoutVersion = 1;
}  // namespace

void MainWindow::saveLayout() const {
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState(kLayoutVersion));
}

bool MainWindow::restoreLayout() {
    const QSettings settings;
    const QByteArray geometry = settings.value(QStringLiteral("window/geometry")).toByteArray();
    if (geometry.isEmpty() || !restoreGeometry(geometry)) {
        return false;
    }
    (void)restoreState(settings.value(QStringLiteral("window/state")).toByteArray(),
                       kLayoutVersion);
    return true;
}

}  // namespace pipewright::gui
