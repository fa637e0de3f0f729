#include "timeline/timeline_overview.h"

#include <QMouseEvent>
#include <QPainter>
#include <algorithm>
#include <cmath>

#include "studio_core/timeline/lane_density.h"
#include "timeline/timeline_plot.h"

namespace pipewright::gui {

namespace {

// The lanes that pass the filter, in row order: (section, rank).
std::vector<std::pair<int, int>> shown_lanes(const TimelineLanes& lanes) {
    std::vector<std::pair<int, int>> out;
    for (int s = 0; s < TimelineLanes::kSections; ++s) {
        for (int r = 0; r < lanes.tree(s).ranks(); ++r) {
            if (lanes.passes(s, r)) {
                out.emplace_back(s, r);
            }
        }
    }
    return out;
}

}  // namespace

TimelineOverview::TimelineOverview(TimelinePlot* plot, QWidget* parent)
    : QWidget(parent), plot_(plot) {
    setObjectName(QStringLiteral("timelineOverview"));
    setMinimumHeight(24);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    setCursor(Qt::PointingHandCursor);
    setToolTip(
        tr("The whole iteration, every lane shown: darker where more devices compute. "
           "The frame is what the timeline shows; click or drag to move it."));
    connect(plot_, &TimelinePlot::lanesChanged, this, [this] {
        stale_ = true;
        update();
    });
    connect(plot_, &TimelinePlot::viewChanged, this, qOverload<>(&QWidget::update));
}

QSize TimelineOverview::sizeHint() const {
    return {400, 40};
}

QRectF TimelineOverview::strip() const {
    // Left and right edges line up with the timeline's plot area.
    const QRect area = plot_->axisRect()->rect();
    const double left = mapFromGlobal(plot_->mapToGlobal(area.topLeft())).x();
    return QRectF(std::clamp(left, 0.0, std::max(0.0, width() - 10.0)), 1,
                  std::clamp(area.width(), 10, width()), height() - 2);
}

void TimelineOverview::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    stale_ = true;
}

void TimelineOverview::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) {
        stale_ = true;
    }
}

void TimelineOverview::rebuild() {
    stale_ = false;
    const QRectF area = strip();
    const int width = std::max(1, static_cast<int>(area.width()));
    const int height = std::max(1, static_cast<int>(area.height()));
    image_ = QImage(width, height, QImage::Format_ARGB32_Premultiplied);
    image_.fill(Qt::transparent);
    const TimelineLanes& lanes = plot_->lanes();
    const auto shown = shown_lanes(lanes);
    if (shown.empty() || plot_->span() <= 0) {
        return;
    }
    const bool dark = palette().color(QPalette::Base).lightness() < 128;
    const QColor colour = dark ? QColor(150, 190, 240) : QColor(30, 70, 130);
    const int n = static_cast<int>(shown.size());
    const int bands = std::min(n, height);
    // Each band of pixel rows holds an equal share of the lanes.
    std::vector<std::vector<float>> busy(static_cast<std::size_t>(bands));
    float most = 0;
    for (int band = 0; band < bands; ++band) {
        const int from = band * n / bands;
        const int to = (band + 1) * n / bands;
        const int section = shown[static_cast<std::size_t>(from)].first;
        std::vector<int> ranks;
        for (int i = from; i < to; ++i) {
            if (shown[static_cast<std::size_t>(i)].first == section) {
                ranks.push_back(shown[static_cast<std::size_t>(i)].second);
            }
        }
        const TimelineLayout* layout = lanes.layout(section);
        if (layout == nullptr) {
            continue;
        }
        auto& fractions = busy[static_cast<std::size_t>(band)];
        fractions = busy_fractions(*layout, ranks, 0, plot_->span(), width);
        most = std::max(most, *std::max_element(fractions.begin(), fractions.end()));
    }
    // Shaded relative to the busiest pixel: with hundreds of lanes in a band,
    // a pipeline's wave is a few percent busy and would vanish otherwise.
    const float scale = most > 0 ? 1.0F / most : 0.0F;
    for (int band = 0; band < bands; ++band) {
        const auto& fractions = busy[static_cast<std::size_t>(band)];
        if (fractions.empty()) {
            continue;
        }
        const int y0 = band * height / bands;
        const int y1 = (band + 1) * height / bands;
        for (int y = y0; y < y1; ++y) {
            auto* line = reinterpret_cast<QRgb*>(image_.scanLine(y));
            for (int x = 0; x < width; ++x) {
                const float f = fractions[static_cast<std::size_t>(x)] * scale;
                // Lighter than the lanes: the strip is a map, not the content.
                const int alpha = f <= 0 ? 0 : static_cast<int>(std::lround(30 + 140 * f));
                line[x] = qPremultiply(qRgba(colour.red(), colour.green(), colour.blue(), alpha));
            }
        }
    }
}

QRectF TimelineOverview::windowRect() const {
    const QRectF area = strip();
    const TimelineLanes& lanes = plot_->lanes();
    const int n = lanes.matchingDevices();
    if (n == 0 || plot_->span() <= 0) {
        return {};
    }
    const double per_second = area.width() / plot_->span();
    const double t0 = plot_->xAxis->range().lower * plot_->timeUnit();
    const double t1 = plot_->xAxis->range().upper * plot_->timeUnit();
    // The lanes of the rows on screen, as positions among all shown lanes.
    const auto [first, last] =
        lanes.rowsBetween(plot_->yAxis->range().lower, plot_->yAxis->range().upper);
    int from = n;
    int to = 0;
    for (int i = first; i < last; ++i) {
        const LaneRow& row = lanes.rows()[static_cast<std::size_t>(i)];
        if (row.kind == LaneRowKind::caption) {
            continue;
        }
        from = std::min(from, lanes.shownIndex(row.section, row.first));
        to = std::max(to, lanes.shownIndex(row.section, row.end));
    }
    if (from >= to) {
        from = 0;
        to = n;
    }
    const double x0 = area.left() + std::clamp(t0, 0.0, plot_->span()) * per_second;
    const double x1 = area.left() + std::clamp(t1, 0.0, plot_->span()) * per_second;
    const double y0 = area.top() + area.height() * from / n;
    const double y1 = area.top() + area.height() * to / n;
    return QRectF(QPointF(x0, y0), QPointF(std::max(x1, x0 + 2), std::max(y1, y0 + 2)));
}

void TimelineOverview::paintEvent(QPaintEvent*) {
    if (stale_ || image_.size() != strip().size().toSize()) {
        rebuild();
    }
    QPainter painter(this);
    const QRectF area = strip();
    const QColor base = palette().color(QPalette::Base);
    const QColor text = palette().color(QPalette::Text);
    painter.fillRect(area, base);
    painter.drawImage(area.topLeft(), image_);
    const QRectF frame = windowRect();
    if (frame.isValid()) {
        // Dim what is outside the view, frame what is in it.
        QColor dim = base;
        dim.setAlpha(110);
        QPainterPath outside;
        outside.addRect(area);
        QPainterPath inside;
        inside.addRect(frame);
        painter.fillPath(outside.subtracted(inside), dim);
        painter.setPen(QPen(palette().color(QPalette::Highlight), 1.5));
        painter.setBrush(Qt::NoBrush);
        painter.drawRect(frame.adjusted(0.5, 0.5, -0.5, -0.5));
    }
    // The name of the strip, in the room left of it (under the lane names).
    if (area.left() > 60) {
        QColor caption = text;
        caption.setAlpha(150);
        painter.setPen(caption);
        painter.drawText(QRectF(4, 0, area.left() - 10, height()),
                         Qt::AlignRight | Qt::AlignVCenter, tr("overview"));
    }
    QColor border = text;
    border.setAlpha(60);
    painter.setPen(border);
    painter.drawRect(area.adjusted(0, 0, -1, -1));
}

void TimelineOverview::navigate(const QPointF& pos) {
    const QRectF area = strip();
    const TimelineLanes& lanes = plot_->lanes();
    const auto shown = shown_lanes(lanes);
    if (shown.empty() || plot_->span() <= 0 || area.width() <= 0) {
        return;
    }
    const double t = std::clamp((pos.x() - area.left()) / area.width(), 0.0, 1.0) * plot_->span();
    const int index = std::clamp(static_cast<int>((pos.y() - area.top()) / area.height() *
                                                  static_cast<double>(shown.size())),
                                 0, static_cast<int>(shown.size()) - 1);
    const auto [section, rank] = shown[static_cast<std::size_t>(index)];
    plot_->centreOn(t, section, rank);
}

void TimelineOverview::mousePressEvent(QMouseEvent* event) {
    if (event->button() == Qt::LeftButton) {
        navigate(event->position());
    }
}

void TimelineOverview::mouseMoveEvent(QMouseEvent* event) {
    if (event->buttons() & Qt::LeftButton) {
        navigate(event->position());
    }
}

}  // namespace pipewright::gui
