#pragma once

#include <array>
#include <memory>
#include <vector>

#include "qcustomplot.h"
#include "studio_core/timeline/timeline_lanes.h"
#include "studio_core/timeline/timeline_layout.h"
#include "timeline/sub_blocks.h"

namespace pipewright::gui {

class TimelineBlocks;
class TimelineLaneLabels;

// The Gantt chart of one iteration: a lane per device (a compute row over a
// communication row), grouped by node and container; a collapsed group is one
// lane shaded by how busy its devices are. Bubbles are hatched.
//
// The value axis counts pixels from the top of the first row, so a lane is as
// tall as TimelineLanes says and the view scrolls over the rows.
// Mouse: wheel zooms time around the cursor; Shift+wheel scrolls the lanes;
// Ctrl+wheel makes the lanes taller or lower around the cursor; dragging pans
// both ways; a click on a group's name collapses or expands it;
// double-click fits everything.
class TimelinePlot : public QCustomPlot {
    Q_OBJECT

  public:
    explicit TimelinePlot(QWidget* parent = nullptr);
    ~TimelinePlot() override;

    // The simulated timeline; measured lanes, when shown, stay under it.
    // Collapsed groups, lane height and filter survive a new timeline with
    // the same devices (an edit re-simulates); other devices start afresh.
    // `lane_devices` (per lane, optional): every device a lane stands for,
    // which the filter matches and the count counts.
    void setTimeline(const Timeline& timeline,
                     std::vector<std::vector<std::string>> lane_devices = {});
    // The same, sharing a timeline held elsewhere (a simulation's result)
    // and, when given, its layout already built: a 4 M-action timeline is
    // hundreds of MB that a copy would fill page by page.
    void setTimeline(std::shared_ptr<const Timeline> timeline,
                     std::vector<std::vector<std::string>> lane_devices,
                     std::shared_ptr<const TimelineLayout> layout);
    // What each simulated forward and backward spends waiting on its groups
    // (sub_blocks.h), drawn inside their blocks and named in the tooltips.
    void setSubBlocks(SubBlockSeconds seconds);
    [[nodiscard]] int drawnSubBlocks(SubBlock kind) const;
    // Per rank of the simulated lanes, its tensor-parallel group (the lane's
    // device first): what a lane's name says it stands for.
    // Per stage, where one micro-batch's forward, input gradient and weight
    // gradient spend their time ("qkv 31 % · …"), for the block tooltips.
    void setStageKernels(std::vector<std::array<QString, 3>> per_stage) {
        stage_kernels_ = std::move(per_stage);
    }
    void setTensorGroups(std::vector<std::vector<std::string>> groups) {
        tensor_groups_ = std::move(groups);
    }
    void clearTimeline(const QString& message);
    // A real run's timeline, drawn under the simulated one on the same time
    // axis in tinted lanes labelled "measured" (`name`: the run's folder).
    void setMeasuredTimeline(const Timeline& timeline, const QString& name);
    void clearMeasuredTimeline();
    [[nodiscard]] bool hasMeasured() const { return measured_layout_ != nullptr; }
    [[nodiscard]] const Timeline& measuredTimeline() const { return measured_; }
    // Blocks held for the measured lanes: one per measured action.
    [[nodiscard]] std::size_t measuredBlockCount() const;
    [[nodiscard]] QString measuredLabel() const;
    // The names of every row, top to bottom (drawn or not).
    [[nodiscard]] QStringList laneLabels() const;
    [[nodiscard]] const Timeline& timeline() const { return *timeline_; }
    [[nodiscard]] const TimelineLayout* layout() const { return layout_.get(); }
    [[nodiscard]] const TimelineLanes& lanes() const { return lanes_; }
    // Blocks held for drawing: one per simulated action.
    [[nodiscard]] std::size_t blockCount() const;
    // Seconds per displayed unit of the time axis (1e-3 for ms).
    [[nodiscard]] double timeUnit() const { return unit_; }
    // The longer of the simulated and measured iterations, in seconds.
    [[nodiscard]] double span() const { return span_s_; }
    [[nodiscard]] QString tooltipAt(const QPoint& pos) const;

    // Rows and pixels: where a row is on the widget, which row is under a
    // pixel (-1: none), and the row that shows a rank.
    [[nodiscard]] QRectF rowRect(int row) const;
    [[nodiscard]] int rowAtPixel(const QPoint& pos) const;
    // Top of the view, in pixels from the top of the first row.
    [[nodiscard]] double laneScroll() const;
    [[nodiscard]] double viewportHeight() const;

    // What the last paint drew: rows, lane and group names, block labels.
    [[nodiscard]] int drawnRows() const;
    [[nodiscard]] std::vector<QRectF> drawnLabelRects() const;
    [[nodiscard]] QStringList drawnLaneNames() const;

    [[nodiscard]] bool showTransfers() const;
    [[nodiscard]] int drawnTransfers() const;
    // Frames around overlapped pairs (DualPipeV's OVERLAP_F_B).
    [[nodiscard]] int drawnPairs() const;

  public slots:
    void fitToWindow();
    // The time axis over one iteration only, the simulated (section 0) or
    // the measured one (1), when the other is much longer; lanes untouched.
    void fitSectionTime(int section);
    // Send→receive arrows on or off.
    void setShowTransfers(bool show);
    // What the filter box holds (LaneFilter); lanes are fitted to the view
    // again, collapsing groups if the lanes that pass would not fit.
    void setLaneFilter(const QString& text);
    void toggleGroupAt(int row);
    void collapseAllGroups();
    void expandAllGroups();
    void scrollLanesTo(double y);
    void scrollLanesBy(double pixels);
    // Lanes `factor` times taller, keeping the row under `anchor_y` (a
    // widget pixel) in place.
    void zoomLanes(double factor, double anchor_y);
    // Centres the view on a time (seconds) and on the row that shows a rank.
    void centreOn(double seconds, int section, int rank);

  signals:
    // The rows changed: filter, collapse, lane height, a new timeline.
    void lanesChanged();
    // The visible window moved (time or lanes).
    void viewChanged();

  protected:
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void changeEvent(QEvent* event) override;
    bool event(QEvent* event) override;

  private:
    void applyPalette();
    // Lays out the simulated and measured sections and the shared time axis.
    void updateLanes();
    // After a layout: the value axis spans exactly the plot's height, and
    // lanes in fit mode fill it.
    void syncLaneAxis();
    // Collapse (while the person has not chosen) and lane height (while
    // they have not zoomed) from the plot's height.
    void refitLanes();
    void setLaneRange(double top);
    [[nodiscard]] QString tooltipFor(const Timeline& timeline, int index) const;
    // "<br>kernels: qkv 31 % · …" for a simulated compute action.
    [[nodiscard]] QString kernelsLine(const Action& action) const;

    std::shared_ptr<const Timeline> timeline_ = std::make_shared<const Timeline>();
    std::shared_ptr<const TimelineLayout> layout_;
    Timeline measured_;
    std::shared_ptr<const TimelineLayout> measured_layout_;
    QString measured_name_;
    TimelineLanes lanes_;
    TimelineBlocks* blocks_ = nullptr;      // owned by the plot
    TimelineLaneLabels* labels_ = nullptr;  // owned by the plot
    QCPItemText* message_ = nullptr;
    double unit_ = 1e-3;
    double span_s_ = 0;  // the longer of the two timelines
    // Lanes follow the plot's height until the person zooms them.
    bool fit_lanes_ = true;
    // Groups collapse by what fits until the person opens or closes one.
    bool auto_collapse_ = true;
    double fitted_height_ = -1;
    bool syncing_ = false;
    std::vector<std::vector<std::string>> tensor_groups_;
    std::vector<std::vector<std::string>> lane_devices_;
    std::vector<std::array<QString, 3>> stage_kernels_;
};

}  // namespace pipewright::gui
