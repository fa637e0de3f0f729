#include "studio_core/models/run_comparison_model.h"

#include <cmath>
#include <utility>

#include "pipewright/core/quantity_format.h"
#include "studio_core/format/format.h"

namespace pipewright::gui {
RunComparisonModel::RunComparisonModel(QObject* parent) : QAbstractTableModel(parent) {}

void RunComparisonModel::setRows(std::vector<RunComparisonRow> rows) {
    beginResetModel();
    rows_ = std::move(rows);
    endResetModel();
}

void RunComparisonModel::setFarOffForeground(const QVariant& brush) {
    far_off_foreground_ = brush;
    if (!rows_.empty()) {
        emit dataChanged(index(0, error), index(rowCount() - 1, error), {Qt::ForegroundRole});
    }
}

int RunComparisonModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int RunComparisonModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : columns;
}

Qt::ItemFlags RunComparisonModel::flags(const QModelIndex& index) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
        return Qt::NoItemFlags;
    }
    return Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemNeverHasChildren;
}

QString RunComparisonModel::text(const RunComparisonRow& row, int column) {
    const QString none = QStringLiteral("—");
    switch (column) {
        case what:
            return row.what;
        case simulated:
            return row.simulated_s ? format_duration(*row.simulated_s) : none;
        case measured:
            return row.measured_s ? format_duration(*row.measured_s) : none;
        default: {
            const auto e = row.error();
            return e ? QString::fromStdString(format_signed_percent(*e)) : none;
        }
    }
}

bool RunComparisonModel::farOff(const RunComparisonRow& row) {
    const auto e = row.error();
    return e && std::abs(*e) > 0.5;
}

QVariant RunComparisonModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
        return {};
    }
    const RunComparisonRow& row = rows_[static_cast<std::size_t>(index.row())];
    const int column = index.column();
    const bool far = column == error && farOff(row);
    switch (role) {
        case Qt::DisplayRole:
            return text(row, column);
        case Qt::TextAlignmentRole:
            return QVariant::fromValue(Qt::Alignment(
                (column == what ? Qt::AlignLeft : Qt::AlignRight) | Qt::AlignVCenter));
        case Qt::ForegroundRole:
            return far ? far_off_foreground_ : QVariant();
        case Qt::ToolTipRole:
            return far ? tr("The simulator is off by more than half here") : QVariant();
        case FarOffRole:
            return column == error ? QVariant(far) : QVariant();
        default:
            return {};
    }
}

QVariant RunComparisonModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || section < 0 || section >= columns) {
        return {};
    }
    if (role == Qt::DisplayRole) {
        switch (section) {
            case what:
                return QString();
            case simulated:
                return tr("Simulated");
            case measured:
                return tr("Measured");
            default:
                return tr("Error");
        }
    }
    if (role == Qt::ToolTipRole && section == measured) {
        return tr(
            "The iteration time is the median over the steps after the first, optimizer step "
            "included; the timeline shows one typical step");
    }
    if (role == Qt::ToolTipRole && section == error) {
        return tr(
            "(simulated − measured) / measured: +20 % means the simulator predicted 20 % too "
            "long");
    }
    return {};
}

}  // namespace pipewright::gui
