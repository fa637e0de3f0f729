#include <gtest/gtest.h>
#include <QLabel>
#include <QSignalSpy>
#include <QTabWidget>

#include "document/project_document.h"
#include "metrics/bar_chart.h"
#include "metrics/comparison_panel.h"
#include "pipewright/core/quantity_format.h"
#include "window/main_window.h"

namespace pipewright::gui {
namespace {

// GPT-3 on 98 A100s: `pipewright simulate --compare-schedules` prints an
// hour for the single device, which needs 3.97 TiB of its 40 GiB (fits: NO),
// and zb-h1 over the 40 GiB too.
class ComparisonChartsTest : public ::testing::Test {
  protected:
    void SetUp() override {
        window.resize(1600, 1000);
        ASSERT_TRUE(
            window.openFile(QStringLiteral(PIPEWRIGHT_ASSETS_DIR "/examples/gpt3-175b-p4d.json")));
        window.show();
        window.views()->setCurrentWidget(window.comparisonPanel());
        QSignalSpy compared(window.comparisonPanel(), &ComparisonPanel::compared);
        window.comparisonPanel()->compare(window.document()->project(), {});
        ASSERT_TRUE(compared.wait(60000));
        QCoreApplication::processEvents();
    }

    [[nodiscard]] ComparisonPanel* panel() const { return window.comparisonPanel(); }

    // Whether `chart` has a bar for `category` ("single device" for
    // "single device (A100-40GB)").
    static const ChartBar* find(const BarChart* chart, const QString& category) {
        for (const ChartBar& b : chart->bars()) {
            if (b.category == category || b.category.startsWith(category + QLatin1Char(' '))) {
                return &b;
            }
        }
        return nullptr;
    }
    static const ChartBar& bar(const BarChart* chart, const QString& category) {
        static const ChartBar none;
        const ChartBar* found = find(chart, category);
        if (found == nullptr) {
            ADD_FAILURE() << "no bar for " << category.toStdString();
            return none;
        }
        return *found;
    }

    // Every label lies inside its chart's axis rectangle: nothing clipped,
    // nothing elided.
    static void expect_labels_inside(BarChart* chart) {
        chart->replot();
        const QRect area = chart->axisRect()->rect();
        ASSERT_FALSE(chart->bars().empty());
        for (int i = 0; i < static_cast<int>(chart->bars().size()); ++i) {
            const QRect label = chart->labelRect(i);
            const ChartBar& b = chart->bars()[static_cast<std::size_t>(i)];
            EXPECT_FALSE(b.label.contains(QChar(0x2026))) << b.label.toStdString();
            EXPECT_GE(label.left(), area.left())
                << chart->objectName().toStdString() << " " << b.label.toStdString();
            EXPECT_LE(label.right(), area.right())
                << chart->objectName().toStdString() << " " << b.label.toStdString() << " ends at "
                << label.right() << " of " << area.right();
        }
    }

    MainWindow window;
};

// Before the first comparison there are no empty axes, only the buttons and
// the hint (issue 36 #15); the comparison brings the charts.
TEST(ComparisonPanelBeforeAnyCompare, ShowsNoEmptyCharts) {
    MainWindow window;
    ASSERT_TRUE(window.openFile(QStringLiteral(PIPEWRIGHT_ASSETS_DIR "/examples/dummy-2gpu.json")));
    window.show();
    window.views()->setCurrentWidget(window.comparisonPanel());
    QCoreApplication::processEvents();
    ComparisonPanel* panel = window.comparisonPanel();
    EXPECT_FALSE(panel->timeChart()->isVisible());
    EXPECT_TRUE(panel->statusText().contains(QStringLiteral("Press a button")))
        << panel->statusText().toStdString();
    QSignalSpy compared(panel, &ComparisonPanel::compared);
    panel->compare(window.document()->project(), {});
    ASSERT_TRUE(compared.wait(60000));
    EXPECT_TRUE(panel->timeChart()->isVisible());
}

// The single device's and naive's 39 minutes do not make the pipelines'
// 37 s slivers: their bars stop at the scale's cap, broken, with their
// figure beside them (issue 36 #7).
TEST_F(ComparisonChartsTest, OutliersAreBrokenSoTheContendersCanBeCompared) {
    const BarChart* time = panel()->timeChart();
    int broken = 0;
    for (int i = 0; i < static_cast<int>(time->bars().size()); ++i) {
        const ChartBar& bar = time->bars()[static_cast<std::size_t>(i)];
        if (time->isBroken(i)) {
            ++broken;
            EXPECT_LT(time->drawnValue(i), bar.value);
            EXPECT_TRUE(bar.label.endsWith(QStringLiteral("min"))) << bar.label.toStdString();
        } else {
            EXPECT_EQ(time->drawnValue(i), bar.value);
        }
    }
    EXPECT_EQ(broken, 2);  // the single device and naive
    const ChartBar* pipelined = find(time, QStringLiteral("1f1b"));
    ASSERT_NE(pipelined, nullptr);
    // The contender spans a good part of the scale now.
    EXPECT_GT(pipelined->value, 0.2 * time->xAxis->range().upper);
}

TEST_F(ComparisonChartsTest, EachChartHasAUnitForItsLargestValue) {
    // The single device's hour reads in minutes, not as millions of ms.
    EXPECT_EQ(panel()->timeChart()->xAxis->label().toStdString(),
              "iteration time (min) · lower is better");
    EXPECT_TRUE(panel()->memoryChart()->xAxis->label().startsWith(QStringLiteral("TiB ·")));
    const ChartBar& single = bar(panel()->timeChart(), QStringLiteral("single device"));
    EXPECT_EQ(single.category, "single device (A100-40GB)");
    EXPECT_NEAR(single.value, 39.2, 0.05);  // minutes
    // The axis has plain figures, no "·10⁶".
    EXPECT_LT(panel()->timeChart()->xAxis->range().upper, 100);
}

TEST_F(ComparisonChartsTest, LabelsAreTheCommandLinesFigures) {
    for (const ComparisonRow& row : panel()->rows()) {
        if (!row.report) {
            EXPECT_EQ(find(panel()->timeChart(), QString::fromStdString(row.label)), nullptr);
            continue;
        }
        const QString category = QString::fromStdString(row.label);
        EXPECT_EQ(bar(panel()->timeChart(), category).label.toStdString(),
                  format_duration(row.report->iteration_time_s));
        EXPECT_EQ(bar(panel()->bubbleChart(), category).label.toStdString(),
                  format_percent(row.report->bubble_fraction));
    }
    EXPECT_EQ(bar(panel()->timeChart(), QStringLiteral("single device")).label, "39.2 min");
    EXPECT_EQ(bar(panel()->timeChart(), QStringLiteral("gpipe")).label, "36.9 s");
    // One A100 cannot hold GPT-3, and naive's and GPipe's last stage keeps
    // the loss's float32 softmax for every sample in flight (192 of them):
    // the gains are over zb-auto, the slowest schedule that fits, and the
    // chart says so.
    EXPECT_EQ(bar(panel()->gainChart(), QStringLiteral("gpipe")).label, "+107.8 %");
    EXPECT_EQ(bar(panel()->gainChart(), QStringLiteral("zb-auto")).label, "baseline");
    EXPECT_EQ(bar(panel()->gainChart(), QStringLiteral("single device")).label, "-96.7 %");
    EXPECT_EQ(panel()->gainChart()->title(), QStringLiteral("Gain over zb-auto"));
    EXPECT_EQ(bar(panel()->memoryChart(), QStringLiteral("1f1b")).label, "34.2 GiB");
}

TEST_F(ComparisonChartsTest, WhatDoesNotFitIsMarkedAsTheCommandLineSaysNo) {
    for (BarChart* chart : {panel()->timeChart(), panel()->gainChart(), panel()->bubbleChart(),
                            panel()->memoryChart()}) {
        EXPECT_TRUE(bar(chart, QStringLiteral("single device")).flagged);
        EXPECT_TRUE(bar(chart, QStringLiteral("zb-h1")).flagged);
        EXPECT_TRUE(bar(chart, QStringLiteral("gpipe")).flagged);
        EXPECT_FALSE(bar(chart, QStringLiteral("1f1b")).flagged);
        EXPECT_FALSE(bar(chart, QStringLiteral("zb-auto")).flagged);
    }
    const ChartBar& single = bar(panel()->memoryChart(), QStringLiteral("single device"));
    EXPECT_EQ(single.label, "3.97 TiB · does not fit");
    // The capacity mark: 39 GiB in the chart's TiB.
    ASSERT_TRUE(single.limit);
    EXPECT_DOUBLE_EQ(*single.limit, 39.0 / 1024);
    EXPECT_TRUE(single.tooltip.contains(
        QStringLiteral("does not fit: needs 3.97 TiB of 39.0 GiB on one A100-40GB")))
        << single.tooltip.toStdString();
    EXPECT_TRUE(bar(panel()->memoryChart(), QStringLiteral("zb-h1"))
                    .tooltip.contains(QStringLiteral("does not fit: needs 61.3 GiB of 39.0 GiB")));
    EXPECT_TRUE(panel()->notesText().contains(QStringLiteral("Does not fit in memory:")));
    EXPECT_TRUE(panel()->notesText().contains(QStringLiteral(
        "single device (A100-40GB)</b> needs 3.97 TiB of 39.0 GiB on one A100-40GB")));
    EXPECT_TRUE(panel()->notesText().contains(QStringLiteral("interleaved-1f1b")));
    // The tooltip shows where the pointer is: over the single device's row.
    BarChart* memory = panel()->memoryChart();
    const QRect row = memory->labelRect(0);
    EXPECT_EQ(memory->toolTipAt(QPoint(memory->axisRect()->left() + 5, row.center().y())),
              single.tooltip);
    EXPECT_TRUE(memory->toolTipAt(QPoint(5, 5)).isEmpty());
}

TEST_F(ComparisonChartsTest, NoLabelIsClippedWideOrNarrow) {
    for (BarChart* chart : {panel()->timeChart(), panel()->gainChart(), panel()->bubbleChart(),
                            panel()->memoryChart()}) {
        expect_labels_inside(chart);
    }
    // Narrow: the charts keep the width their labels need, and scroll.
    window.resize(900, 1000);
    QCoreApplication::processEvents();
    for (BarChart* chart : {panel()->timeChart(), panel()->gainChart(), panel()->bubbleChart(),
                            panel()->memoryChart()}) {
        EXPECT_GE(chart->width(), chart->minimumSizeHint().width());
        expect_labels_inside(chart);
    }
}

}  // namespace
}  // namespace pipewright::gui
