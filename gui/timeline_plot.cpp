#include "timeline_plot.h"

#include <QToolTip>
#include <cmath>

#include "colors.h"
#include "format.h"
#include "plot_style.h"
#include "timeline_blocks.h"

namespace pipewright::gui {

namespace {

// The largest unit that keeps the iteration's length above one.
double time_unit_for(double makespan, QString* label) {
    if (makespan >= 10) {
        *label = QObject::tr("time (s)");
        return 1;
    }
    if (makespan >= 10e-3) {
        *label = QObject::tr("time (ms)");
        return 1e-3;
    }
    *label = QObject::tr("time (µs)");
    return 1e-6;
}

}  // namespace

TimelinePlot::TimelinePlot(QWidget* parent) : QCustomPlot(parent) {
    setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    axisRect()->setRangeDrag(Qt::Horizontal);
    axisRect()->setRangeZoom(Qt::Horizontal);
    axisRect()->setRangeZoomFactor(0.85);
    yAxis->setRangeReversed(true);
    yAxis->grid()->setVisible(false);
    yAxis->setTickLength(0, 0);
    yAxis->setSubTickLength(0, 0);
    xAxis->setLabel(tr("time (ms)"));
    setNoAntialiasingOnDrag(true);
    setMouseTracking(true);
    blocks_ = new TimelineBlocks(xAxis, yAxis);
    message_ = new QCPItemText(this);
    message_->position->setType(QCPItemPosition::ptAxisRectRatio);
    message_->position->setCoords(0.5, 0.5);
    message_->setVisible(false);
    setToolTip(tr("Wheel: zoom around the cursor · drag: pan · double-click: fit"));
    connect(this, &QCustomPlot::mouseDoubleClick, this, [this] { fitToWindow(); });
    // Keep the view inside the iteration: panning far off shows nothing.
    connect(xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this,
            [this](const QCPRange& r) {
                if (!layout_ || layout_->makespan() <= 0) {
                    return;
                }
                const double span = layout_->makespan() / unit_;
                const double minimum = span * 1e-6;
                if (r.size() < minimum) {
                    const double centre = r.center();
                    xAxis->setRange(centre - minimum / 2, centre + minimum / 2);
                } else if (r.size() > span * 1.5) {
                    xAxis->setRange(-span * 0.02, span * 1.02);
                }
            });
    applyPalette();
}

TimelinePlot::~TimelinePlot() = default;

bool TimelinePlot::showTransfers() const {
    return blocks_->showTransfers();
}

int TimelinePlot::drawnTransfers() const {
    return blocks_->drawnTransfers();
}

void TimelinePlot::setShowTransfers(bool show) {
    blocks_->setShowTransfers(show);
    replot();
}

void TimelinePlot::applyPalette() {
    style_plot(this);
    message_->setColor(palette().color(QPalette::Text));
}

void TimelinePlot::changeEvent(QEvent* event) {
    QCustomPlot::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) {
        applyPalette();
        replot();
    }
}

void TimelinePlot::setTimeline(const Timeline& timeline) {
    timeline_ = timeline;
    layout_ = std::make_shared<TimelineLayout>(timeline_);
    QString label;
    unit_ = time_unit_for(layout_->makespan(), &label);
    xAxis->setLabel(label);
    blocks_->setData(layout_, &timeline_, unit_);
    message_->setVisible(false);

    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    for (int r = 0; r < timeline_.num_ranks(); ++r) {
        const QString device =
            QString::fromStdString(timeline_.devices[static_cast<std::size_t>(r)]);
        ticker->addTick(r + (kComputeTop + kComputeBottom) / 2, device);
        ticker->addTick(r + (kCommTop + kCommBottom) / 2, tr("comm"));
    }
    yAxis->setTicker(ticker);
    yAxis->setRange(-0.05, std::max(1, timeline_.num_ranks()) + 0.02);
    fitToWindow();
}

void TimelinePlot::clearTimeline(const QString& message) {
    timeline_ = Timeline{};
    layout_.reset();
    blocks_->setData(nullptr, nullptr, unit_);
    yAxis->setTicker(QSharedPointer<QCPAxisTickerText>::create());
    message_->setText(message);
    message_->setVisible(!message.isEmpty());
    replot();
}

std::size_t TimelinePlot::blockCount() const {
    return layout_ ? layout_->block_count() : 0;
}

void TimelinePlot::fitToWindow() {
    const double span = layout_ ? layout_->makespan() / unit_ : 1;
    xAxis->setRange(-span * 0.01, span * 1.01);
    replot();
}

QString TimelinePlot::tooltipAt(const QPoint& pos) const {
    if (!layout_ || !axisRect()->rect().contains(pos)) {
        return {};
    }
    const double t = xAxis->pixelToCoord(pos.x()) * unit_;
    const double v = yAxis->pixelToCoord(pos.y());
    const int rank = static_cast<int>(std::floor(v));
    if (rank < 0 || rank >= layout_->ranks()) {
        return {};
    }
    const double within = v - rank;
    const int row = 2 * rank + (within < (kComputeBottom + kCommTop) / 2 ? 0 : 1);
    const double tolerance = 2 * xAxis->range().size() * unit_ / std::max(1, axisRect()->width());
    const int index = layout_->event_at(row, t, tolerance);
    if (index < 0) {
        return {};
    }
    const auto& e = timeline_.events[static_cast<std::size_t>(index)];
    QString text =
        QStringLiteral("<b>%1</b> on %2<br>start %3 · duration %4")
            .arg(QString::fromStdString(to_string(e.action)),
                 QString::fromStdString(timeline_.devices[static_cast<std::size_t>(e.rank)]),
                 format_duration(e.start_s), format_duration(e.duration_s()));
    if (!is_compute(e.action.type)) {
        text += QStringLiteral("<br>%1 %2 rank %3")
                    .arg(format_bytes(e.bytes), is_send(e.action.type) ? tr("to") : tr("from"))
                    .arg(e.peer_rank);
    }
    return text;
}

void TimelinePlot::mouseMoveEvent(QMouseEvent* event) {
    QCustomPlot::mouseMoveEvent(event);
    if (event->buttons() != Qt::NoButton) {
        return;
    }
    const QString text = tooltipAt(event->pos());
    if (text.isEmpty()) {
        QToolTip::hideText();
    } else {
        QToolTip::showText(event->globalPosition().toPoint(), text, this);
    }
}

}  // namespace pipewright::gui
