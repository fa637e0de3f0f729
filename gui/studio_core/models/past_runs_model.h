#pragma once

#include <QAbstractListModel>
#include <vector>

#include "studio_core/processes/run_folder.h"

namespace pipewright::gui {

// The Run tab's past runs of the project on screen, newest first: each with
// its iteration time and steps, and marked where it ran another layout.
// With none, one row that says so and cannot be picked.
class PastRunsModel : public QAbstractListModel {
    Q_OBJECT

  public:
    static constexpr int DirRole = Qt::UserRole;  // the run's folder; empty for the "none" row

    explicit PastRunsModel(QObject* parent = nullptr);

    // `runs_dir`: where runs are kept, for the "none" row's tooltip.
    void setRuns(std::vector<PastRun> runs, const QString& runs_dir);
    [[nodiscard]] const std::vector<PastRun>& runs() const { return runs_; }
    // The row of the run in `dir`, or -1.
    [[nodiscard]] int rowOf(const QString& dir) const;
    // The text colour of a run of another layout (dimmed): the view's
    // palette, passed in so that the model needs no widgets.
    void setOtherLayoutForeground(const QVariant& brush);

    [[nodiscard]] int rowCount(const QModelIndex& parent = {}) const override;
    [[nodiscard]] QVariant data(const QModelIndex& index, int role) const override;
    [[nodiscard]] Qt::ItemFlags flags(const QModelIndex& index) const override;

  private:
    [[nodiscard]] QVariant runData(const PastRun& run, int role) const;

    std::vector<PastRun> runs_;
    QString runs_dir_;
    QVariant other_foreground_;
};

}  // namespace pipewright::gui
