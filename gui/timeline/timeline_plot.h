#pragma once

#include <memory>

#include "qcustomplot.h"
#include "studio_core/timeline_layout.h"

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

    // The simulated timeline; measured lanes, when shown, stay under it.
    void setTimeline(const Timeline& timeline);
    void clearTimeline(const QString& message);
    // A real run's timeline, drawn under the simulated one on the same time
    // axis in tinted lanes labelled "measured" (`name`: the run's folder).
    void setMeasuredTimeline(const Timeline& timeline, const QString& name);
    void clearMeasuredTimeline();
    [[nodiscard]] bool hasMeasured() const { return measured_layout_ != nullptr; }
    [[nodiscard]] const Timeline& measuredTimeline() const { return measured_; }
    // Blocks held for the measured lanes: one per measured action.
    [[nodiscard]] std::size_t measuredBlockCount() const;
    // Value-axis position of the first measured lane (rank r at offset + r).
    [[nodiscard]] double measuredOffset() const { return measured_offset_; }
    [[nodiscard]] QString measuredLabel() const;
    // The labels on the lane axis, top to bottom.
    [[nodiscard]] QStringList laneLabels() const { return lane_labels_; }
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
    // Lays out the simulated and measured lanes and the shared time axis.
    void updateLanes();
    [[nodiscard]] QString tooltipFor(const Timeline& timeline, int index) const;

    Timeline timeline_;
    std::shared_ptr<TimelineLayout> layout_;
    TimelineBlocks* blocks_ = nullptr;  // owned by the plot
    Timeline measured_;
    std::shared_ptr<TimelineLayout> measured_layout_;
    TimelineBlocks* measured_blocks_ = nullptr;  // owned by the plot
    QCPItemText* measured_caption_ = nullptr;
    QCPItemLine* measured_rule_ = nullptr;
    QString measured_name_;
    QStringList lane_labels_;
    double measured_offset_ = 0;
    QCPItemText* message_ = nullptr;
    double unit_ = 1e-3;
    double span_s_ = 0;  // the longer of the two timelines
};

}  // namespace pipewright::gui
