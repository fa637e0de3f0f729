#include <gtest/gtest.h>
#include <QCoreApplication>
#include <QDockWidget>
#include <QPlainTextEdit>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QToolBar>
#include <QToolButton>
#include <QTreeWidget>
#include <QTreeWidgetItemIterator>

#include "editor/training_bar.h"
#include "run/run_controller.h"
#include "run/run_panel.h"
#include "window/main_window.h"

namespace pipewright::gui {
namespace {

// The steps: a window at 1600 px, narrowed to 900, widened again.
class WindowLayoutTest : public ::testing::Test {
  protected:
    void SetUp() override {
        window.resize(1600, 1000);
        ASSERT_TRUE(
            window.openFile(QStringLiteral(PIPEWRIGHT_ASSETS_DIR "/examples/gpt3-175b-p4d.json")));
        window.show();
        settle();
        palette_wide = dock("paletteDock")->width();
        inspector_wide = dock("inspectorDock")->width();
    }

    void resize(int width) {
        window.resize(width, 1000);
        settle();
    }
    void settle() {
        for (int i = 0; i < 10; ++i) {
            QCoreApplication::processEvents();
        }
    }
    QDockWidget* dock(const char* name) {
        return window.findChild<QDockWidget*>(QString::fromLatin1(name));
    }

    // Every name in the palette is drawn whole inside its viewport.
    void expect_palette_names_whole() {
        auto* palette = qobject_cast<QTreeWidget*>(dock("paletteDock")->widget());
        ASSERT_NE(palette, nullptr);
        const int room = palette->viewport()->width();
        int items = 0;
        for (QTreeWidgetItemIterator it(palette); *it != nullptr; ++it) {
            const QRect cell = palette->visualItemRect(*it);
            const int text = palette->fontMetrics().horizontalAdvance((*it)->text(0));
            // The text starts after the item's indentation (and its icon, none here).
            EXPECT_LE(cell.left() + text, room) << (*it)->text(0).toStdString();
            ++items;
        }
        EXPECT_GT(items, 10);
    }

    // No toolbar hides a control behind its overflow (») button.
    void expect_toolbars_whole() {
        for (QToolBar* bar : window.findChildren<QToolBar*>()) {
            for (auto* ext :
                 bar->findChildren<QToolButton*>(QStringLiteral("qt_toolbar_ext_button"))) {
                EXPECT_FALSE(ext->isVisible())
                    << bar->objectName().toStdString() << ": " << bar->width() << " px for "
                    << bar->sizeHint().width();
            }
            EXPECT_LE(bar->geometry().right(), window.width()) << bar->objectName().toStdString();
        }
    }

    MainWindow window;
    int palette_wide = 0;
    int inspector_wide = 0;
};

TEST_F(WindowLayoutTest, At900PixelsNothingIsCutOrHidden) {
    EXPECT_GE(palette_wide, 170);  // or wider, for its longest name
    EXPECT_EQ(inspector_wide, 340);
    resize(900);
    EXPECT_EQ(window.width(), 900);  // the views scroll instead of widening the window
    expect_palette_names_whole();
    expect_toolbars_whole();
    // The replicas and the Run button went to a second row.
    auto* run_bar = window.findChild<QToolBar*>(QStringLiteral("runBar"));
    ASSERT_NE(run_bar, nullptr);
    EXPECT_TRUE(window.toolBarBreak(window.trainingBar()->parallelismBar()));
    EXPECT_GT(run_bar->y(), window.trainingBar()->y());
    EXPECT_GT(window.trainingBar()->parallelismBar()->y(), window.trainingBar()->y());
    EXPECT_TRUE(run_bar->actions().contains(window.runController()->runAction()));
}

TEST_F(WindowLayoutTest, WideningAgainGivesThePaletteAndInspectorTheirWidthBack) {
    resize(900);
    resize(1600);
    EXPECT_NEAR(dock("paletteDock")->width(), palette_wide, 2);
    EXPECT_NEAR(dock("inspectorDock")->width(), inspector_wide, 2);
    expect_palette_names_whole();
    expect_toolbars_whole();
    // GPT-3 recomputes every block: the box that narrows it to the first
    // blocks of each stage needs room too, so one row takes 1,700 pixels.
    EXPECT_TRUE(window.toolBarBreak(window.trainingBar()->parallelismBar()));
    resize(1700);
    EXPECT_FALSE(window.toolBarBreak(window.trainingBar()->parallelismBar()));
    expect_toolbars_whole();
    resize(1600);
    // Much narrower still squeezes the docks; they recover all the same.
    resize(640);
    EXPECT_LT(dock("inspectorDock")->width(), inspector_wide);
    expect_palette_names_whole();
    resize(1600);
    EXPECT_NEAR(dock("paletteDock")->width(), palette_wide, 2);
    EXPECT_NEAR(dock("inspectorDock")->width(), inspector_wide, 2);
}

// Issue 36 #4 at 1280 x 720: the canvas keeps every tool out of the »
// menu, and the views fit without scrolling, so the timeline's time axis
// stays in sight and the Run tab's log shows several lines.
TEST_F(WindowLayoutTest, At1280By720TheViewsFitAndTheRunLogShowsLines) {
    ASSERT_TRUE(window.openFile(QStringLiteral(PIPEWRIGHT_ASSETS_DIR "/examples/mlp-cpu.json")));
    window.resize(1280, 720);
    settle();
    expect_toolbars_whole();
    auto* views = qobject_cast<QScrollArea*>(window.views()->parentWidget()->parentWidget());
    ASSERT_NE(views, nullptr);
    EXPECT_EQ(views->verticalScrollBar()->maximum(), 0)
        << "the views need " << window.views()->minimumSizeHint().height() << " px of "
        << views->viewport()->height();
    window.views()->setCurrentWidget(window.runPanel());
    settle();
    auto* log = window.findChild<QPlainTextEdit*>(QStringLiteral("runLog"));
    ASSERT_NE(log, nullptr);
    EXPECT_GE(log->viewport()->height(), 4 * log->fontMetrics().lineSpacing());
}

}  // namespace
}  // namespace pipewright::gui

namespace pipewright::gui {
namespace {

// The window's size and docks as the user left them come back at the next
// start (issue 36 #4); a first start has nothing to restore.
TEST(WindowLayoutMemory, SizeAndDocksComeBackAtTheNextStart) {
    QSettings().remove(QStringLiteral("window"));
    {
        MainWindow first;
        EXPECT_FALSE(first.restoreLayout());
        first.resize(1111, 777);
        first.show();
        QCoreApplication::processEvents();
        first.findChild<QDockWidget*>(QStringLiteral("paletteDock"))->hide();
        first.saveLayout();
    }
    MainWindow next;
    ASSERT_TRUE(next.restoreLayout());
    next.show();
    QCoreApplication::processEvents();
    EXPECT_EQ(next.size(), QSize(1111, 777));
    EXPECT_FALSE(next.findChild<QDockWidget*>(QStringLiteral("paletteDock"))->isVisible());
    EXPECT_TRUE(next.findChild<QDockWidget*>(QStringLiteral("inspectorDock"))->isVisible());
    QSettings().remove(QStringLiteral("window"));
}

}  // namespace
}  // namespace pipewright::gui
