#include "window/main_window.h"

#include <QAction>
#include <QApplication>
#include <QDockWidget>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QRegularExpression>
#include <QScrollArea>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QStyleFactory>
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
#include "run/run_panel.h"
#include "studio_core/format.h"
#include "studio_core/layer_blocks.h"
#include "studio_core/project_edit.h"
#include "studio_core/replica_view.h"
#include "studio_core/run_folder.h"
#include "studio_core/simulation_runner.h"
#include "style/colors.h"
#include "timeline/timeline_plot.h"
#include "timeline/timeline_view.h"
#include "topology/topology_canvas.h"
#include "topology/topology_scene.h"
#include "topology/topology_view.h"
#include "window/adaptive_layout.h"
#include "window/message_bar.h"

namespace pipewright::gui {

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
    setObjectName(QStringLiteral("mainWindow"));
    document_ = new ProjectDocument(this);
    runner_ = new SimulationRunner(this);
    model_ = new ModelTableModel(document_, this);
    scene_ = new TopologyScene(this);
    buildLayout();
    buildActions();
    connectViews();
    connectPlan();
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
    setLegend(false);
    connect(timeline_, &TimelinePlot::lanesChanged, this, [this] { setLegend(legend_tensor_); });
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
    connectRun();

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

void MainWindow::projectChanged() {
    comparison_->markStale();
    runner_->request(document_->project(), baseDir(), document_->loadDiagnostics());
    const auto latest = runner_->latest();
    rebuildCanvas(document_->project(), latest && latest->report ? &*latest->report : nullptr);
}

void MainWindow::rebuildCanvas(const Project& project, const SimulationReport* report) {
    if (report == nullptr) {
        scene_->rebuild(project, {}, problem_devices_);
        return;
    }
    scene_->rebuild(project, with_tensor_group_members(every_replica_device(*report), project),
                    problem_devices_, replica_roles(*report));
}

QString MainWindow::replicasSummary(const SimulationReport& r) const {
    if (r.data_parallel <= 1) {
        return {};
    }
    // The timeline draws the replicas simulated; say what the others do.
    QString text = tr(" · %n replica(s)", nullptr, r.data_parallel);
    if (r.zero_stage > 0) {
        text += tr(", ZeRO-%1").arg(r.zero_stage);
    }
    if (r.replicas.size() == 1) {
        text += tr(", drawn once (all alike)");
    } else {
        text += tr(", %n kind(s) drawn", nullptr, static_cast<int>(r.replicas.size()));
    }
    return text;
}

void MainWindow::setLegend(bool tensor_parallel) {
    legend_tensor_ = tensor_parallel;
    // A collapsed group's lane is its busy share, which has its own key.
    const auto& rows = timeline_->lanes().rows();
    const bool groups = std::any_of(rows.begin(), rows.end(), [](const LaneRow& row) {
        return row.kind == LaneRowKind::summary;
    });
    QStringList keys;
    // A key never breaks inside: not at its spaces, nor at a hyphen ("Tensor
    // all-/reduce" wrapped over two lines); U+2011 is the non-breaking hyphen.
    const auto key = [](const QColor& colour, QString name) {
        return QStringLiteral("<span style='color:%1;font-size:large'>■</span>&nbsp;%2")
            .arg(colour.name(), name.replace(QLatin1Char(' '), QStringLiteral("&nbsp;"))
                                    .replace(QLatin1Char('-'), QChar(0x2011)));
    };
    for (BlockKind k :
         {BlockKind::forward, BlockKind::backward, BlockKind::backward_input,
          BlockKind::backward_weight, BlockKind::send, BlockKind::recv, BlockKind::collective}) {
        keys << key(block_color(k), block_name(k));
    }
    const bool dark = palette().color(QPalette::Window).lightness() < 128;
    if (tensor_parallel) {
        keys << key(tensor_collective_color(dark), tr("Tensor all-reduce (within F and B)"));
    }
    if (groups) {
        keys << key(busy_share_color(dark), tr("busy share of a collapsed group"));
    }
    keys << tr("<span style='font-size:large'>▨</span>&nbsp;bubble&nbsp;(idle)");
    // A non-breaking hyphen (U+2011): the key wraps whole, never "micro-/batch".
    keys << tr("labels:&nbsp;stage·micro\u2011batch");
    // Plain spaces between the keys let the legend wrap in a narrow window
    // instead of setting the window's minimum width.
    legend_->setText(keys.join(QStringLiteral(" &nbsp; ")));
}

void MainWindow::simulateNow() {
    runner_->runSynchronously(document_->project(), baseDir(), document_->loadDiagnostics());
}

void MainWindow::simulationDone() {
    const auto result = runner_->latest();
    if (!result) {
        return;
    }
    if (result->report) {
        const SimulationReport& r = *result->report;
        // A failure's message would otherwise cover the new summary for seconds.
        statusBar()->clearMessage();
        // Shared with the result, not copied.
        timeline_->setTimeline(std::shared_ptr<const Timeline>(result, &r.timeline), r.lane_devices,
                               result->layout);
        std::vector<std::array<double, 2>> tensor;
        if (r.tensor_parallel.size > 1) {
            for (const StageCost& stage : r.stages) {
                tensor.push_back({stage.tensor_forward_s, stage.tensor_backward_s});
            }
        }
        setLegend(!tensor.empty());
        timeline_->setTensorCollectives(std::move(tensor));
        timeline_->setTensorGroups(r.tensor_groups);
        std::vector<std::array<QString, 3>> kernels;
        for (const StageKernels& stage : result->kernels) {
            kernels.push_back({QString::fromStdString(describe_pass(stage.forward)),
                               QString::fromStdString(describe_pass(stage.backward_input)),
                               QString::fromStdString(describe_pass(stage.backward_weight))});
        }
        timeline_->setStageKernels(std::move(kernels));
        metrics_->setReport(r);
        summary_->setText(
            tr("%1 · %n micro-batch(es) · %2 · %3 samples/s · bubble %4", nullptr, r.microbatches)
                .arg(QString::fromStdString(r.schedule), format_duration(r.iteration_time_s),
                     format_rate(r.throughput_samples_per_s), format_percent(r.bubble_fraction)) +
            replicasSummary(r) +
            (r.tensor_parallel.size > 1
                 ? tr(" · %1 devices a stage (tensor%2 parallel)")
                       .arg(r.tensor_parallel.size)
                       .arg(r.tensor_parallel.sequence_parallel ? tr(" and sequence") : QString())
                 : QString()) +
            (result->profile ? tr(" · measured costs") : QString()) +
            (result->catalog ? tr(" · calibrated devices") : QString()));
        QString priced = result->profile
                             ? tr("Priced with the profile measured on this machine (Run tab)")
                             : tr("Priced with the analytic estimate (Run tab: Costs)");
        if (result->catalog) {
            priced += QLatin1Char('\n') + describe_device_calibrations(calibrations_);
        }
        summary_->setToolTip(priced);
    } else {
        const QString why = result->error.empty() ? tr("fix the problems listed to simulate")
                                                  : QString::fromStdString(result->error);
        timeline_->clearTimeline(tr("No timeline: %1").arg(why));
        metrics_->clear(tr("not simulated"));
        summary_->setText(tr("Not simulated"));
    }
    showProblems();
    updateRunComparison();
}

void MainWindow::showProblems() {
    Diagnostics all = document_->loadDiagnostics();
    const auto result = runner_->latest();
    if (result) {
        all.append(result->diagnostics);
        if (!result->error.empty()) {
            all.add("", result->error);
        }
    }
    problems_->setProblems(all);
    const bool appearing = !all.empty() && problems_dock_->isHidden();
    problems_dock_->setVisible(!all.empty());
    if (appearing) {
        // As tall as its lines (up to a quarter of the window), not the
        // dock's default that left the canvas blank for one line.
        const int rows = std::min(problems_->count(), 6);
        const int line = std::max(problems_->sizeHintForRow(0), fontMetrics().height() + 4);
        const int wanted = std::min(rows * line + 2 * problems_->frameWidth() + 6, height() / 4);
        resizeDocks({problems_dock_}, {wanted}, Qt::Vertical);
    }

    // Highlight what the problems name: layer rows and device boxes.
    static const QRegularExpression layer_re(QStringLiteral("^model\\.layers\\[(\\d+)\\]"));
    static const QRegularExpression stage_re(QStringLiteral("^placement\\[(\\d+)\\]"));
    static const QRegularExpression device_re(
        QStringLiteral("^topology\\.([^\\s.]+/[^\\s.]+/[^\\s.]+)"));
    const Project& p = document_->project();
    QSet<int> rows;
    QSet<QString> devices;
    for (const Diagnostic& d : all.items()) {
        const QString path = QString::fromStdString(d.path);
        if (auto m = layer_re.match(path); m.hasMatch()) {
            rows.insert(m.captured(1).toInt());
        } else if (auto s = stage_re.match(path); s.hasMatch()) {
            const auto stage = static_cast<std::size_t>(s.captured(1).toInt());
            if (stage < p.placement.size()) {
                devices.insert(QString::fromStdString(p.placement[stage].device));
            }
        } else if (auto dm = device_re.match(path); dm.hasMatch()) {
            devices.insert(dm.captured(1));
        }
    }
    model_->setProblemRows(rows);
    problem_devices_ = devices;
    rebuildCanvas(p, result && result->report ? &*result->report : nullptr);
}

void MainWindow::selectProblem(const QString& path) {
    static const QRegularExpression layer_re(QStringLiteral("^model\\.layers\\[(\\d+)\\]"));
    static const QRegularExpression stage_re(QStringLiteral("^placement\\[(\\d+)\\]"));
    static const QRegularExpression device_re(
        QStringLiteral("^topology\\.([^\\s.]+/[^\\s.]+/[^\\s.]+)"));
    const Project& p = document_->project();
    if (auto m = layer_re.match(path); m.hasMatch()) {
        const int row = m.captured(1).toInt();
        selectLayers(row, row);
    } else if (auto s = stage_re.match(path); s.hasMatch()) {
        const auto stage = static_cast<std::size_t>(s.captured(1).toInt());
        if (stage < p.placement.size()) {
            inspector_->setSelection(
                {Selection::Kind::device, -1, QString::fromStdString(p.placement[stage].device)});
            if (!p.placement[stage].layers.empty()) {
                const int first = p.model.layer_index(p.placement[stage].layers.front());
                const int last = p.model.layer_index(p.placement[stage].layers.back());
                if (first >= 0 && last >= first) {
                    selectLayers(first, last);
                }
            }
        }
    } else if (auto d = device_re.match(path); d.hasMatch()) {
        inspector_->setSelection({Selection::Kind::device, -1, d.captured(1)});
        view_->revealDevice(d.captured(1));
    } else if (path.startsWith(QLatin1String("training"))) {
        training_->scheduleBox()->setFocus();
    }
}

void MainWindow::selectLayers(int first, int last) {
    if (first < 0 || first >= model_->rowCount()) {
        return;
    }
    last = std::min(last, model_->rowCount() - 1);
    table_->selectionModel()->select(
        QItemSelection(model_->index(first, 0),
                       model_->index(last, ModelTableModel::ColumnCount - 1)),
        QItemSelectionModel::ClearAndSelect);
    table_->scrollTo(model_->index(first, 0));
    inspector_->setSelection({Selection::Kind::layer, first, {}});
}

bool MainWindow::placeLayers(int first, int last, const QString& device) {
    const EditResult result = place_layers(document_->project(), first, last, device.toStdString());
    if (!result.project) {
        refuse(QString::fromStdString(result.refusal));
        return false;
    }
    const QString what =
        first == last
            ? tr("Place %1 on %2")
                  .arg(QString::fromStdString(
                           document_->project().model.layers[static_cast<std::size_t>(first)].name),
                       device)
            : tr("Place %n layer(s) on %1", nullptr, last - first + 1).arg(device);
    document_->edit(what, *result.project);
    statusBar()->showMessage(what, 4000);
    if (!result.note.empty()) {
        message_bar_->showMessage(what + QStringLiteral(": ") + QString::fromStdString(result.note),
                                  MessageBar::Kind::note);
    }
    return true;
}

bool MainWindow::insertPaletteEntry(const QString& entry, int row, const QString& device) {
    Project p = document_->project();
    const auto devices = layer_devices(p);
    int at = row < 0 ? static_cast<int>(p.model.layers.size()) : row;
    if (!device.isEmpty()) {
        // On a device: after its last layer, so its stage stays contiguous.
        for (std::size_t i = 0; i < devices.size(); ++i) {
            if (devices[i] == device.toStdString()) {
                at = static_cast<int>(i) + 1;
            }
        }
    }
    const auto figures = analyze_model_layers(p);
    Shape input = p.model.input.shape;
    if (at > 0 && at - 1 < static_cast<int>(figures.size()) &&
        figures[static_cast<std::size_t>(at - 1)].analysis) {
        input = figures[static_cast<std::size_t>(at - 1)].analysis->output_shape;
    }
    const auto layers = make_palette_entry(entry.toStdString(), input);
    if (layers.empty()) {
        return false;
    }
    for (std::size_t i = 0; i < layers.size(); ++i) {
        p = insert_layer(p, at + static_cast<int>(i), layers[i]);
    }
    if (!device.isEmpty()) {
        EditResult placed =
            place_layers(p, at, at + static_cast<int>(layers.size()) - 1, device.toStdString());
        if (!placed.project) {
            refuse(QString::fromStdString(placed.refusal));
            return false;
        }
        p = *placed.project;
    }
    document_->edit(tr("Add %1").arg(entry.section(QLatin1Char(':'), 1)), p);
    selectLayers(at, at + static_cast<int>(layers.size()) - 1);
    return true;
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

}  // namespace pipewright::gui
