#pragma once

#include <QAbstractTableModel>
#include <vector>

#include "studio_core/simulation/run_comparison.h"

namespace pipewright::gui {

// The Run tab's "Simulated vs measured" table: what was compared, the
// simulated and measured times, and the simulator's error, which stands out
// where it is off by more than half.
class RunComparisonModel : public QAbstractTableModel {
    Q_OBJECT

  public:
    enum Column { what, simulated, measured, error, columns };
    // True on an error cell off by more than half (|error| > 0.5).
    static constexpr int FarOffRole = Qt::UserRole;

    explicit RunComparisonModel(QObject* parent = nullptr);

    void setRows(std::vector<RunComparisonRow> rows);
    [[nodiscard]] const std::vector<RunComparisonRow>& rows() const { return rows_; }
    // The text colour of an error far off (a warning colour): the view's
    // palette, passed in so that the model needs no widgets.
    void setFarOffForeground(const QVariant& brush);

    [[nodiscard]] int rowCount(const QModelIndex& parent = {}) const override;
    [[nodiscard]] int columnCount(const QModelIndex& parent = {}) const override;
    [[nodiscard]] QVariant data(const QModelIndex& index, int role) const override;
    [[nodiscard]] QVariant headerData(int section, Qt::Orientation orientation,
                                      int role) const override;
    [[nodiscard]] Qt::ItemFlags flags(const QModelIndex& index) const override;

  private:
    [[nodiscard]] static QString text(const RunComparisonRow& row, int column);
    [[nodiscard]] static bool farOff(const RunComparisonRow& row);

    std::vector<RunComparisonRow> rows_;
    QVariant far_off_foreground_;
};

}  // namespace pipewright::gui
