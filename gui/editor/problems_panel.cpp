#include "editor/problems_panel.h"

#include <QStyle>

#include "studio_core/models/problem_list_model.h"

namespace pipewright::gui {

ProblemsPanel::ProblemsPanel(QWidget* parent)
    : QListView(parent), model_(new ProblemListModel(this)) {
    setModel(model_);
    setWordWrap(true);
    setEditTriggers(QAbstractItemView::NoEditTriggers);
    setToolTip(tr("Click a problem to select what it names"));
    model_->setDecoration(style()->standardIcon(QStyle::SP_MessageBoxWarning));
    connect(this, &QListView::clicked, this, [this](const QModelIndex& index) {
        emit problemActivated(index.data(ProblemListModel::PathRole).toString());
    });
}

void ProblemsPanel::setProblems(const Diagnostics& problems) {
    model_->setProblems(problems);
}

int ProblemsPanel::count() const {
    return model_->rowCount();
}

}  // namespace pipewright::gui
