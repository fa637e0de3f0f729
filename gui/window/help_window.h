#pragma once

#include <QDialog>

class QMenuBar;
class QTextBrowser;

namespace pipewright::gui {

// The user guide inside the studio: the Markdown pages of docs/ (installed
// with the program, or the source tree's), with their links and pictures,
// Back, Forward and Contents. Links to the web open in the browser.
class HelpWindow : public QDialog {
    Q_OBJECT

  public:
    // `docsDir` holds studio.md; empty shows where the guide was looked for.
    explicit HelpWindow(const QString& docsDir, QWidget* parent = nullptr);

    [[nodiscard]] QTextBrowser* browser() const { return browser_; }

  private:
    QTextBrowser* browser_ = nullptr;
};

// Every menu command that has a keyboard shortcut, as an HTML table: made
// from the menus themselves, so it never disagrees with them.
[[nodiscard]] QString shortcuts_table(const QMenuBar* menus);

}  // namespace pipewright::gui
