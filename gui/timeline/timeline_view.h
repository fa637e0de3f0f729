#pragma once

#include <QWidget>

class QLabel;
class QLineEdit;
class QScrollBar;
class QToolButton;

namespace pipewright::gui {

class TimelineOverview;
class TimelinePlot;

// The Timeline tab's body: a lane filter with the count of lanes it shows,
// the overview strip, and the timeline with a scroll bar for its lanes.
class TimelineView : public QWidget {
    Q_OBJECT

  public:
    explicit TimelineView(QWidget* parent = nullptr);

    [[nodiscard]] TimelinePlot* plot() const { return plot_; }
    [[nodiscard]] TimelineOverview* overview() const { return overview_; }
    [[nodiscard]] QLineEdit* filterEdit() const { return filter_; }
    [[nodiscard]] QScrollBar* laneScrollBar() const { return scroll_; }
    // "13 lanes · all 104 devices", or the filter's problem.
    [[nodiscard]] QString countText() const;

  private:
    void updateCount();
    void updateScrollBar();

    TimelinePlot* plot_;
    TimelineOverview* overview_;
    QLineEdit* filter_;
    QLabel* count_;
    QScrollBar* scroll_;
};

}  // namespace pipewright::gui
