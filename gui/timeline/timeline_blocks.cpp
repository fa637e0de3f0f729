#include "timeline/timeline_blocks.h"

#include <cmath>

#include "style/colors.h"

namespace pipewright::gui {

TimelineBlocks::TimelineBlocks(QCPAxis* keyAxis, QCPAxis* valueAxis)
    : QCPAbstractPlottable(keyAxis, valueAxis) {
    setAntialiased(false);
}

void TimelineBlocks::setData(std::shared_ptr<const TimelineLayout> layout, const Timeline* timeline,
                             double unit) {
    layout_ = std::move(layout);
    timeline_ = timeline;
    unit_ = unit;
}

double TimelineBlocks::selectTest(const QPointF&, bool, QVariant*) const {
    return -1;  // hovering is handled by the plot's tooltip
}

QCPRange TimelineBlocks::getKeyRange(bool& foundRange, QCP::SignDomain) const {
    foundRange = layout_ && layout_->makespan() > 0;
    return {0, foundRange ? layout_->makespan() / unit_ : 1};
}

QCPRange TimelineBlocks::getValueRange(bool& foundRange, QCP::SignDomain, const QCPRange&) const {
    foundRange = layout_ && layout_->ranks() > 0;
    return {offset_, offset_ + (foundRange ? static_cast<double>(layout_->ranks()) : 1)};
}

void TimelineBlocks::draw(QCPPainter* painter) {
    if (!layout_ || timeline_ == nullptr) {
        return;
    }
    QCPAxis* key = keyAxis();
    QCPAxis* value = valueAxis();
    const QCPRange range = key->range();
    const double t0 = range.lower * unit_;
    const double t1 = range.upper * unit_;
    const double pixels = std::max(1.0, static_cast<double>(key->axisRect()->width()));
    const double seconds_per_pixel = (t1 - t0) / pixels;
    const double min_width = 3 * seconds_per_pixel;
    const QFontMetrics metrics(painter->font());
    const bool dark = mParentPlot->palette().color(QPalette::Base).lightness() < 128;

    auto rect = [&](double s0, double s1, double top, double bottom) {
        const double x0 = key->coordToPixel(std::max(s0, t0 - seconds_per_pixel) / unit_);
        const double x1 = key->coordToPixel(std::min(s1, t1 + seconds_per_pixel) / unit_);
        const double y0 = value->coordToPixel(top);
        const double y1 = value->coordToPixel(bottom);
        return QRectF(QPointF(x0, std::min(y0, y1)),
                      QPointF(std::max(x1, x0 + 1), std::max(y0, y1)));
    };

    QBrush hatch(dark ? QColor(255, 255, 255, 60) : QColor(0, 0, 0, 45), Qt::BDiagPattern);
    // Measured lanes are tinted warm so they never pass for simulated ones.
    const QColor lane = measured_ ? (dark ? QColor(255, 190, 90, 34) : QColor(230, 150, 30, 30))
                                  : (dark ? QColor(255, 255, 255, 12) : QColor(0, 0, 0, 10));
    for (int rank = 0; rank < layout_->ranks(); ++rank) {
        const double r = offset_ + rank;
        painter->setPen(Qt::NoPen);
        painter->setBrush(lane);
        painter->drawRect(rect(t0, t1, r + kComputeTop - 0.03, r + kCommBottom + 0.03));
        painter->setBrush(hatch);
        for (const auto& [b0, b1] : layout_->bubbles(rank)) {
            if (b1 >= t0 && b0 <= t1) {
                painter->drawRect(rect(b0, b1, r + kComputeTop, r + kComputeBottom));
            }
        }
        for (int part = 0; part < 2; ++part) {
            const int row = 2 * rank + part;
            const double top = r + (part == 0 ? kComputeTop : kCommTop);
            const double bottom = r + (part == 0 ? kComputeBottom : kCommBottom);
            for (const Span& span : layout_->visible(row, t0, t1, min_width)) {
                if (span.end <= span.start && span.folded == 1) {
                    continue;  // a receive that did not wait
                }
                const QRectF box = rect(span.start, span.end, top, bottom);
                QColor fill = block_color(span.kind);
                if (span.folded > 1) {
                    fill = fill.darker(120);
                }
                painter->setBrush(fill);
                painter->setPen(box.width() > 4 ? QPen(fill.darker(150), 0) : Qt::NoPen);
                painter->drawRect(box);
                // Communication rows are lower: their labels only fit when
                // the row is at least as tall as the text.
                const bool room = part == 0 || box.height() >= metrics.height() - 2;
                if (room && span.folded == 1 && box.width() > 18) {
                    const auto& action =
                        timeline_->events[static_cast<std::size_t>(span.event)].action;
                    const QString label =
                        QStringLiteral("%1·%2").arg(action.stage).arg(action.microbatch);
                    if (metrics.horizontalAdvance(label) + 4 < box.width()) {
                        // Perceived brightness picks the readable text colour.
                        const double luma =
                            0.299 * fill.red() + 0.587 * fill.green() + 0.114 * fill.blue();
                        painter->setPen(luma > 140 ? Qt::black : Qt::white);
                        painter->drawText(box, Qt::AlignCenter, label);
                    }
                }
            }
        }
    }
    drawn_transfers_ = 0;
    if (show_transfers_) {
        drawTransfers(painter, t0, t1, dark);
    }
}

void TimelineBlocks::drawTransfers(QCPPainter* painter, double t0, double t1, bool dark) {
    // Past a few thousand arrows the chart is a solid smear that also costs
    // real time to paint: zoom in to see them.
    constexpr int kMaxArrows = 4000;
    QCPAxis* key = keyAxis();
    QCPAxis* value = valueAxis();
    const QColor colour = dark ? QColor(240, 240, 240, 200) : QColor(30, 30, 30, 180);
    painter->setRenderHint(QPainter::Antialiasing, true);
    painter->setPen(QPen(colour, 1.2));
    painter->setBrush(colour);
    const double mid = (kCommTop + kCommBottom) / 2;
    for (const Transfer& t : layout_->transfers()) {
        if (t.start > t1) {
            break;  // sorted by start
        }
        if (t.end < t0) {
            continue;
        }
        if (++drawn_transfers_ > kMaxArrows) {
            break;
        }
        const QPointF from(key->coordToPixel(t.start / unit_),
                           value->coordToPixel(offset_ + t.from_rank + mid));
        const QPointF to(key->coordToPixel(t.end / unit_),
                         value->coordToPixel(offset_ + t.to_rank + mid));
        painter->drawLine(from, to);
        // A small head at the receiving end, pointing along the line.
        const QPointF d = to - from;
        const double length = std::hypot(d.x(), d.y());
        if (length < 1) {
            continue;
        }
        const QPointF u = d / length;
        const QPointF n(-u.y(), u.x());
        const double size = 6;
        const QPointF head[3] = {to, to - u * size + n * size * 0.45,
                                 to - u * size - n * size * 0.45};
        painter->drawPolygon(head, 3);
    }
    painter->setRenderHint(QPainter::Antialiasing, false);
}

void TimelineBlocks::drawLegendIcon(QCPPainter* painter, const QRectF& rect) const {
    painter->setBrush(block_color(BlockKind::forward));
    painter->drawRect(rect);
}

}  // namespace pipewright::gui
