#include "timeline/timeline_blocks.h"

#include <QImage>
#include <cmath>

#include "studio_core/timeline/label_fit.h"
#include "style/colors.h"

namespace pipewright::gui {

struct TimelineBlocks::Window {
    double t0 = 0;  // seconds
    double t1 = 0;
    double left = 0;  // pixels of t0 and t1
    double right = 0;
    int columns = 1;
    double seconds_per_pixel = 1;
    bool dark = false;
    [[nodiscard]] double x(double t) const { return left + (t - t0) / seconds_per_pixel; }
};

namespace {

// Perceived brightness picks the readable text colour on a block.
QColor text_on(const QColor& fill) {
    const double luma = 0.299 * fill.red() + 0.587 * fill.green() + 0.114 * fill.blue();
    return luma > 140 ? Qt::black : Qt::white;
}

}  // namespace

TimelineBlocks::TimelineBlocks(QCPAxis* keyAxis, QCPAxis* valueAxis, const TimelineLanes* lanes)
    : QCPAbstractPlottable(keyAxis, valueAxis), lanes_(lanes) {
    setAntialiased(false);
}

void TimelineBlocks::setTimelines(const Timeline* simulated, const Timeline* measured,
                                  double unit) {
    timelines_ = {simulated, measured};
    unit_ = unit;
}

double TimelineBlocks::selectTest(const QPointF&, bool, QVariant*) const {
    return -1;  // hovering is handled by the plot's tooltip
}

QCPRange TimelineBlocks::getKeyRange(bool& foundRange, QCP::SignDomain) const {
    const TimelineLayout* layout = lanes_->layout(0);
    foundRange = layout != nullptr && layout->makespan() > 0;
    return {0, foundRange ? layout->makespan() / unit_ : 1};
}

QCPRange TimelineBlocks::getValueRange(bool& foundRange, QCP::SignDomain, const QCPRange&) const {
    foundRange = !lanes_->rows().empty();
    return {0, foundRange ? lanes_->contentHeight() : 1};
}

const std::array<QStaticText, 2>& TimelineBlocks::labelFor(const Action& action) {
    // A collective belongs to the whole stage: its key has the top bit set
    // and its type where a micro-batch would be.
    const bool collective = is_collective(action.type);
    const quint32 low = collective ? 0x80000000u | static_cast<quint32>(action.type)
                                   : static_cast<quint32>(action.microbatch);
    const quint64 key = (static_cast<quint64>(static_cast<quint32>(action.stage)) << 32) | low;
    auto it = label_cache_.find(key);
    if (it == label_cache_.end()) {
        const QString what = action.type == ActionType::reduce_grad ? tr("sync")
                             : action.type == ActionType::unshard   ? tr("gather")
                                                                    : tr("free");
        std::array<QStaticText, 2> texts =
            collective
                ? std::array<QStaticText,
                             2>{QStaticText(QStringLiteral("%1·%2").arg(action.stage).arg(what)),
                                QStaticText(what)}
                : std::array<QStaticText, 2>{
                      QStaticText(QStringLiteral("%1·%2").arg(action.stage).arg(action.microbatch)),
                      QStaticText(QString::number(action.microbatch))};
        for (auto& t : texts) {
            t.setPerformanceHint(QStaticText::AggressiveCaching);
            t.prepare(QTransform(), label_font_);
        }
        it = label_cache_.insert(key, texts);
    }
    return *it;
}

void TimelineBlocks::draw(QCPPainter* painter) {
    drawn_rows_ = 0;
    drawn_boxes_ = 0;
    drawn_transfers_ = 0;
    drawn_pairs_ = 0;
    drawn_sub_blocks_.fill(0);
    drawn_labels_.clear();
    if (lanes_->rows().empty()) {
        return;
    }
    if (painter->font() != label_font_) {
        label_font_ = painter->font();
        label_cache_.clear();
    }
    QCPAxis* key = keyAxis();
    QCPAxis* value = valueAxis();
    Window w;
    w.t0 = key->range().lower * unit_;
    w.t1 = key->range().upper * unit_;
    w.left = key->coordToPixel(key->range().lower);
    w.right = key->coordToPixel(key->range().upper);
    w.columns = std::max(1, static_cast<int>(std::lround(w.right - w.left)));
    w.seconds_per_pixel = (w.t1 - w.t0) / w.columns;
    w.dark = mParentPlot->palette().color(QPalette::Base).lightness() < 128;
    if (w.seconds_per_pixel <= 0) {
        return;
    }

    const auto [first, last] = lanes_->rowsBetween(value->range().lower, value->range().upper);
    for (int i = first; i < last; ++i) {
        const LaneRow& row = lanes_->rows()[static_cast<std::size_t>(i)];
        const double y0 = value->coordToPixel(row.top);
        const double y1 = value->coordToPixel(row.bottom());
        ++drawn_rows_;
        switch (row.kind) {
            case LaneRowKind::caption:
                drawCaption(painter, y0, y1);
                break;
            case LaneRowKind::header: {
                // A faint band ties the group's title in the label column to
                // its lanes.
                painter->setPen(Qt::NoPen);
                painter->setBrush(w.dark ? QColor(255, 255, 255, 22) : QColor(0, 0, 0, 16));
                painter->drawRect(QRectF(QPointF(w.left, y0 + 1), QPointF(w.right, y1 - 1)));
                break;
            }
            case LaneRowKind::summary:
                drawSummary(painter, w, row, y0, y1);
                break;
            case LaneRowKind::lane:
                drawLane(painter, w, row, y0, y1);
                break;
        }
    }
    if (show_transfers_) {
        drawTransfers(painter, w, first, last);
    }
}

void TimelineBlocks::drawCaption(QCPPainter* painter, double y0, double y1) {
    const bool dark = mParentPlot->palette().color(QPalette::Base).lightness() < 128;
    const QColor measured = dark ? QColor(255, 190, 90) : QColor(160, 90, 0);
    const QRect area = keyAxis()->axisRect()->rect();
    painter->setPen(QPen(measured, 1, Qt::DashLine));
    painter->drawLine(QPointF(area.left(), y1 - 1), QPointF(area.right(), y1 - 1));
    QFont bold = painter->font();
    bold.setBold(true);
    painter->setFont(bold);
    painter->setPen(measured);
    const QRectF text(area.left() + 6, y0, area.width() - 12, y1 - y0 - 2);
    painter->drawText(text, Qt::AlignLeft | Qt::AlignVCenter, caption_);
    drawn_labels_.push_back(QRectF(
        text.topLeft(), QSizeF(QFontMetricsF(bold).horizontalAdvance(caption_), text.height())));
    bold.setBold(false);
    painter->setFont(bold);
}

void TimelineBlocks::drawLane(QCPPainter* painter, const Window& w, const LaneRow& row, double y0,
                              double y1) {
    const TimelineLayout* layout = lanes_->layout(row.section);
    if (layout == nullptr) {
        return;
    }
    const double h = y1 - y0;
    const bool measured = row.section == 1;
    // Measured lanes are tinted warm so they never pass for simulated ones.
    const QColor tint = measured ? (w.dark ? QColor(255, 190, 90, 34) : QColor(230, 150, 30, 30))
                                 : (w.dark ? QColor(255, 255, 255, 12) : QColor(0, 0, 0, 10));
    const bool two_rows = h >= kTwoRowLane;
    const double compute_top = y0 + (two_rows ? kComputeTop * h : 0);
    const double compute_bottom = two_rows ? y0 + kComputeBottom * h : y1 - (h >= 4 ? 1 : 0);
    painter->setPen(Qt::NoPen);
    if (two_rows) {
        painter->setBrush(tint);
        painter->drawRect(QRectF(QPointF(w.left, y0 + (kComputeTop - 0.03) * h),
                                 QPointF(w.right, y0 + (kCommBottom + 0.03) * h)));
    }
    // Idle time inside the iteration (the bubble) is hatched: the whole
    // iteration is, and the blocks cover what is busy.
    const double end = std::min(w.t1, layout->makespan());
    if (end > std::max(w.t0, 0.0)) {
        painter->setBrush(
            QBrush(w.dark ? QColor(255, 255, 255, 60) : QColor(0, 0, 0, 45), Qt::BDiagPattern));
        painter->drawRect(QRectF(QPointF(w.x(std::max(w.t0, 0.0)), compute_top),
                                 QPointF(w.x(end), compute_bottom)));
    }
    const Timeline* timeline = timelines_[static_cast<std::size_t>(row.section)];
    drawRow(painter, w, *layout, timeline, 2 * row.rank, compute_top, compute_bottom, true);
    if (two_rows && !measured && timeline != nullptr && sub_blocks_.any()) {
        // From the compute row's blocks, which paint_ still holds.
        drawSubBlocks(painter, w, *timeline, y0 + kCommTop * h, y0 + kCommBottom * h);
    }
    if (two_rows) {
        drawRow(painter, w, *layout, timeline, 2 * row.rank + 1, y0 + kCommTop * h,
                y0 + kCommBottom * h, true);
    }
}

void TimelineBlocks::drawRow(QCPPainter* painter, const Window& w, const TimelineLayout& layout,
                             const Timeline* timeline, int row, double top, double bottom,
                             bool labels) {
    paint_row(layout, row, w.t0, w.t1, w.columns, 2, &paint_);
    const double height = bottom - top;
    // Overlapping transfers (a send under a receive's wait) each get a
    // sub-row, so that every one is seen where its tooltip says it is.
    const int tracks = layout.tracks(row);
    const double track_height = height / tracks;
    const QFontMetricsF metrics(label_font_);
    const bool label_room = labels && timeline != nullptr && track_height >= metrics.height() - 2;
    // Labels of overlapping transfers must not overprint, sub-row by sub-row.
    std::array<double, kMaxCommTracks> last_label_right;
    last_label_right.fill(-1e9);
    for (const Block* b : paint_.boxes) {
        const double x0 = std::max(w.x(b->start), w.left - 1);
        const double x1 = std::min(w.x(b->end), w.right + 1);
        const double box_top = top + track_height * b->track;
        const QRectF box(QPointF(x0, box_top),
                         QPointF(std::max(x1, x0 + 1), box_top + track_height));
        const QColor fill = block_color(b->kind);
        painter->setBrush(fill);
        painter->setPen(box.width() > 4 && track_height > 4 ? QPen(fill.darker(150), 0)
                                                            : Qt::NoPen);
        painter->drawRect(box);
        ++drawn_boxes_;
        if (!label_room || box.width() < 12) {
            continue;
        }
        const auto& texts = labelFor(timeline->events[static_cast<std::size_t>(b->event)].action);
        const int pick =
            fit_label(box.width(), {texts[0].size().width(), texts[1].size().width()}, 2);
        if (pick < 0) {
            continue;
        }
        const QStaticText& text = texts[static_cast<std::size_t>(pick)];
        const QPointF at(box.center().x() - text.size().width() / 2,
                         box.center().y() - text.size().height() / 2);
        const QRectF rect(at, text.size());
        double& right = last_label_right[b->track];
        if (rect.left() < right) {
            continue;
        }
        right = rect.right();
        painter->setPen(text_on(fill));
        painter->drawStaticText(at, text);
        drawn_labels_.push_back(rect);
    }
    if (timeline != nullptr) {
        drawOverlappedPairs(painter, w, *timeline, top, bottom);
    }
    if (paint_.columns.empty()) {
        return;
    }
    // Blocks narrower than two pixels: one image line, a pixel per column,
    // coloured by the kind covering most of it, as opaque as it is covered.
    QImage line(w.columns, 1, QImage::Format_ARGB32_Premultiplied);
    auto* pixels = reinterpret_cast<QRgb*>(line.scanLine(0));
    for (int c = 0; c < w.columns; ++c) {
        const ColumnCover& cover = paint_.columns[static_cast<std::size_t>(c)];
        if (cover.cover <= 0) {
            pixels[c] = 0;
            continue;
        }
        const QColor colour = block_color(cover.kind);
        const int alpha = std::clamp(static_cast<int>(std::lround(80 + 175 * cover.cover)), 0, 255);
        pixels[c] = qPremultiply(qRgba(colour.red(), colour.green(), colour.blue(), alpha));
    }
    painter->drawImage(QRectF(w.left, top, w.columns, height), line);
}

double TimelineBlocks::subBlockSeconds(SubBlock kind, const Action& action) const {
    return sub_blocks_.seconds(kind, action);
}

void TimelineBlocks::drawSubBlocks(QCPPainter* painter, const Window& w, const Timeline& timeline,
                                   double top, double bottom) {
    painter->setPen(Qt::NoPen);
    std::array<QBrush, kSubBlockKinds.size()> brushes;
    for (const SubBlock kind : kSubBlockKinds) {
        brushes[static_cast<std::size_t>(kind)] = sub_block_color(kind, w.dark);
    }
    // [from, to] seconds before the block's end, clipped to the block.
    const auto draw = [&](const Block* b, double from, double to, const QBrush& brush) {
        const double x0 = std::max(w.x(std::max(b->start, b->end - from)), w.left - 1);
        const double x1 = std::min(w.x(std::max(b->start, b->end - to)), w.right + 1);
        if (x1 - x0 < 1) {
            return false;
        }
        painter->setBrush(brush);
        painter->drawRect(QRectF(QPointF(x0, top), QPointF(x1, bottom)));
        return true;
    };
    for (const Block* b : paint_.boxes) {
        const Action& action = timeline.events[static_cast<std::size_t>(b->event)].action;
        double drawn = 0;  // seconds before the block's end taken by the kinds before
        for (const SubBlock kind : kSubBlockKinds) {
            const double s = subBlockSeconds(kind, action);
            const auto k = static_cast<std::size_t>(kind);
            if (s > 0 && draw(b, drawn + s, drawn, brushes[k])) {
                ++drawn_sub_blocks_[k];
            }
            drawn += s;
        }
    }
}

// A forward overlapped with the backward after it (DualPipeV's OVERLAP_F_B)
// shares one frame with it, as DualPipe's own figures draw such pairs.
void TimelineBlocks::drawOverlappedPairs(QCPPainter* painter, const Window& w,
                                         const Timeline& timeline, double top, double bottom) {
    bool pen_set = false;
    for (const Block* b : paint_.boxes) {
        const auto e = static_cast<std::size_t>(b->event);
        if (e + 1 >= timeline.events.size() || !timeline.events[e].action.overlaps_next ||
            timeline.events[e + 1].rank != timeline.events[e].rank) {
            continue;
        }
        const double x0 = std::max(w.x(timeline.events[e].start_s), w.left - 1);
        const double x1 = std::min(w.x(timeline.events[e + 1].end_s), w.right + 1);
        if (x1 - x0 < 4) {
            continue;
        }
        if (!pen_set) {
            painter->setBrush(Qt::NoBrush);
            painter->setPen(QPen(w.dark ? Qt::white : Qt::black, 2));
            pen_set = true;
        }
        painter->drawRect(QRectF(QPointF(x0, top), QPointF(x1, bottom)));
        ++drawn_pairs_;
    }
}

void TimelineBlocks::drawSummary(QCPPainter* painter, const Window& w, const LaneRow& row,
                                 double y0, double y1) {
    const TimelineLayout* layout = lanes_->layout(row.section);
    if (layout == nullptr) {
        return;
    }
    const double top = y0 + 2;
    const double bottom = y1 - 2;
    painter->setPen(Qt::NoPen);
    painter->setBrush(w.dark ? QColor(255, 255, 255, 16) : QColor(0, 0, 0, 12));
    painter->drawRect(QRectF(QPointF(w.left, top), QPointF(w.right, bottom)));
    const double end = std::min(w.t1, layout->makespan());
    if (end > std::max(w.t0, 0.0)) {
        painter->setBrush(
            QBrush(w.dark ? QColor(255, 255, 255, 45) : QColor(0, 0, 0, 35), Qt::BDiagPattern));
        painter->drawRect(
            QRectF(QPointF(w.x(std::max(w.t0, 0.0)), top), QPointF(w.x(end), bottom)));
    }
    // The share of the group's devices computing, per pixel column: dark
    // where all are busy, clear where all wait.
    const std::vector<float> busy = lanes_->summaryFractions(row, w.t0, w.t1, w.columns);
    QImage line(w.columns, 1, QImage::Format_ARGB32_Premultiplied);
    auto* pixels = reinterpret_cast<QRgb*>(line.scanLine(0));
    const QColor colour = busy_share_color(w.dark);
    for (int c = 0; c < w.columns; ++c) {
        const float f = busy[static_cast<std::size_t>(c)];
        const int alpha = f <= 0 ? 0 : static_cast<int>(std::lround(40 + 215 * f));
        pixels[c] = qPremultiply(qRgba(colour.red(), colour.green(), colour.blue(), alpha));
    }
    painter->drawImage(QRectF(w.left, top, w.columns, bottom - top), line);
    ++drawn_boxes_;
}

void TimelineBlocks::drawTransfers(QCPPainter* painter, const Window& w, int first_row,
                                   int last_row) {
    // Past a few thousand arrows the chart is a solid smear that also costs
    // real time to paint: zoom in to see them.
    constexpr int kMaxArrows = 4000;
    QCPAxis* value = valueAxis();
    const auto& rows = lanes_->rows();
    const QColor colour = w.dark ? QColor(240, 240, 240, 200) : QColor(30, 30, 30, 180);
    painter->setRenderHint(QPainter::Antialiasing, true);
    painter->setPen(QPen(colour, 1.2));
    painter->setBrush(colour);
    const double top = rows[static_cast<std::size_t>(first_row)].top;
    const double bottom =
        rows[static_cast<std::size_t>(std::max(first_row, last_row - 1))].bottom();
    for (int section = 0; section < TimelineLanes::kSections; ++section) {
        const TimelineLayout* layout = lanes_->layout(section);
        if (layout == nullptr) {
            continue;
        }
        // Where each rank's arrows end: its lane's communication row (the
        // sub-row of the send or the receive), or the middle of the
        // collapsed group that stands for it.
        std::vector<double> y(static_cast<std::size_t>(layout->ranks()), -1);
        std::vector<double> comm_height(y.size(), 0);  // 0: no sub-rows there
        for (const LaneRow& row : rows) {
            if (row.section != section ||
                (row.kind != LaneRowKind::lane && row.kind != LaneRowKind::summary)) {
                continue;
            }
            const bool comm_row = row.kind == LaneRowKind::lane && row.height >= kTwoRowLane;
            for (int r = row.first; r < row.end; ++r) {
                y[static_cast<std::size_t>(r)] =
                    comm_row ? row.top + row.height * kCommTop : row.top + row.height / 2;
                comm_height[static_cast<std::size_t>(r)] =
                    comm_row ? row.height * (kCommBottom - kCommTop) : 0;
            }
        }
        const auto end_y = [&](int rank, int event) {
            const auto r = static_cast<std::size_t>(rank);
            if (y[r] < 0 || comm_height[r] <= 0) {
                return y[r];
            }
            const int tracks = layout->tracks(2 * rank + 1);
            return y[r] + comm_height[r] * (layout->trackOf(event) + 0.5) / tracks;
        };
        for (const Transfer& t : layout->transfers()) {
            if (t.start > w.t1) {
                break;  // sorted by start
            }
            const double ya = end_y(t.from_rank, t.send_event);
            const double yb = end_y(t.to_rank, t.recv_event);
            if (t.end < w.t0 || ya < 0 || yb < 0 || std::max(ya, yb) < top ||
                std::min(ya, yb) > bottom) {
                continue;
            }
            if (++drawn_transfers_ > kMaxArrows) {
                break;
            }
            const QPointF from(w.x(t.start), value->coordToPixel(ya));
            const QPointF to(w.x(t.end), value->coordToPixel(yb));
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
    }
    painter->setRenderHint(QPainter::Antialiasing, false);
}

void TimelineBlocks::drawLegendIcon(QCPPainter* painter, const QRectF& rect) const {
    painter->setBrush(block_color(BlockKind::forward));
    painter->drawRect(rect);
}

}  // namespace pipewright::gui
