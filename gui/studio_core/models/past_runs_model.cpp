#include "studio_core/models/past_runs_model.h"

#include <QLocale>
#include <utility>

#include "studio_core/format/format.h"

namespace pipewright::gui {

PastRunsModel::PastRunsModel(QObject* parent) : QAbstractListModel(parent) {}

void PastRunsModel::setRuns(std::vector<PastRun> runs, const QString& runs_dir) {
    beginResetModel();
    runs_ = std::move(runs);
    runs_dir_ = runs_dir;
    endResetModel();
}

int PastRunsModel::rowOf(const QString& dir) const {
    for (std::size_t i = 0; i < runs_.size(); ++i) {
        if (runs_[i].dir == dir) {
            return static_cast<int>(i);
        }
    }
    return -1;
}

void PastRunsModel::setOtherLayoutForeground(const QVariant& brush) {
    other_foreground_ = brush;
    if (!runs_.empty()) {
        emit dataChanged(index(0), index(rowCount() - 1), {Qt::ForegroundRole});
    }
}

int PastRunsModel::rowCount(const QModelIndex& parent) const {
    if (parent.isValid()) {
        return 0;
    }
    return runs_.empty() ? 1 : static_cast<int>(runs_.size());
}

Qt::ItemFlags PastRunsModel::flags(const QModelIndex& index) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid) ||
        runs_.empty()) {
        return Qt::NoItemFlags;
    }
    return Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemNeverHasChildren;
}

QVariant PastRunsModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
        return {};
    }
    if (!runs_.empty()) {
        return runData(runs_[static_cast<std::size_t>(index.row())], role);
    }
    switch (role) {
        case Qt::DisplayRole:
            return tr("No runs of this project yet");
        case Qt::ToolTipRole:
            return tr("Runs are kept in %1").arg(runs_dir_);
        case DirRole:
            return QString();
        default:
            return {};
    }
}

QVariant PastRunsModel::runData(const PastRun& run, int role) const {
    switch (role) {
        case Qt::DisplayRole: {
            QString text = run.name;
            if (run.iteration_time_s) {
                text += tr("\n%1 per iteration · %n step(s)", nullptr, run.steps)
                            .arg(format_duration(*run.iteration_time_s));
            }
            if (run.plan == PastRun::Plan::other) {
                text += tr("\nanother layout");
            }
            return text;
        }
        case Qt::ToolTipRole: {
            QString note;
            if (run.plan == PastRun::Plan::other) {
                note =
                    tr("\nIt ran another layout of this model: its lanes do not match the "
                       "simulation's action by action.");
            } else if (run.plan == PastRun::Plan::unrecorded) {
                note =
                    tr("\nIt records no project (started outside the studio): its layout is "
                       "not known.");
            }
            return tr("%1\nfinished %2")
                       .arg(run.dir, QLocale().toString(run.finished, QLocale::ShortFormat)) +
                   note;
        }
        case Qt::ForegroundRole:
            return run.plan == PastRun::Plan::other ? other_foreground_ : QVariant();
        case DirRole:
            return run.dir;
        default:
            return {};
    }
}

}  // namespace pipewright::gui
