// The timeline at cluster scale, driven as a person would: groups collapsed
// by node, a click on a group's name, the lane filter, the wheel bindings,
// the overview strip, and names that never overprint.
#include <gtest/gtest.h>

#include <QApplication>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QScrollBar>
#include <QTest>
#include <QWheelEvent>

#include "pipewright/core/project_io.h"
#include "studio_core/simulation/simulation_runner.h"
#include "studio_core/timeline/label_fit.h"
#include "timeline/timeline_overview.h"
#include "timeline/timeline_plot.h"
#include "timeline/timeline_view.h"

namespace pipewright::gui {
namespace {

// `nodes` nodes of eight GPUs; each rank runs a forward, then later a
// backward, of `microbatches` micro-batches, staggered as in 1F1B.
Timeline cluster(int nodes, int microbatches = 4) {
    Timeline t;
    for (int n = 0; n < nodes; ++n) {
        for (int d = 0; d < 8; ++d) {
            t.devices.push_back("node" + std::to_string(n) + "/c0/gpu" + std::to_string(d));
        }
    }
    const int ranks = t.num_ranks();
    for (int r = 0; r < ranks; ++r) {
        for (int m = 0; m < microbatches; ++m) {
            const double f = (r + m) * 1e-3;
            const double b = (2 * ranks - r + 2 * m) * 1e-3;
            t.events.push_back({r, Action{r, ActionType::forward, m}, f, f + 0.9e-3});
            t.events.push_back({r, Action{r, ActionType::backward, m}, b, b + 1.8e-3});
        }
    }
    return t;
}

void wheel(QWidget* widget, QPoint pos, int delta, Qt::KeyboardModifiers mods) {
    QWheelEvent event(QPointF(pos), QPointF(widget->mapToGlobal(pos)), QPoint(), QPoint(0, delta),
                      Qt::NoButton, mods, Qt::NoScrollPhase, false);
    QApplication::sendEvent(widget, &event);
}

class TimelineViewTest : public ::testing::Test {
  protected:
    void SetUp() override {
        view.resize(1200, 700);
        view.show();
        ASSERT_TRUE(QTest::qWaitForWindowExposed(&view));
    }

    void show(const Timeline& t) {
        plot()->setTimeline(t);
        settle();
    }

    // Lets layouts and queued replots happen, then paints once more.
    void settle() {
        QCoreApplication::processEvents();
        plot()->replot(QCustomPlot::rpImmediateRefresh);
    }

    TimelinePlot* plot() { return view.plot(); }

    // A point in the name column, in the middle of row `row`.
    QPoint nameOf(int row) {
        const QRectF r = plot()->rowRect(row);
        return QPoint(8, static_cast<int>(r.center().y()));
    }

    TimelineView view;
};

TEST_F(TimelineViewTest, ClusterScaleStartsWithOneLanePerNode) {
    show(cluster(128));  // 1,024 devices
    EXPECT_EQ(plot()->lanes().drawnLanes(), 128);
    EXPECT_EQ(plot()->lanes().tree(0).nodeCount(), 128);
    // Only the rows on screen are drawn; the rest are a scroll away.
    EXPECT_GT(plot()->drawnRows(), 10);
    EXPECT_LT(plot()->drawnRows(), 128);
    EXPECT_TRUE(view.laneScrollBar()->isVisible());
    EXPECT_GT(view.laneScrollBar()->maximum(), 0);
    EXPECT_TRUE(view.countText().contains(QStringLiteral("128 lanes")))
        << view.countText().toStdString();
    EXPECT_TRUE(view.countText().contains(QLocale().toString(1024)))
        << view.countText().toStdString();
    EXPECT_TRUE(none_overlap(plot()->drawnLabelRects()));
    // Every name drawn is a node's summary.
    ASSERT_FALSE(plot()->drawnLaneNames().isEmpty());
    for (const QString& name : plot()->drawnLaneNames()) {
        EXPECT_TRUE(name.startsWith(QStringLiteral("▸ node"))) << name.toStdString();
    }
}

TEST_F(TimelineViewTest, SmallProjectsShowEveryLane) {
    show(cluster(1));
    EXPECT_EQ(plot()->lanes().drawnLanes(), 8);
    EXPECT_FALSE(view.laneScrollBar()->isVisible());
    EXPECT_EQ(plot()->drawnLaneNames().count(QStringLiteral("gpu3")), 1);
}

TEST_F(TimelineViewTest, ClickingAGroupsNameExpandsAndCollapsesIt) {
    show(cluster(128));
    QTest::mouseClick(plot(), Qt::LeftButton, Qt::NoModifier, nameOf(2));
    ASSERT_EQ(plot()->lanes().rows()[2].kind, LaneRowKind::header);
    EXPECT_EQ(plot()->lanes().drawnLanes(), 127 + 8);
    settle();
    EXPECT_TRUE(plot()->drawnLaneNames().contains(QStringLiteral("gpu0")));
    EXPECT_TRUE(none_overlap(plot()->drawnLabelRects()));
    // A re-simulation with the same devices keeps the group open.
    plot()->setTimeline(cluster(128, 5));
    EXPECT_EQ(plot()->lanes().rows()[2].kind, LaneRowKind::header);
    QTest::mouseClick(plot(), Qt::LeftButton, Qt::NoModifier, nameOf(2));
    EXPECT_EQ(plot()->lanes().drawnLanes(), 128);
    // Expand all: every device's lane, still readable, and scrolling.
    QTest::mouseClick(view.findChild<QWidget*>(QStringLiteral("expandGroups")), Qt::LeftButton);
    EXPECT_EQ(plot()->lanes().drawnLanes(), 1024);
    settle();
    EXPECT_LT(plot()->drawnRows(), 100);
    EXPECT_TRUE(none_overlap(plot()->drawnLabelRects()));
}

TEST_F(TimelineViewTest, TheFilterShowsMatchingLanesAndSaysHowMany) {
    show(cluster(128));
    QTest::keyClicks(view.filterEdit(), QStringLiteral("node3/"));
    EXPECT_EQ(plot()->lanes().matchingDevices(), 8);
    EXPECT_EQ(plot()->lanes().drawnLanes(), 8);  // they fit: expanded
    EXPECT_TRUE(view.countText().contains(QStringLiteral("8 of ") + QLocale().toString(1024)))
        << view.countText().toStdString();
    settle();
    EXPECT_FALSE(view.laneScrollBar()->isVisible());
    for (const LaneRow& row : plot()->lanes().rows()) {
        if (row.kind == LaneRowKind::lane) {
            EXPECT_GE(row.rank, 24);
            EXPECT_LT(row.rank, 32);
        }
    }
    view.filterEdit()->clear();
    QTest::keyClicks(view.filterEdit(), QStringLiteral("100-115"));
    EXPECT_EQ(plot()->lanes().matchingDevices(), 16);
    view.filterEdit()->clear();
    QTest::keyClicks(view.filterEdit(), QStringLiteral("15-8"));
    EXPECT_TRUE(view.countText().contains(QStringLiteral("not understood")))
        << view.countText().toStdString();
    view.filterEdit()->clear();
    QTest::keyClicks(view.filterEdit(), QStringLiteral("tpu"));
    EXPECT_EQ(plot()->lanes().drawnLanes(), 0);
    EXPECT_TRUE(view.countText().contains(QStringLiteral("no device")))
        << view.countText().toStdString();
    view.filterEdit()->clear();
    EXPECT_EQ(plot()->lanes().drawnLanes(), 128);
}

TEST_F(TimelineViewTest, WheelZoomsTimeShiftWheelScrollsCtrlWheelZoomsLanes) {
    show(cluster(128));
    const QPoint middle = plot()->axisRect()->rect().center();
    const double time_before = plot()->xAxis->range().size();
    wheel(plot(), middle, 120, Qt::NoModifier);
    EXPECT_LT(plot()->xAxis->range().size(), time_before);
    EXPECT_EQ(plot()->laneScroll(), 0);

    wheel(plot(), middle, -120, Qt::ShiftModifier);
    const double scrolled = plot()->laneScroll();
    EXPECT_GT(scrolled, 0);
    EXPECT_EQ(view.laneScrollBar()->value(), static_cast<int>(std::lround(scrolled)));

    const double lane_before = plot()->lanes().laneHeight();
    const int row_before = plot()->rowAtPixel(middle);
    wheel(plot(), middle, 120, Qt::ControlModifier);
    EXPECT_GT(plot()->lanes().laneHeight(), lane_before);
    EXPECT_EQ(plot()->rowAtPixel(middle), row_before);  // zoomed around the cursor

    // The scroll bar scrolls too, and never past the last row.
    view.laneScrollBar()->setValue(view.laneScrollBar()->maximum());
    EXPECT_NEAR(plot()->laneScroll() + plot()->viewportHeight(), plot()->lanes().contentHeight(),
                1);
    // Fit brings everything back.
    plot()->fitToWindow();
    EXPECT_EQ(plot()->laneScroll(), 0);
    EXPECT_LT(plot()->lanes().laneHeight(), lane_before * 1.2);
    EXPECT_EQ(plot()->lanes().drawnLanes(), 128);
}

TEST_F(TimelineViewTest, LaneNamesAreDrawnOnlyWhereTheyFit) {
    show(cluster(16));
    plot()->expandAllGroups();
    const double text = QFontMetricsF(plot()->font()).height();
    for (double height : {3.0, 8.0, text, 30.0, 90.0}) {
        plot()->zoomLanes(height / plot()->lanes().laneHeight(), plot()->axisRect()->top());
        settle();
        const auto rects = plot()->drawnLabelRects();
        EXPECT_TRUE(none_overlap(rects)) << "lane height " << height;
        int lanes_named = 0;
        for (const QString& name : plot()->drawnLaneNames()) {
            lanes_named += name.startsWith(QStringLiteral("gpu")) ? 1 : 0;
        }
        if (plot()->lanes().laneHeight() < text) {
            EXPECT_EQ(lanes_named, 0) << "lane height " << height;
        } else {
            EXPECT_GT(lanes_named, 0) << "lane height " << height;
        }
    }
}

TEST_F(TimelineViewTest, TheOverviewFramesTheViewAndMovesIt) {
    show(cluster(128));
    TimelineOverview* overview = view.overview();
    const QRectF before = overview->windowRect();
    ASSERT_TRUE(before.isValid());
    EXPECT_LT(before.height(), overview->height() / 2.0);  // a few of 128 nodes
    // Zoom into the first tenth, then click near the bottom right corner.
    plot()->xAxis->setRange(0, plot()->span() / plot()->timeUnit() / 10);
    QTest::mouseClick(overview, Qt::LeftButton, Qt::NoModifier,
                      QPoint(overview->width() - 40, overview->height() - 3));
    EXPECT_GT(plot()->laneScroll(), 0);
    EXPECT_GT(plot()->xAxis->range().center() * plot()->timeUnit(), plot()->span() / 2);
    const QRectF after = overview->windowRect();
    EXPECT_GT(after.center().y(), before.center().y());
    EXPECT_GT(after.center().x(), before.center().x());
}

TEST_F(TimelineViewTest, TheGpt3ExampleIsReadable) {
    const auto loaded =
        load_project_file(std::string(PIPEWRIGHT_ASSETS_DIR) + "/examples/gpt3-175b-p4d.json");
    ASSERT_TRUE(loaded.project);
    const SimulationResult result = simulate_now(*loaded.project, PIPEWRIGHT_ASSETS_DIR);
    ASSERT_TRUE(result.report);
    view.resize(1084, 480);  // about the Timeline tab of a 1600x1000 window
    show(result.report->timeline);
    // 104 devices on 13 nodes do not fit as lanes: one lane per node.
    EXPECT_EQ(plot()->lanes().drawnLanes(), 13);
    EXPECT_FALSE(view.laneScrollBar()->isVisible());
    EXPECT_EQ(plot()->drawnLaneNames().size(), 13);
    EXPECT_TRUE(none_overlap(plot()->drawnLabelRects()));
}

// GPT-3 on 1,024 GPUs: 8 lanes, each a tensor group of 8 in 16 replicas
// run alike. The count and the filter are of the devices the lanes stand for.
TEST_F(TimelineViewTest, AtClusterScaleTheFilterSearchesEveryDeviceTheLanesStandFor) {
    const auto loaded = load_project_file(std::string(PIPEWRIGHT_ASSETS_DIR) +
                                          "/examples/gpt3-175b-a100-1024.json");
    ASSERT_TRUE(loaded.project);
    const SimulationResult result = simulate_now(*loaded.project, PIPEWRIGHT_ASSETS_DIR);
    ASSERT_TRUE(result.report);
    view.resize(1084, 480);
    plot()->setTimeline(result.report->timeline, result.report->lane_devices);
    settle();
    const QString all = QLocale().toString(1024);
    EXPECT_EQ(view.countText(), QStringLiteral("8 lanes · all %1 devices").arg(all));
    auto* filter = view.findChild<QLineEdit*>(QStringLiteral("laneFilter"));
    filter->setText(QStringLiteral("gpu3"));  // the placeholder's own example
    EXPECT_EQ(view.countText(), QStringLiteral("8 lanes · 128 of %1 devices").arg(all));
    filter->setText(QStringLiteral("node100/"));
    EXPECT_EQ(view.countText(), QStringLiteral("1 lane · 8 of %1 devices").arg(all));
    filter->setText(QStringLiteral("8-15"));  // lanes are numbered 0–7
    EXPECT_EQ(view.countText(), QStringLiteral("no device matches (lanes 0–7)"));
}

// DualPipeV's overlapped pairs share a frame, as in DualPipe's figures;
// ZB-V has none.
TEST_F(TimelineViewTest, OverlappedPairsShareAFrame) {
    const std::string examples = std::string(PIPEWRIGHT_ASSETS_DIR) + "/../docs/examples/";
    for (const char* name : {"dualpipev", "zbv"}) {
        SCOPED_TRACE(name);
        const auto loaded = load_project_file(examples + "four-stages-" + name + ".json");
        ASSERT_TRUE(loaded.project);
        const SimulationResult result = simulate_now(*loaded.project, examples);
        ASSERT_TRUE(result.report);
        show(result.report->timeline);
        if (std::string(name) == "dualpipev") {
            // 2(m - 2p + r + 1) + (p - r - 1) pairs on device r, less the
            // turn on the last: 5 + 6 + 7 + 7 with p = 4, m = 8.
            EXPECT_EQ(plot()->drawnPairs(), 25);
        } else {
            EXPECT_EQ(plot()->drawnPairs(), 0);
        }
    }
}

}  // namespace
}  // namespace pipewright::gui
