// Help ▸ User Guide shows the docs inside the studio; the shortcuts list
// is made from the menus.
#include <gtest/gtest.h>

#include <QAction>
#include <QMenuBar>
#include <QTextBrowser>

#include "studio_core/asset_paths.h"
#include "window/help_window.h"
#include "window/main_window.h"

namespace pipewright::gui {
namespace {

TEST(Help, TheUserGuideOpensOnTheStudioPageAndFollowsItsLinks) {
    ASSERT_FALSE(docs_dir().isEmpty()) << "no docs/studio.md found";
    MainWindow window;
    auto* guide = window.findChild<QAction*>(QStringLiteral("userGuideAction"));
    ASSERT_NE(guide, nullptr);
    EXPECT_EQ(guide->shortcut(), QKeySequence(QKeySequence::HelpContents));
    guide->trigger();
    ASSERT_NE(window.helpWindow(), nullptr);
    EXPECT_TRUE(window.helpWindow()->isVisible());
    QTextBrowser* browser = window.helpWindow()->browser();
    EXPECT_TRUE(browser->source().toLocalFile().endsWith(QStringLiteral("studio.md")));
    EXPECT_TRUE(browser->toPlainText().contains(QStringLiteral("Pipewright Studio")));
    // A relative link to another page of the guide opens it in place.
    browser->setSource(QUrl(QStringLiteral("concepts.md")), QTextDocument::MarkdownResource);
    EXPECT_TRUE(browser->source().toString().endsWith(QStringLiteral("concepts.md")));
    EXPECT_GT(browser->toPlainText().size(), 200);
    EXPECT_TRUE(browser->isBackwardAvailable());
}

TEST(Help, AGuideThatIsNotInstalledSaysWhereItWasLookedFor) {
    HelpWindow help(QString{});
    EXPECT_TRUE(help.browser()->toPlainText().contains(QStringLiteral("not installed")));
}

TEST(Help, TheShortcutsListComesFromTheMenus) {
    MainWindow window;
    const QString table = shortcuts_table(window.menuBar());
    EXPECT_TRUE(table.contains(QStringLiteral("File ▸ Save"))) << table.toStdString();
    EXPECT_TRUE(
        table.contains(QKeySequence(QKeySequence::Save).toString(QKeySequence::NativeText)));
    EXPECT_TRUE(table.contains(QStringLiteral("Simulate ▸ Auto-plan")));
    EXPECT_FALSE(table.contains(QStringLiteral("About")));  // no shortcut, not listed
}

}  // namespace
}  // namespace pipewright::gui
