#pragma once

#include <memory>

#include "qcustomplot.h"
#include "timeline_layout.h"

namespace pipewright::gui {

class TimelineBlocks;

// The Gantt chart of one iteration: a lane per device with a compute row and
// a communication row, bubbles hatched, wheel zoom around the cursor, drag to
// pan, and a tooltip for the block under the mouse.
class TimelinePlot : public QCustomPlot {
    Q_OBJECT

  public:
    explicit TimelinePlot(QWidget* parent = nullptr);
    ~TimelinePlot() override;

    void setTimeline(const Timeline& timeline);
    void clearTimeline(const QString& message);
    [[nodiscard]] const Timeline& timeline() const { return timeline_; }
    [[nodiscard]] const TimelineLayout* layout() const { return layout_.get(); }
    // Blocks held for drawing: one per simulated action.
    [[nodiscard]] std::size_t blockCount() const;
    // Seconds per displayed unit of the time axis (1e-3 for ms).
    [[nodiscard]] double timeUnit() const { return unit_; }
    [[nodiscard]] QString tooltipAt(const QPoint& pos) const;

    [[nodiscard]] bool showTransfers() const;
    [[nodiscard]] int drawnTransfers() const;

  public slots:
    void fitToWindow();
    // Send→receive arrows on or off.
    void setShowTransfers(bool show);

  protected:
    void mouseMoveEvent(QMouseEvent* event) override;
    void changeEvent(QEvent* event) override;

  private:
    void applyPalette();

    Timeline timeline_;
    std::shared_ptr<TimelineLayout> layout_;
    TimelineBlocks* blocks_ = nullptr;  // owned by the plot
    QCPItemText* message_ = nullptr;
    double unit_ = 1e-3;
};

}  // namespace pipewright::gui
