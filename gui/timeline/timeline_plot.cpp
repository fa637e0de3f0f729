#include "timeline/timeline_plot.h"

#include <QToolTip>
#include <cmath>

#include "studio_core/format.h"
#include "style/colors.h"
#include "style/plot_style.h"
#include "timeline/timeline_blocks.h"

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

// Space between the simulated and the measured lanes, for their caption.
constexpr double kMeasuredGap = 0.4;

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
    measured_blocks_ = new TimelineBlocks(xAxis, yAxis);
    measured_caption_ = new QCPItemText(this);
    measured_caption_->position->setTypeX(QCPItemPosition::ptAxisRectRatio);
    measured_caption_->position->setTypeY(QCPItemPosition::ptPlotCoords);
    measured_caption_->setPositionAlignment(Qt::AlignLeft | Qt::AlignVCenter);
    measured_caption_->setClipToAxisRect(true);
    measured_caption_->setVisible(false);
    measured_rule_ = new QCPItemLine(this);
    measured_rule_->start->setTypeX(QCPItemPosition::ptAxisRectRatio);
    measured_rule_->end->setTypeX(QCPItemPosition::ptAxisRectRatio);
    measured_rule_->setVisible(false);
    message_ = new QCPItemText(this);
    message_->position->setType(QCPItemPosition::ptAxisRectRatio);
    message_->position->setCoords(0.5, 0.5);
    message_->setVisible(false);
    setToolTip(tr("Wheel: zoom around the cursor · drag: pan · double-click: fit"));
    connect(this, &QCustomPlot::mouseDoubleClick, this, [this] { fitToWindow(); });
    // Keep the view inside the iteration: panning far off shows nothing.
    connect(xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this,
            [this](const QCPRange& r) {
                if (span_s_ <= 0) {
                    return;
                }
                const double span = span_s_ / unit_;
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
    measured_blocks_->setShowTransfers(show);
    replot();
}

void TimelinePlot::applyPalette() {
    style_plot(this);
    const QColor text = palette().color(QPalette::Text);
    message_->setColor(text);
    const bool dark = palette().color(QPalette::Base).lightness() < 128;
    const QColor measured = dark ? QColor(255, 190, 90) : QColor(160, 90, 0);
    measured_caption_->setColor(measured);
    QFont bold = font();
    bold.setBold(true);
    measured_caption_->setFont(bold);
    measured_rule_->setPen(QPen(measured, 1, Qt::DashLine));
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
    message_->setVisible(false);
    updateLanes();
    fitToWindow();
}

void TimelinePlot::clearTimeline(const QString& message) {
    timeline_ = Timeline{};
    layout_.reset();
    message_->setText(message);
    message_->setVisible(!message.isEmpty());
    updateLanes();
    replot();
}

void TimelinePlot::setMeasuredTimeline(const Timeline& timeline, const QString& name) {
    measured_ = timeline;
    measured_layout_ = std::make_shared<TimelineLayout>(measured_);
    measured_name_ = name;
    updateLanes();
    fitToWindow();
}

void TimelinePlot::clearMeasuredTimeline() {
    measured_ = Timeline{};
    measured_layout_.reset();
    measured_name_.clear();
    updateLanes();
    fitToWindow();
}

QString TimelinePlot::measuredLabel() const {
    return measured_caption_->visible() ? measured_caption_->text() : QString();
}

void TimelinePlot::updateLanes() {
    const double simulated_span = layout_ ? layout_->makespan() : 0;
    const double measured_span = measured_layout_ ? measured_layout_->makespan() : 0;
    span_s_ = std::max(simulated_span, measured_span);
    QString label;
    unit_ = time_unit_for(span_s_, &label);
    xAxis->setLabel(label);

    const int simulated_ranks = layout_ ? layout_->ranks() : 0;
    const int measured_ranks = measured_layout_ ? measured_layout_->ranks() : 0;
    measured_offset_ = simulated_ranks > 0 ? simulated_ranks + kMeasuredGap : kMeasuredGap;
    blocks_->setData(layout_, layout_ ? &timeline_ : nullptr, unit_);
    measured_blocks_->setData(measured_layout_, measured_layout_ ? &measured_ : nullptr, unit_);
    measured_blocks_->setLanes(measured_offset_, true);

    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    for (int r = 0; r < simulated_ranks; ++r) {
        ticker->addTick(r + (kComputeTop + kComputeBottom) / 2,
                        QString::fromStdString(timeline_.devices[static_cast<std::size_t>(r)]));
        ticker->addTick(r + (kCommTop + kCommBottom) / 2, tr("comm"));
    }
    for (int r = 0; r < measured_ranks; ++r) {
        const double lane = measured_offset_ + r;
        ticker->addTick(
            lane + (kComputeTop + kComputeBottom) / 2,
            tr("%1 · measured")
                .arg(QString::fromStdString(measured_.devices[static_cast<std::size_t>(r)])));
        ticker->addTick(lane + (kCommTop + kCommBottom) / 2, tr("comm"));
    }
    yAxis->setTicker(ticker);
    lane_labels_ = ticker->ticks().values();

    const bool measured = measured_ranks > 0;
    measured_caption_->setVisible(measured);
    measured_rule_->setVisible(measured);
    if (measured) {
        const double y = measured_offset_ - kMeasuredGap / 2;
        measured_caption_->setText(measured_name_.isEmpty()
                                       ? tr("measured")
                                       : tr("measured · run %1").arg(measured_name_));
        measured_caption_->position->setCoords(0.005, y);
        measured_rule_->start->setCoords(0, measured_offset_ - 0.02);
        measured_rule_->end->setCoords(1, measured_offset_ - 0.02);
    }
    const double bottom = measured ? measured_offset_ + measured_ranks : simulated_ranks;
    yAxis->setRange(simulated_ranks > 0 ? -0.05 : 0, std::max(1.0, bottom) + 0.02);
}

std::size_t TimelinePlot::blockCount() const {
    return layout_ ? layout_->blockCount() : 0;
}

std::size_t TimelinePlot::measuredBlockCount() const {
    return measured_layout_ ? measured_layout_->blockCount() : 0;
}

void TimelinePlot::fitToWindow() {
    const double span = span_s_ > 0 ? span_s_ / unit_ : 1;
    xAxis->setRange(-span * 0.01, span * 1.01);
    replot();
}

QString TimelinePlot::tooltipAt(const QPoint& pos) const {
    if (!axisRect()->rect().contains(pos)) {
        return {};
    }
    const double t = xAxis->pixelToCoord(pos.x()) * unit_;
    const double v = yAxis->pixelToCoord(pos.y());
    const bool in_measured = measured_layout_ && v >= measured_offset_;
    const TimelineLayout* layout = in_measured ? measured_layout_.get() : layout_.get();
    if (layout == nullptr) {
        return {};
    }
    const double lane = in_measured ? v - measured_offset_ : v;
    const int rank = static_cast<int>(std::floor(lane));
    if (rank < 0 || rank >= layout->ranks()) {
        return {};
    }
    const double within = lane - rank;
    const int row = 2 * rank + (within < (kComputeBottom + kCommTop) / 2 ? 0 : 1);
    const double tolerance = 2 * xAxis->range().size() * unit_ / std::max(1, axisRect()->width());
    const int index = layout->eventAt(row, t, tolerance);
    if (index < 0) {
        return {};
    }
    const QString text = tooltipFor(in_measured ? measured_ : timeline_, index);
    return in_measured ? text + tr("<br><i>measured</i>") : text;
}

QString TimelinePlot::tooltipFor(const Timeline& timeline, int index) const {
    const auto& e = timeline.events[static_cast<std::size_t>(index)];
    QString text =
        QStringLiteral("<b>%1</b> on %2<br>start %3 · duration %4")
            .arg(QString::fromStdString(to_string(e.action)),
                 QString::fromStdString(timeline.devices[static_cast<std::size_t>(e.rank)]),
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
