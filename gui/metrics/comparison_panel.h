#pragma once

#include <QFutureWatcher>
#include <QWidget>
#include <vector>

#include "pipewright/core/project.h"
#include "pipewright/sim/schedule_comparison.h"

class QCustomPlot;
class QLabel;
class QPushButton;

namespace pipewright::gui {

// Every schedule of the catalog simulated on the current layout, plus the
// whole model on one device, side by side as bar charts.
class ComparisonPanel : public QWidget {
    Q_OBJECT

  public:
    explicit ComparisonPanel(QWidget* parent = nullptr);

    // Starts the comparison of `project` on the thread pool.
    void compare(const Project& project, const QString& baseDir);
    // The layout changed: the charts no longer describe it.
    void markStale();
    [[nodiscard]] const std::vector<ComparisonRow>& rows() const { return rows_; }

  signals:
    void compareRequested();
    void compared();

  protected:
    void changeEvent(QEvent* event) override;

  private:
    void showRows();

    QPushButton* button_ = nullptr;
    QLabel* status_ = nullptr;
    QLabel* notes_ = nullptr;
    QCustomPlot* time_ = nullptr;
    QCustomPlot* gain_ = nullptr;
    QCustomPlot* bubble_ = nullptr;
    QCustomPlot* memory_ = nullptr;
    QFutureWatcher<std::vector<ComparisonRow>> watcher_;
    std::vector<ComparisonRow> rows_;
};

}  // namespace pipewright::gui
