#pragma once

#include <memory>

#include "qcustomplot.h"
#include "studio_core/timeline_layout.h"

namespace pipewright::gui {

// Lane geometry on the value axis: rank r spans [r, r + 1).
inline constexpr double kComputeTop = 0.06;
inline constexpr double kComputeBottom = 0.62;
inline constexpr double kCommTop = 0.67;
inline constexpr double kCommBottom = 0.92;

// Draws a TimelineLayout inside a QCustomPlot axis rect. Only the visible
// part is visited and sub-pixel blocks are folded, so drawing cost follows
// the pixels on screen, not the number of actions.
class TimelineBlocks : public QCPAbstractPlottable {
  public:
    TimelineBlocks(QCPAxis* keyAxis, QCPAxis* valueAxis);

    void setData(std::shared_ptr<const TimelineLayout> layout, const Timeline* timeline,
                 double unit);
    // Lanes start at `offset` on the value axis: the measured lanes sit under
    // the simulated ones. Measured lanes get their own background tint.
    void setLanes(double offset, bool measured) {
        offset_ = offset;
        measured_ = measured;
    }
    // Draws an arrow from every visible send to its receive.
    void setShowTransfers(bool show) { show_transfers_ = show; }
    [[nodiscard]] bool showTransfers() const { return show_transfers_; }
    // Arrows drawn by the last paint (for tests and the status bar).
    [[nodiscard]] int drawnTransfers() const { return drawn_transfers_; }

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
    void drawTransfers(QCPPainter* painter, double t0, double t1, bool dark);

    std::shared_ptr<const TimelineLayout> layout_;
    const Timeline* timeline_ = nullptr;
    double unit_ = 1e-3;
    double offset_ = 0;
    bool measured_ = false;
    bool show_transfers_ = false;
    int drawn_transfers_ = 0;
};

}  // namespace pipewright::gui
