#include "editor/problems_panel.h"

#include <QStyle>

namespace pipewright::gui {

ProblemsPanel::ProblemsPanel(QWidget* parent) : QListWidget(parent) {
    setWordWrap(true);
    setToolTip(tr("Click a problem to select what it names"));
    connect(this, &QListWidget::itemClicked, this, [this](QListWidgetItem* item) {
        emit problemActivated(item->data(Qt::UserRole).toString());
    });
}

void ProblemsPanel::setProblems(const Diagnostics& problems) {
    clear();
    const QIcon icon = style()->standardIcon(QStyle::SP_MessageBoxWarning);
    for (const Diagnostic& d : problems.items()) {
        const QString path = QString::fromStdString(d.path);
        auto* item = new QListWidgetItem(
            icon,
            path.isEmpty() ? QString::fromStdString(d.message)
                           : QStringLiteral("%1: %2").arg(path, QString::fromStdString(d.message)),
            this);
        item->setData(Qt::UserRole, path);
    }
}

}  // namespace pipewright::gui
