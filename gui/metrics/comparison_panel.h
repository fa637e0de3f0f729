#pragma once

#include <QFutureWatcher>
#include <QWidget>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pipewright/core/profile.h"
#include "pipewright/core/project.h"
#include "pipewright/sim/schedule_comparison.h"
#include "studio_core/simulation/studio_costs.h"

class QComboBox;
class QLabel;
class QPushButton;

namespace pipewright::gui {

class BarChart;

// Two comparisons of the current project, side by side as bar charts:
// every schedule of the catalog on the current layout plus the whole model on
// one device (what `pipewright simulate --compare-schedules` prints), or every
// data × pipeline layout of the cluster, each replica count planned as
// `pipewright plan --data-parallel auto` plans it, against the layout as set;
// a layout can then be applied. A configuration that does not fit in memory
// is drawn hatched in the warning colour on every chart, and says what it
// needs of which device.
class ComparisonPanel : public QWidget {
    Q_OBJECT

  public:
    enum class Kind { schedules, layouts };

    explicit ComparisonPanel(QWidget* parent = nullptr);

    // Starts the comparison of `project` on the thread pool, priced with
    // `costs` (the profile chosen on the Run tab, the device calibrations).
    void compare(const Project& project, const QString& baseDir, StudioCosts costs = {});
    void compareLayouts(const Project& project, const QString& baseDir, StudioCosts costs = {});
    // The layout changed: the charts no longer describe it.
    void markStale();
    [[nodiscard]] Kind kind() const { return shown_.kind; }
    [[nodiscard]] const std::vector<ComparisonRow>& rows() const { return shown_.rows; }
    // The layouts a layout comparison offers to apply (row label, project).
    [[nodiscard]] QStringList applicableLayouts() const;
    // Applies the layout of the row labelled `label` (applyLayoutRequested).
    void applyLayout(const QString& label);
    // The charts and their notes, without the buttons: what File ▸ Export writes.
    [[nodiscard]] QWidget* chartArea() const { return area_; }
    [[nodiscard]] BarChart* timeChart() const { return time_; }
    [[nodiscard]] BarChart* gainChart() const { return gain_; }
    [[nodiscard]] BarChart* bubbleChart() const { return bubble_; }
    [[nodiscard]] BarChart* memoryChart() const { return memory_; }
    [[nodiscard]] QString notesText() const;
    [[nodiscard]] QString statusText() const;

  signals:
    void compareRequested();
    void compareLayoutsRequested();
    void compared();
    // `layout` is `comparedFrom` laid out as a row of the layout comparison.
    void applyLayoutRequested(const Project& layout, const Project& comparedFrom);

  protected:
    void changeEvent(QEvent* event) override;

  private:
    struct Outcome {
        Kind kind = Kind::schedules;
        std::vector<ComparisonRow> rows;
        std::vector<std::optional<Project>> layouts;  // per row, for Kind::layouts
        std::string choice;
        std::string baseline;  // what the gains are over (Kind::layouts)
        Project input;
    };

    void start(Kind kind, const Project& project, const QString& baseDir, StudioCosts costs);
    void showRows();
    void showApplyChoices();

    QPushButton* button_ = nullptr;
    QPushButton* layoutsButton_ = nullptr;
    QLabel* status_ = nullptr;
    QLabel* notes_ = nullptr;
    QWidget* applyRow_ = nullptr;
    QComboBox* layoutChoice_ = nullptr;
    QPushButton* applyButton_ = nullptr;
    QWidget* area_ = nullptr;
    // The charts' scroll area: hidden until the first comparison, so that no
    // empty 0–5 axes stand where there is nothing to compare yet.
    QWidget* charts_ = nullptr;
    BarChart* time_ = nullptr;
    BarChart* gain_ = nullptr;
    BarChart* bubble_ = nullptr;
    BarChart* memory_ = nullptr;
    QFutureWatcher<Outcome> watcher_;
    Outcome shown_;
};

}  // namespace pipewright::gui
