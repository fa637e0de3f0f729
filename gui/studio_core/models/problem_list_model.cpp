#include "studio_core/models/problem_list_model.h"

namespace pipewright::gui {

ProblemListModel::ProblemListModel(QObject* parent) : QAbstractListModel(parent) {}

void ProblemListModel::setProblems(const Diagnostics& problems) {
    beginResetModel();
    problems_ = problems.items();
    endResetModel();
}

void ProblemListModel::setDecoration(const QVariant& decoration) {
    decoration_ = decoration;
    if (!problems_.empty()) {
        emit dataChanged(index(0), index(rowCount() - 1), {Qt::DecorationRole});
    }
}

int ProblemListModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(problems_.size());
}

QVariant ProblemListModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
        return {};
    }
    const Diagnostic& d = problems_[static_cast<std::size_t>(index.row())];
    const QString path = QString::fromStdString(d.path);
    const QString message = QString::fromStdString(d.message);
    switch (role) {
        case Qt::DisplayRole:
            return path.isEmpty() ? message : QStringLiteral("%1: %2").arg(path, message);
        case PathRole:
            return path;
        case Qt::DecorationRole:
            return decoration_;
        default:
            return {};
    }
}

}  // namespace pipewright::gui
