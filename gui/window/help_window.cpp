#include "window/help_window.h"

#include <QDialogButtonBox>
#include <QDir>
#include <QHBoxLayout>
#include <QMenu>
#include <QMenuBar>
#include <QPushButton>
#include <QTextBrowser>
#include <QUrl>
#include <QVBoxLayout>

#include "studio_core/project/asset_paths.h"
#include "window/fitted_image_browser.h"

namespace pipewright::gui {

HelpWindow::HelpWindow(const QString& docsDir, QWidget* parent) : QDialog(parent) {
    setObjectName(QStringLiteral("helpWindow"));
    setWindowTitle(tr("Pipewright Studio — User Guide"));
    resize(900, 760);
    browser_ = new FittedImageBrowser(this);
    browser_->setObjectName(QStringLiteral("helpBrowser"));
    browser_->setOpenExternalLinks(true);
    auto* back = new QPushButton(tr("Back"), this);
    auto* forward = new QPushButton(tr("Forward"), this);
    auto* contents = new QPushButton(tr("Contents"), this);
    back->setEnabled(false);
    forward->setEnabled(false);
    connect(back, &QPushButton::clicked, browser_, &QTextBrowser::backward);
    connect(forward, &QPushButton::clicked, browser_, &QTextBrowser::forward);
    connect(browser_, &QTextBrowser::backwardAvailable, back, &QPushButton::setEnabled);
    connect(browser_, &QTextBrowser::forwardAvailable, forward, &QPushButton::setEnabled);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(back);
    buttons->addWidget(forward);
    buttons->addWidget(contents);
    buttons->addStretch();
    auto* close = new QDialogButtonBox(QDialogButtonBox::Close, this);
    connect(close, &QDialogButtonBox::rejected, this, &QDialog::reject);
    buttons->addWidget(close);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(buttons);
    layout->addWidget(browser_);

    if (docsDir.isEmpty()) {
        contents->setEnabled(false);
        browser_->setHtml(
            tr("<h2>The user guide is not installed</h2><p>It is looked for in "
               "<code>share/doc/pipewright/docs</code> beside the program and in the data "
               "folders. It comes with the <code>pipewright</code> package, and is online with "
               "the sources (<code>docs/studio.md</code>).</p>"));
        return;
    }
    const QUrl home = QUrl::fromLocalFile(QDir(docsDir).filePath(QStringLiteral("studio.md")));
    connect(contents, &QPushButton::clicked, this, [this, docsDir] {
        browser_->setSource(
            QUrl::fromLocalFile(QDir(docsDir).filePath(QStringLiteral("README.md"))),
            QTextDocument::MarkdownResource);
    });
    browser_->setSearchPaths({docsDir});
    browser_->setSource(home, QTextDocument::MarkdownResource);
}

namespace {

void collect_shortcuts(const QMenu* menu, const QString& path, QString& rows) {
    for (const QAction* action : menu->actions()) {
        QString name = action->text();
        name.remove(QLatin1Char('&'));
        if (action->menu() != nullptr) {
            collect_shortcuts(action->menu(), path + name + QStringLiteral(" ▸ "), rows);
            continue;
        }
        if (action->isSeparator() || action->shortcut().isEmpty()) {
            continue;
        }
        rows += QStringLiteral("<tr><td><b>%1</b></td><td>%2</td></tr>")
                    .arg(action->shortcut().toString(QKeySequence::NativeText).toHtmlEscaped(),
                         (path + name).toHtmlEscaped());
    }
}

}  // namespace

QString shortcuts_table(const QMenuBar* menus) {
    QString rows;
    for (const QAction* action : menus->actions()) {
        if (action->menu() != nullptr) {
            QString name = action->text();
            name.remove(QLatin1Char('&'));
            collect_shortcuts(action->menu(), name + QStringLiteral(" ▸ "), rows);
        }
    }
    return QStringLiteral("<table cellspacing='6'>") + rows + QStringLiteral("</table>");
}

}  // namespace pipewright::gui
