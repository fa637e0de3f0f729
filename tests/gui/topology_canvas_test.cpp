// The cluster canvas at cluster scale, driven as a person would: Ctrl+wheel,
// fit to view, panning, collapsing nodes into their load and memory bars,
// finding a device, and placing layers by drag and drop after zooming.
#include <gtest/gtest.h>

#include <QApplication>
#include <QGraphicsRectItem>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMimeData>
#include <QScrollBar>
#include <QSignalSpy>
#include <QTest>
#include <QWheelEvent>
#include <nlohmann/json.hpp>

#include "document/project_document.h"
#include "editor/inspector.h"
#include "editor/model_table_model.h"
#include "pipewright/core/project_io.h"
#include "studio_core/canvas/canvas_detail.h"
#include "studio_core/format/format.h"
#include "studio_core/simulation/simulation_runner.h"
#include "topology/topology_canvas.h"
#include "topology/topology_items.h"
#include "topology/topology_scene.h"
#include "topology/topology_view.h"
#include "wide_project.h"
#include "window/help_window.h"
#include "window/main_window.h"

namespace pipewright::gui {
namespace {

Project example(const std::string& name) {
    auto loaded = load_project_file(std::string(PIPEWRIGHT_ASSETS_DIR) + "/examples/" + name);
    EXPECT_TRUE(loaded.project.has_value());
    return *loaded.project;
}

void wheel(QWidget* widget, QPoint pos, int delta, Qt::KeyboardModifiers mods) {
    QWheelEvent event(QPointF(pos), QPointF(widget->mapToGlobal(pos)), QPoint(), QPoint(0, delta),
                      Qt::NoButton, mods, Qt::NoScrollPhase, false);
    QApplication::sendEvent(widget, &event);
}

// Where a scene point is in the viewport, unrounded.
QPointF on_screen(const TopologyView* view, QPointF scene_point) {
    return view->viewportTransform().map(scene_point);
}

// A canvas on its own, showing a project with (or without) its simulation.
class CanvasTest : public ::testing::Test {
  protected:
    void SetUp() override {
        canvas.resize(900, 600);
        canvas.show();
        ASSERT_TRUE(QTest::qWaitForWindowExposed(&canvas));
    }

    void open(const Project& p, bool simulate) {
        std::vector<DeviceMetrics> metrics;
        if (simulate) {
            const SimulationResult result = simulate_now(p, ".");
            ASSERT_TRUE(result.report) << result.error;
            metrics = result.report->devices;
            report = result.report;
        }
        scene.startProject(p);
        view()->fitToView();
        scene.rebuild(p, metrics, {});
        QCoreApplication::processEvents();
    }

    TopologyView* view() { return canvas.view(); }

    // The nodes whose boxes are not wholly inside the viewport, by name.
    std::string hidden_nodes() {
        const QRectF room = QRectF(view()->viewport()->rect()).adjusted(-1, -1, 1, 1);
        std::string hidden;
        for (const Node& n : scene.project().topology.nodes) {
            QGraphicsRectItem* box = scene.nodeItem(QString::fromStdString(n.name));
            if (box == nullptr ||
                !room.contains(view()->mapFromScene(box->sceneBoundingRect()).boundingRect())) {
                hidden += n.name + " ";
            }
        }
        return hidden;
    }

    TopologyScene scene;
    TopologyCanvas canvas{&scene};
    std::optional<SimulationReport> report;
};

TEST_F(CanvasTest, CtrlWheelZoomsAroundThePointerAndThePlainWheelScrolls) {
    open(example("gpt3-175b-p4d.json"), false);
    const double fitted = view()->zoom();
    ASSERT_TRUE(view()->isFitted());
    const QPoint pointer(300, 200);
    const QPointF under = view()->viewportTransform().inverted().map(QPointF(pointer));

    wheel(view()->viewport(), pointer, 120, Qt::ControlModifier);
    EXPECT_NEAR(view()->zoom(), fitted * TopologyView::kStep, 1e-9);
    EXPECT_FALSE(view()->isFitted());
    wheel(view()->viewport(), pointer, 240, Qt::ControlModifier);
    EXPECT_NEAR(view()->zoom(), fitted * std::pow(TopologyView::kStep, 3), 1e-9);
    // The scene point under the pointer stayed there (to the scroll bars' pixel).
    const QPointF now = on_screen(view(), under);
    EXPECT_NEAR(now.x(), pointer.x(), 1.0);
    EXPECT_NEAR(now.y(), pointer.y(), 1.0);

    // Without Ctrl the wheel scrolls and leaves the zoom alone.
    const double zoom = view()->zoom();
    const int top = view()->verticalScrollBar()->value();
    wheel(view()->viewport(), pointer, -120, Qt::NoModifier);
    EXPECT_EQ(view()->zoom(), zoom);
    EXPECT_GT(view()->verticalScrollBar()->value(), top);

    // Zooming out stops at half the fitted size; in at 4x.
    for (int i = 0; i < 40; ++i) {
        wheel(view()->viewport(), pointer, -120, Qt::ControlModifier);
    }
    EXPECT_NEAR(view()->zoom(), view()->minZoom(), 1e-9);
    for (int i = 0; i < 60; ++i) {
        wheel(view()->viewport(), pointer, 120, Qt::ControlModifier);
    }
    EXPECT_NEAR(view()->zoom(), TopologyView::kMaxZoom, 1e-9);
}

TEST_F(CanvasTest, FitToViewShowsEveryNodeAndStaysFittedThroughResizes) {
    for (const Project& p : {example("gpt3-175b-p4d.json"), wide_project(1024, 8)}) {
        open(p, false);
        EXPECT_EQ(hidden_nodes(), "");
        view()->zoomBy(3, QPointF(10, 10));
        EXPECT_NE(hidden_nodes(), "");
        view()->fitToView();
        EXPECT_TRUE(view()->isFitted());
        EXPECT_EQ(hidden_nodes(), "");
        // A fitted canvas refits when its window changes size.
        canvas.resize(600, 900);
        QCoreApplication::processEvents();
        EXPECT_EQ(hidden_nodes(), "");
        canvas.resize(900, 600);
        QCoreApplication::processEvents();
    }
    // A small project is never blown up past its natural size.
    open(example("resnet50-2gpu-pipelined.json"), false);
    EXPECT_LE(view()->zoom(), 1.0);
    EXPECT_EQ(hidden_nodes(), "");
}

TEST_F(CanvasTest, BigProjectsOpenCollapsedAndSmallOnesExpanded) {
    open(example("gpt3-175b-p4d.json"), false);
    EXPECT_EQ(scene.collapsedCount(), 13);
    // Every device still answers clicks and drops, as a cell of its node.
    EXPECT_NE(scene.deviceItem(QStringLiteral("node12/c0/gpu7")), nullptr);
    EXPECT_EQ(scene.chipItem(0), nullptr);

    open(example("seven-layers-two-nodes.json"), false);
    EXPECT_EQ(scene.collapsedCount(), 0);
    EXPECT_NE(scene.chipItem(0), nullptr);
    EXPECT_TRUE(view()->showsDetail());
}

TEST_F(CanvasTest, ACollapsedNodeShowsItsDevicesLoadAndMemoryInsteadOfThem) {
    const Project p = example("seven-layers-two-nodes.json");
    open(p, true);
    // node1 runs layers fc3, relu3 and fc4.
    const int fc3 = p.model.layer_index("fc3");
    ASSERT_NE(scene.chipItem(fc3), nullptr);
    auto* full = dynamic_cast<DeviceBox*>(scene.deviceItem(QStringLiteral("node1/c0/gpu0")));
    ASSERT_NE(full, nullptr);

    scene.setNodeCollapsed(QStringLiteral("node1"), true);
    EXPECT_TRUE(scene.isNodeCollapsed(QStringLiteral("node1")));
    EXPECT_EQ(scene.chipItem(fc3), nullptr);
    EXPECT_EQ(scene.chipItem(p.model.layer_index("fc4")), nullptr);
    EXPECT_NE(scene.chipItem(p.model.layer_index("fc1")), nullptr);  // node0 stays
    EXPECT_EQ(dynamic_cast<DeviceBox*>(scene.deviceItem(QStringLiteral("node1/c0/gpu0"))), nullptr);

    auto* box = dynamic_cast<NodeSummaryBox*>(scene.nodeItem(QStringLiteral("node1")));
    ASSERT_NE(box, nullptr);
    double busy = 0;
    double fullest = 0;
    for (const QString& path : {QStringLiteral("node1/c0/gpu0"), QStringLiteral("node1/c1/gpu0")}) {
        auto* cell = dynamic_cast<DeviceCell*>(scene.deviceItem(path));
        ASSERT_NE(cell, nullptr) << path.toStdString();
        EXPECT_EQ(cell->parentItem(), box);
        const auto m =
            std::find_if(report->devices.begin(), report->devices.end(),
                         [&](const DeviceMetrics& d) { return d.name == path.toStdString(); });
        ASSERT_NE(m, report->devices.end());
        EXPECT_NEAR(cell->load().load, m->busy_s / report->iteration_time_s, 1e-9);
        const double memory = static_cast<double>(m->peak_memory_bytes) /
                              static_cast<double>(m->memory_capacity_bytes);
        EXPECT_NEAR(cell->load().memoryFraction(), memory, 1e-12);
        EXPECT_GT(memory, 0);
        busy += cell->load().load;
        fullest = std::max(fullest, memory);
    }
    EXPECT_NEAR(box->load().mean_load, busy / 2, 1e-9);
    EXPECT_NEAR(box->load().max_memory_fraction, fullest, 1e-12);
    // Its header says so in words.
    QStringList texts;
    for (QGraphicsItem* child : box->childItems()) {
        if (auto* label = dynamic_cast<QGraphicsSimpleTextItem*>(child)) {
            texts << label->text();
        }
    }
    EXPECT_TRUE(texts.contains(QStringLiteral("▸ node1"))) << texts.join('|').toStdString();
    EXPECT_TRUE(texts.contains(
        QStringLiteral("load %1 · mem %2").arg(format_percent(busy / 2), format_percent(fullest))))
        << texts.join('|').toStdString();
    EXPECT_TRUE(texts.contains(QStringLiteral("2 × A100-40GB"))) << texts.join('|').toStdString();

    // Over its memory: the cell's bar is red and the header counts it.
    std::vector<DeviceMetrics> over = report->devices;
    for (DeviceMetrics& m : over) {
        if (m.name == "node1/c1/gpu0") {
            m.peak_memory_bytes = m.memory_capacity_bytes * 2;
            m.fits = false;
        }
    }
    scene.rebuild(p, over, {});
    auto* cell = dynamic_cast<DeviceCell*>(scene.deviceItem(QStringLiteral("node1/c1/gpu0")));
    ASSERT_NE(cell, nullptr);
    EXPECT_TRUE(cell->load().over);
    EXPECT_EQ(dynamic_cast<NodeSummaryBox*>(scene.nodeItem(QStringLiteral("node1")))->load().over,
              1);

    // Expanding brings the devices and their chips back.
    scene.setAllNodesCollapsed(false);
    EXPECT_NE(dynamic_cast<DeviceBox*>(scene.deviceItem(QStringLiteral("node1/c0/gpu0"))), nullptr);
    EXPECT_NE(scene.chipItem(fc3), nullptr);
}

TEST_F(CanvasTest, DoubleClickingANodeCollapsesAndExpandsIt) {
    open(example("seven-layers-two-nodes.json"), true);
    QGraphicsRectItem* node = scene.nodeItem(QStringLiteral("node0"));
    ASSERT_NE(node, nullptr);
    // On the node's own frame, right of its title.
    const QPoint frame =
        view()->mapFromScene(node->sceneBoundingRect().topRight() + QPointF(-6, 6));
    QTest::mouseDClick(view()->viewport(), Qt::LeftButton, {}, frame);
    EXPECT_TRUE(scene.isNodeCollapsed(QStringLiteral("node0")));
    // Anywhere on the summary expands it again.
    node = scene.nodeItem(QStringLiteral("node0"));
    QTest::mouseDClick(view()->viewport(), Qt::LeftButton, {},
                       view()->mapFromScene(node->sceneBoundingRect().center()));
    EXPECT_FALSE(scene.isNodeCollapsed(QStringLiteral("node0")));
    // A double-click on a device is the device's: the node stays expanded.
    QGraphicsRectItem* device = scene.deviceItem(QStringLiteral("node0/c0/gpu1"));
    QTest::mouseDClick(view()->viewport(), Qt::LeftButton, {},
                       view()->mapFromScene(device->sceneBoundingRect().topLeft() + QPointF(4, 4)));
    EXPECT_FALSE(scene.isNodeCollapsed(QStringLiteral("node0")));
}

TEST_F(CanvasTest, ZoomingOutBelowReadableTextDrawsBarsAndHidesTheChips) {
    open(example("seven-layers-two-nodes.json"), true);
    ASSERT_TRUE(view()->showsDetail());
    const double limit = readable_scale(scene.detailTextPixels());
    while (view()->zoom() >= limit && view()->zoom() > view()->minZoom()) {
        view()->zoomOut();
    }
    ASSERT_LT(view()->zoom(), limit);
    EXPECT_FALSE(view()->showsDetail());
    // A press where a chip is (but is not drawn) selects its device instead.
    QSignalSpy layers(view(), &TopologyView::layerClicked);
    QSignalSpy devices(view(), &TopologyView::deviceClicked);
    QGraphicsRectItem* chip = scene.chipItem(0);
    ASSERT_NE(chip, nullptr);
    QTest::mouseClick(view()->viewport(), Qt::LeftButton, {},
                      view()->mapFromScene(chip->sceneBoundingRect().center()));
    EXPECT_EQ(layers.count(), 0);
    ASSERT_EQ(devices.count(), 1);
    EXPECT_EQ(devices.front().front().toString(), QStringLiteral("node0/c0/gpu0"));
}

TEST_F(CanvasTest, MiddleDragAndSpaceDragPan) {
    open(wide_project(1024, 8), false);
    view()->zoomBy(8, QPointF(450, 300));
    QScrollBar* h = view()->horizontalScrollBar();
    QScrollBar* v = view()->verticalScrollBar();
    h->setValue(h->maximum() / 2);
    v->setValue(v->maximum() / 2);
    const int h0 = h->value();
    const int v0 = v->value();
    QWidget* port = view()->viewport();
    QTest::mousePress(port, Qt::MiddleButton, {}, QPoint(400, 300));
    QTest::mouseMove(port, QPoint(350, 260));
    QTest::mouseRelease(port, Qt::MiddleButton, {}, QPoint(350, 260));
    EXPECT_EQ(h->value(), h0 + 50);
    EXPECT_EQ(v->value(), v0 + 40);

    // Space held: the left button pans instead of selecting.
    QSignalSpy clicks(view(), &TopologyView::deviceClicked);
    QSignalSpy background(view(), &TopologyView::backgroundClicked);
    view()->setFocus();
    QTest::keyPress(view(), Qt::Key_Space);
    QTest::mousePress(port, Qt::LeftButton, {}, QPoint(400, 300));
    QTest::mouseMove(port, QPoint(420, 310));
    QTest::mouseRelease(port, Qt::LeftButton, {}, QPoint(420, 310));
    QTest::keyRelease(view(), Qt::Key_Space);
    EXPECT_EQ(h->value(), h0 + 50 - 20);
    EXPECT_EQ(v->value(), v0 + 40 - 10);
    EXPECT_EQ(clicks.count() + background.count(), 0);
}

TEST_F(CanvasTest, KeyboardZoomAndFitWorkWhileTheCanvasHasTheFocus) {
    open(example("gpt3-175b-p4d.json"), false);
    canvas.activateWindow();
    view()->setFocus();
    ASSERT_TRUE(QTest::qWaitForWindowActive(&canvas));
    const double fitted = view()->zoom();
    QTest::keyClick(view(), Qt::Key_Equal, Qt::ControlModifier);
    EXPECT_NEAR(view()->zoom(), fitted * TopologyView::kStep, 1e-9);
    QTest::keyClick(view(), Qt::Key_Minus, Qt::ControlModifier);
    QTest::keyClick(view(), Qt::Key_Minus, Qt::ControlModifier);
    EXPECT_NEAR(view()->zoom(), fitted / TopologyView::kStep, 1e-9);
    QTest::keyClick(view(), Qt::Key_0, Qt::ControlModifier);
    EXPECT_TRUE(view()->isFitted());
    EXPECT_NEAR(view()->zoom(), fitted, 1e-9);
    // Ctrl+F goes to the find field.
    QTest::keyClick(view(), Qt::Key_F, Qt::ControlModifier);
    EXPECT_TRUE(canvas.findField()->hasFocus());
}

TEST_F(CanvasTest, TextAndBoxesNeverOverlap) {
    // Node boxes, and the labels of each box, side by side at any zoom: the
    // canvas hides what is too small instead of shrinking it onto another.
    for (const Project& p : {wide_project(1024, 8), example("gpt3-175b-p4d.json")}) {
        open(p, true);
        for (bool collapsed : {true, false}) {
            scene.setAllNodesCollapsed(collapsed);
            std::vector<QRectF> boxes;
            for (const Node& n : p.topology.nodes) {
                QGraphicsRectItem* box = scene.nodeItem(QString::fromStdString(n.name));
                ASSERT_NE(box, nullptr);
                for (const QRectF& other : boxes) {
                    ASSERT_FALSE(other.intersects(box->sceneBoundingRect())) << n.name;
                }
                boxes.push_back(box->sceneBoundingRect());
                std::vector<QRectF> labels;
                for (QGraphicsItem* child : box->childItems()) {
                    if (dynamic_cast<QGraphicsSimpleTextItem*>(child) == nullptr) {
                        continue;
                    }
                    const QRectF r = child->sceneBoundingRect();
                    EXPECT_TRUE(box->sceneBoundingRect().contains(r)) << n.name;
                    for (const QRectF& other : labels) {
                        EXPECT_FALSE(other.intersects(r))
                            << n.name << " "
                            << static_cast<QGraphicsSimpleTextItem*>(child)->text().toStdString()
                            << " " << other.y() << "+" << other.height() << " vs " << r.y() << "+"
                            << r.height();
                    }
                    labels.push_back(r);
                }
            }
            if (p.topology.nodes.size() > 100) {
                break;  // expanding 128 nodes is what the bench measures
            }
        }
    }
}

// In the window: what opening, finding and dropping do together.
class CanvasWindowTest : public ::testing::Test {
  protected:
    void open(const QString& name) {
        window.resize(1400, 900);
        window.runner()->setDebounceMs(10);
        ASSERT_TRUE(window.openFile(QStringLiteral(PIPEWRIGHT_ASSETS_DIR "/examples/") + name));
        window.show();
        ASSERT_TRUE(QTest::qWaitForWindowExposed(&window));
        window.simulateNow();
        QCoreApplication::processEvents();
    }

    TopologyCanvas* canvas() { return window.topologyCanvas(); }
    TopologyView* view() { return window.topologyView(); }
    TopologyScene* scene() { return window.topologyScene(); }

    MainWindow window;
};

// Issue 36 #4: a few devices open readable, with their names and layer
// chips to drag, even where showing them whole would need 77 %; a large
// cluster still opens whole.
TEST_F(CanvasWindowTest, AFewDevicesOpenReadableAndALargeClusterWhole) {
    for (const char* name : {"seven-layers-two-nodes.json", "resnet50-4gpu-2x2.json"}) {
        open(QString::fromLatin1(name));
        EXPECT_TRUE(view()->isFitted()) << name;
        EXPECT_TRUE(view()->showsDetail()) << name << " at " << view()->zoom();
        EXPECT_NE(scene()->chipItem(0), nullptr) << name;
    }
    open(QStringLiteral("gpt3-175b-p4d.json"));
    const QRectF shown = view()->mapToScene(view()->viewport()->rect()).boundingRect();
    EXPECT_TRUE(shown.contains(scene()->itemsBoundingRect()))
        << "the whole cluster at " << view()->zoom();
}

TEST_F(CanvasWindowTest, FindCentresOnTheDeviceExpandsItsNodeAndSelectsIt) {
    open(QStringLiteral("gpt3-175b-p4d.json"));
    ASSERT_TRUE(scene()->isNodeCollapsed(QStringLiteral("node7")));
    ASSERT_EQ(canvas()->find(QStringLiteral("node7/c0/gpu3")), 1);
    EXPECT_FALSE(scene()->isNodeCollapsed(QStringLiteral("node7")));
    EXPECT_TRUE(scene()->isNodeCollapsed(QStringLiteral("node6")));  // the others stay
    EXPECT_EQ(scene()->highlightedDevice(), QStringLiteral("node7/c0/gpu3"));
    QGraphicsRectItem* device = scene()->deviceItem(QStringLiteral("node7/c0/gpu3"));
    ASSERT_NE(dynamic_cast<DeviceBox*>(device), nullptr);
    // Centred, and large enough to read.
    const QPointF centre = on_screen(view(), device->sceneBoundingRect().center());
    const QPointF middle = QRectF(view()->viewport()->rect()).center();
    EXPECT_NEAR(centre.x(), middle.x(), 2);
    EXPECT_NEAR(centre.y(), middle.y(), 2);
    EXPECT_TRUE(view()->showsDetail());
    EXPECT_EQ(window.inspector()->selection(),
              (Selection{Selection::Kind::device, -1, QStringLiteral("node7/c0/gpu3")}));
    EXPECT_EQ(canvas()->findStatus(), QStringLiteral("1 of 1: node7/c0/gpu3"));

    // A rank: the timeline's numbering (pipeline order).
    const auto ranks = window.runner()->latest()->report->timeline.devices;
    ASSERT_EQ(canvas()->find(QStringLiteral("40")), 1);
    EXPECT_EQ(scene()->highlightedDevice().toStdString(), ranks[40]);
}

TEST_F(CanvasWindowTest, SeveralMatchesAreVisitedInTurnAndNoMatchIsSaid) {
    open(QStringLiteral("gpt3-175b-p4d.json"));
    ASSERT_EQ(canvas()->find(QStringLiteral("gpu5")), 13);
    EXPECT_EQ(scene()->highlightedDevice(), QStringLiteral("node0/c0/gpu5"));
    canvas()->findNext();
    EXPECT_EQ(scene()->highlightedDevice(), QStringLiteral("node1/c0/gpu5"));
    EXPECT_EQ(canvas()->findStatus(), QStringLiteral("2 of 13: node1/c0/gpu5"));
    canvas()->findPrevious();
    canvas()->findPrevious();
    EXPECT_EQ(scene()->highlightedDevice(), QStringLiteral("node12/c0/gpu5"));
    // Enter in the field steps on, Shift+Enter back.
    QTest::keyClick(canvas()->findField(), Qt::Key_Return);
    EXPECT_EQ(scene()->highlightedDevice(), QStringLiteral("node0/c0/gpu5"));
    QTest::keyClick(canvas()->findField(), Qt::Key_Return, Qt::ShiftModifier);
    EXPECT_EQ(scene()->highlightedDevice(), QStringLiteral("node12/c0/gpu5"));

    // Typing searches without moving; Enter goes to the first.
    canvas()->findField()->clear();
    QTest::keyClicks(canvas()->findField(), QStringLiteral("tpu"));
    EXPECT_EQ(canvas()->findStatus(), QStringLiteral("No device matches “tpu”"));
    EXPECT_EQ(scene()->highlightedDevice(), QString());
    EXPECT_EQ(canvas()->find(QStringLiteral("tpu")), 0);
    canvas()->findField()->clear();
    QTest::keyClicks(canvas()->findField(), QStringLiteral("node11/"));
    EXPECT_TRUE(canvas()->findStatus().startsWith(QStringLiteral("8 devices match")))
        << canvas()->findStatus().toStdString();
    EXPECT_TRUE(scene()->isNodeCollapsed(QStringLiteral("node11")));
    QTest::keyClick(canvas()->findField(), Qt::Key_Return);
    EXPECT_EQ(scene()->highlightedDevice(), QStringLiteral("node11/c0/gpu0"));
    // Escape ends the search and its outline.
    QTest::keyClick(canvas()->findField(), Qt::Key_Escape);
    EXPECT_EQ(scene()->highlightedDevice(), QString());
    EXPECT_EQ(canvas()->findStatus(), QString());
}

TEST_F(CanvasWindowTest, DropsLandOnTheRightDeviceAfterZooming) {
    open(QStringLiteral("resnet50-2gpu-pipelined.json"));
    const Project& p = window.document()->project();
    const int layer = p.model.layer_index("layer3.0");
    ASSERT_GE(layer, 0);
    const QString target = QStringLiteral("node0/c0/gpu0");
    QMimeData mime;
    mime.setData(QString::fromLatin1(kLayersMime), QStringLiteral("%1,%1").arg(layer).toLatin1());

    // Zoomed in around a point off the device's centre, then scrolled to it.
    const double fitted = view()->zoom();
    wheel(view()->viewport(), QPoint(30, 30), 360, Qt::ControlModifier);
    ASSERT_NEAR(view()->zoom(), fitted * std::pow(TopologyView::kStep, 3), 1e-9);
    QGraphicsRectItem* device = scene()->deviceItem(target);
    view()->centerOn(device);
    QPoint at = view()->mapFromScene(device->sceneBoundingRect().center());
    ASSERT_TRUE(view()->viewport()->rect().contains(at));
    EXPECT_EQ(scene()->deviceAt(view()->mapToScene(at)), device);
    EXPECT_TRUE(view()->dropAt(at, &mime));
    EXPECT_EQ(window.document()->project().placement[0].layers.back(), "layer3.0");
    window.document()->undoStack()->undo();

    // Zoomed out to the bars: the device is still a drop target.
    while (view()->showsDetail()) {
        view()->zoomOut();
    }
    device = scene()->deviceItem(target);
    at = view()->mapFromScene(device->sceneBoundingRect().center());
    EXPECT_TRUE(view()->dropAt(at, &mime));
    EXPECT_EQ(window.document()->project().placement[0].layers.back(), "layer3.0");
}

TEST_F(CanvasWindowTest, TheViewMenuListsTheCanvasShortcutsForHelp) {
    open(QStringLiteral("resnet50-2gpu-pipelined.json"));
    const QString table = shortcuts_table(window.menuBar());
    for (const QString& entry : {QStringLiteral("View ▸ Cluster Canvas ▸ Zoom In"),
                                 QStringLiteral("View ▸ Cluster Canvas ▸ Fit Cluster to View"),
                                 QStringLiteral("View ▸ Cluster Canvas ▸ Find Device…")}) {
        EXPECT_TRUE(table.contains(entry.toHtmlEscaped())) << entry.toStdString();
    }
    EXPECT_TRUE(
        table.contains(QKeySequence(Qt::CTRL | Qt::Key_0).toString(QKeySequence::NativeText)));
}

}  // namespace
}  // namespace pipewright::gui
