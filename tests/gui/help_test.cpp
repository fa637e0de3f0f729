// Help ▸ User Guide shows the docs inside the studio; the shortcuts list
// is made from the menus.
#include <gtest/gtest.h>

#include <QAction>
#include <QImage>
#include <QMenu>
#include <QMenuBar>
#include <QTableView>
#include <QTest>
#include <QTextBrowser>
#include <map>

#include "studio_core/project/asset_paths.h"
#include "window/fitted_image_browser.h"
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

// The guide's screenshots are 1,600 pixels wide: drawn at full size they
// looked like a second live window and needed sideways scrolling.
TEST(Help, PicturesFitTheViewerAndFollowItsWidth) {
    ASSERT_FALSE(docs_dir().isEmpty()) << "no docs/studio.md found";
    HelpWindow help(docs_dir());
    help.resize(900, 700);
    help.show();
    QCoreApplication::processEvents();
    auto* browser = qobject_cast<FittedImageBrowser*>(help.browser());
    ASSERT_NE(browser, nullptr);
    browser->reload();
    const QUrl picture(QStringLiteral("images/studio-timeline-gpt3.png"));
    const auto width = [&] {
        return browser->document()
            ->resource(QTextDocument::ImageResource, picture)
            .value<QImage>()
            .width();
    };
    ASSERT_GT(width(), 0) << "the page shows the picture";
    EXPECT_LE(width(), browser->viewport()->width());
    EXPECT_EQ(width(), browser->pictureWidth());
    // Wider: the pictures grow with the viewer, once it settles.
    const int narrow = width();
    help.resize(1300, 700);
    QCoreApplication::processEvents();
    EXPECT_TRUE(QTest::qWaitFor([&] { return width() > narrow; }, 3000)) << width();
    EXPECT_LE(width(), browser->viewport()->width());
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

// Keyboard users (issue 36): every menu's mnemonics are its own (View had
// two Cs), Save As has a shortcut on every platform, and Tab leaves the
// model table instead of walking its cells.
TEST(Keyboard, MnemonicsAreUniqueSaveAsHasAShortcutAndTabLeavesTheTable) {
    MainWindow window;
    const auto mnemonic = [](const QString& text) {
        const qsizetype at = text.indexOf(QLatin1Char('&'));
        return at >= 0 && at + 1 < text.size() ? text.at(at + 1).toLower() : QChar();
    };
    for (QAction* top : window.menuBar()->actions()) {
        QMenu* menu = top->menu();
        if (menu == nullptr) {
            continue;
        }
        std::map<QChar, QString> taken;
        for (QAction* a : menu->actions()) {
            const QChar key = mnemonic(a->text());
            if (key.isNull()) {
                continue;
            }
            const auto [it, fresh] = taken.emplace(key, a->text());
            EXPECT_TRUE(fresh) << top->text().toStdString() << ": " << a->text().toStdString()
                               << " and " << it->second.toStdString() << " share Alt+"
                               << QString(key).toStdString();
        }
    }
    bool save_as = false;
    for (QAction* a : window.findChildren<QAction*>()) {
        if (a->text() == QStringLiteral("Save &As…")) {
            save_as = true;
            EXPECT_FALSE(a->shortcut().isEmpty());
        }
    }
    EXPECT_TRUE(save_as);
    ASSERT_NE(window.modelTable(), nullptr);
    EXPECT_FALSE(window.modelTable()->tabKeyNavigation());
}

}  // namespace
}  // namespace pipewright::gui
