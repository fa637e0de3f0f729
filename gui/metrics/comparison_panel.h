#pragma once

#include <QFutureWatcher>
#include <QWidget>
#include <memory>
#include <vector>

#include "pipewright/core/profile.h"
#include "pipewright/core/project.h"
#include "pipewright/sim/schedule_comparison.h"

class QLabel;
class QPushButton;

namespace pipewright::gui {

class BarChart;

// Every schedule of the catalog simulated on the current layout, plus the
// whole model on one device, side by side as bar charts: what
// `pipewright simulate --compare-schedules` prints, with the same figures.
// A configuration that does not fit in memory is drawn hatched in the
// warning colour on every chart, and says what it needs of which device.
class ComparisonPanel : public QWidget {
    Q_OBJECT

  public:
    explicit ComparisonPanel(QWidget* parent = nullptr);

    // Starts the comparison of `project` on the thread pool, priced with
    // `profile` when given (the costs chosen on the Run tab).
    void compare(const Project& project, const QString& baseDir,
                 std::shared_ptr<const Profile> profile = nullptr);
    // The layout changed: the charts no longer describe it.
    void markStale();
    [[nodiscard]] const std::vector<ComparisonRow>& rows() const { return rows_; }
    // The charts and their notes, without the button: what File ▸ Export writes.
    [[nodiscard]] QWidget* chartArea() const { return area_; }
    [[nodiscard]] BarChart* timeChart() const { return time_; }
    [[nodiscard]] BarChart* gainChart() const { return gain_; }
    [[nodiscard]] BarChart* bubbleChart() const { return bubble_; }
    [[nodiscard]] BarChart* memoryChart() const { return memory_; }
    [[nodiscard]] QString notesText() const;

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
    QWidget* area_ = nullptr;
    BarChart* time_ = nullptr;
    BarChart* gain_ = nullptr;
    BarChart* bubble_ = nullptr;
    BarChart* memory_ = nullptr;
    QFutureWatcher<std::vector<ComparisonRow>> watcher_;
    std::vector<ComparisonRow> rows_;
};

}  // namespace pipewright::gui
