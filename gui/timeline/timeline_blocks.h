#pragma once

#include <QHash>
#include <QStaticText>
#include <array>
#include <vector>

#include "qcustomplot.h"
#include "studio_core/timeline/lane_density.h"
#include "studio_core/timeline/timeline_lanes.h"
#include "timeline/sub_blocks.h"

namespace pipewright::gui {

// Inside a lane row, as fractions of its height: the compute row above the
// communication row. Lanes too low for both show the compute row alone.
inline constexpr double kComputeTop = 0.06;
inline constexpr double kComputeBottom = 0.62;
inline constexpr double kCommTop = 0.67;
inline constexpr double kCommBottom = 0.92;
// Below this height (pixels) a lane has no communication row.
inline constexpr double kTwoRowLane = 12;

// Draws the rows of a TimelineLanes inside a QCustomPlot axis rect, whose
// value axis counts pixels from the top of the first row. Only the rows and
// the time window on screen are visited; blocks narrower than two pixels are
// summed into pixel columns (paint_row), a collapsed group is one image of
// its busy fraction per column; so a frame costs about the pixels on screen,
// whatever the number of devices and actions.
class TimelineBlocks : public QCPAbstractPlottable {
  public:
    TimelineBlocks(QCPAxis* keyAxis, QCPAxis* valueAxis, const TimelineLanes* lanes);

    // The timelines of the two sections (for block labels), and the time unit
    // of the key axis in seconds.
    void setTimelines(const Timeline* simulated, const Timeline* measured, double unit);
    void setMeasuredCaption(const QString& caption) { caption_ = caption; }
    // What each forward and backward of the simulated lanes spends waiting
    // on its groups (sub_blocks.h), drawn on the communication row at the
    // block's end, kind after kind backwards (the waits are interleaved with
    // the block's layers; the sub-blocks show how much of it they take).
    void setSubBlocks(SubBlockSeconds seconds) { sub_blocks_ = std::move(seconds); }
    [[nodiscard]] int drawnSubBlocks(SubBlock kind) const {
        return drawn_sub_blocks_[static_cast<std::size_t>(kind)];
    }
    // Seconds of a simulated action spent so (0 for anything but a forward
    // or a backward, and where the kind has no table).
    [[nodiscard]] double subBlockSeconds(SubBlock kind, const Action& action) const;
    // Draws an arrow from every visible send to its receive.
    void setShowTransfers(bool show) { show_transfers_ = show; }
    [[nodiscard]] bool showTransfers() const { return show_transfers_; }
    // What the last paint drew (for tests and the benchmark).
    [[nodiscard]] int drawnTransfers() const { return drawn_transfers_; }
    [[nodiscard]] int drawnRows() const { return drawn_rows_; }
    [[nodiscard]] int drawnBoxes() const { return drawn_boxes_; }
    [[nodiscard]] int drawnPairs() const { return drawn_pairs_; }
    [[nodiscard]] const std::vector<QRectF>& drawnLabels() const { return drawn_labels_; }

    double selectTest(const QPointF& pos, bool onlySelectable,
                      QVariant* details = nullptr) const override;
    QCPRange getKeyRange(bool& foundRange,
                         QCP::SignDomain inSignDomain = QCP::sdBoth) const override;
    QCPRange getValueRange(bool& foundRange, QCP::SignDomain inSignDomain = QCP::sdBoth,
                           const QCPRange& inKeyRange = QCPRange()) const override;

  protected:
    void draw(QCPPainter* painter) override;
    void drawLegendIcon(QCPPainter* painter, const QRectF& rect) const override;

  private:
    struct Window;  // the time window and its pixel mapping for one paint
    void drawLane(QCPPainter* painter, const Window& w, const LaneRow& row, double y0, double y1);
    void drawRow(QCPPainter* painter, const Window& w, const TimelineLayout& layout,
                 const Timeline* timeline, int row, double top, double bottom, bool labels);
    void drawSubBlocks(QCPPainter* painter, const Window& w, const Timeline& timeline, double top,
                       double bottom);
    void drawOverlappedPairs(QCPPainter* painter, const Window& w, const Timeline& timeline,
                             double top, double bottom);
    void drawSummary(QCPPainter* painter, const Window& w, const LaneRow& row, double y0,
                     double y1);
    void drawCaption(QCPPainter* painter, double y0, double y1);
    void drawTransfers(QCPPainter* painter, const Window& w, int first_row, int last_row);
    // "stage·micro-batch" and the micro-batch alone, measured once.
    const std::array<QStaticText, 2>& labelFor(const Action& action);

    const TimelineLanes* lanes_;
    std::array<const Timeline*, TimelineLanes::kSections> timelines_{};
    double unit_ = 1e-3;
    QString caption_;
    bool show_transfers_ = false;
    int drawn_transfers_ = 0;
    int drawn_rows_ = 0;
    int drawn_boxes_ = 0;
    int drawn_pairs_ = 0;
    SubBlockSeconds sub_blocks_;
    std::array<int, kSubBlockKinds.size()> drawn_sub_blocks_{};
    std::vector<QRectF> drawn_labels_;
    RowPaint paint_;  // reused between rows: no allocation per row
    QHash<quint64, std::array<QStaticText, 2>> label_cache_;
    QFont label_font_;
};

}  // namespace pipewright::gui
