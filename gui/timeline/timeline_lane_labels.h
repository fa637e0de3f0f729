#pragma once

#include <QString>
#include <vector>

#include "qcustomplot.h"
#include "studio_core/timeline/timeline_lanes.h"

namespace pipewright::gui {

// The column left of the timeline: a name per row, drawn only where the row
// is tall enough for a line of text, so names never overprint. Groups show
// ▾ (expanded) or ▸ (collapsed) and how many of their devices are shown;
// clicking them is handled by the plot (TimelinePlot::rowAtPixel).
class TimelineLaneLabels : public QCPLayerable {
  public:
    TimelineLaneLabels(QCustomPlot* plot, const TimelineLanes* lanes);

    // Width of the column in pixels, from the longest name (capped).
    [[nodiscard]] int preferredWidth(const QFont& font) const;
    // The text of a row, whether or not it is on screen.
    [[nodiscard]] QString textOf(const LaneRow& row) const;
    // What the last paint drew, in widget pixels.
    [[nodiscard]] const std::vector<QRectF>& drawnLabels() const { return drawn_; }
    [[nodiscard]] const QStringList& drawnTexts() const { return drawn_texts_; }

  protected:
    void applyDefaultAntialiasingHint(QCPPainter* painter) const override;
    void draw(QCPPainter* painter) override;

  private:
    const TimelineLanes* lanes_;
    std::vector<QRectF> drawn_;
    QStringList drawn_texts_;
};

}  // namespace pipewright::gui
