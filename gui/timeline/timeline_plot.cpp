#include "timeline/timeline_plot.h"

#include <QHelpEvent>
#include <QToolTip>
#include <cmath>

#include "style/plot_style.h"
#include "timeline/timeline_blocks.h"
#include "timeline/timeline_lane_labels.h"

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
    axisRect()->setRangeDrag(Qt::Horizontal | Qt::Vertical);
    axisRect()->setRangeZoom(Qt::Horizontal);
    axisRect()->setRangeZoomFactor(0.85);
    // The value axis counts pixels down from the first row; the names are
    // drawn by TimelineLaneLabels in the left margin, which we size.
    yAxis->setRangeReversed(true);
    yAxis->grid()->setVisible(false);
    yAxis->setTicks(false);
    yAxis->setTickLabels(false);
    axisRect()->setAutoMargins(QCP::msTop | QCP::msRight | QCP::msBottom);
    axisRect()->setMargins(QMargins(90, 0, 0, 0));
    xAxis->setLabel(tr("time (ms)"));
    setNoAntialiasingOnDrag(true);
    setMouseTracking(true);
    // Nothing is drawn on the overlay layer: sharing the main paint buffer
    // saves clearing and blending a second window-sized image every frame.
    if (QCPLayer* overlay = layer(QStringLiteral("overlay"))) {
        overlay->setMode(QCPLayer::lmLogical);
    }
    lanes_.setHeaderHeight(fontMetrics().height() + 4);
    blocks_ = new TimelineBlocks(xAxis, yAxis, &lanes_);
    labels_ = new TimelineLaneLabels(this, &lanes_);
    message_ = new QCPItemText(this);
    message_->position->setType(QCPItemPosition::ptAxisRectRatio);
    message_->position->setCoords(0.5, 0.5);
    message_->setVisible(false);
    setToolTip(
        tr("Wheel: zoom time around the cursor · Shift+wheel: scroll lanes · Ctrl+wheel: taller "
           "or lower lanes · drag: pan · click a group's name: collapse or expand · "
           "double-click: fit"));
    connect(this, &QCustomPlot::mouseDoubleClick, this, [this](QMouseEvent* event) {
        if (event->pos().x() >= axisRect()->left()) {
            fitToWindow();
        }
    });
    connect(this, &QCustomPlot::afterLayout, this, &TimelinePlot::syncLaneAxis);
    // Keep the view inside the iteration: panning far off shows nothing.
    connect(xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this,
            [this](const QCPRange& r) {
                if (span_s_ > 0) {
                    const double span = span_s_ / unit_;
                    const double minimum = span * 1e-6;
                    if (r.size() < minimum) {
                        const double centre = r.center();
                        xAxis->setRange(centre - minimum / 2, centre + minimum / 2);
                        return;
                    }
                    if (r.size() > span * 1.5) {
                        xAxis->setRange(-span * 0.02, span * 1.02);
                        return;
                    }
                }
                emit viewChanged();
            });
    // Dragging moves the value axis too: keep it on the rows, one pixel per pixel.
    connect(yAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this,
            [this](const QCPRange& r) {
                if (!syncing_) {
                    setLaneRange(r.lower);
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

int TimelinePlot::drawnPairs() const {
    return blocks_->drawnPairs();
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
    } else if (event->type() == QEvent::FontChange) {
        lanes_.setHeaderHeight(fontMetrics().height() + 4);
        updateLanes();
        replot();
    }
}

void TimelinePlot::setSubBlocks(SubBlockSeconds seconds) {
    blocks_->setSubBlocks(std::move(seconds));
    replot(QCustomPlot::rpQueuedReplot);
}

int TimelinePlot::drawnSubBlocks(SubBlock kind) const {
    return blocks_->drawnSubBlocks(kind);
}

void TimelinePlot::setTimeline(const Timeline& timeline,
                               std::vector<std::vector<std::string>> lane_devices) {
    setTimeline(std::make_shared<const Timeline>(timeline), std::move(lane_devices), nullptr);
}

void TimelinePlot::setTimeline(std::shared_ptr<const Timeline> timeline,
                               std::vector<std::vector<std::string>> lane_devices,
                               std::shared_ptr<const TimelineLayout> layout) {
    timeline_ = std::move(timeline);
    lane_devices_ = std::move(lane_devices);
    layout_ = layout ? std::move(layout) : std::make_shared<const TimelineLayout>(*timeline_);
    message_->setVisible(false);
    updateLanes();
    const double span = span_s_ > 0 ? span_s_ / unit_ : 1;
    xAxis->setRange(-span * 0.01, span * 1.01);
    replot();
}

void TimelinePlot::clearTimeline(const QString& message) {
    timeline_ = std::make_shared<const Timeline>();
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
    if (!measured_layout_) {
        return {};
    }
    return measured_name_.isEmpty() ? tr("measured") : tr("measured · run %1").arg(measured_name_);
}

QStringList TimelinePlot::laneLabels() const {
    QStringList out;
    for (const LaneRow& row : lanes_.rows()) {
        if (row.kind != LaneRowKind::caption) {
            out << labels_->textOf(row);
        }
    }
    return out;
}

void TimelinePlot::updateLanes() {
    const double simulated_span = layout_ ? layout_->makespan() : 0;
    const double measured_span = measured_layout_ ? measured_layout_->makespan() : 0;
    span_s_ = std::max(simulated_span, measured_span);
    QString label;
    unit_ = time_unit_for(span_s_, &label);
    xAxis->setLabel(label);

    lanes_.setSection(0, layout_, layout_ ? timeline_->devices : std::vector<std::string>{},
                      layout_ ? lane_devices_ : std::vector<std::vector<std::string>>{});
    lanes_.setSection(1, measured_layout_,
                      measured_layout_ ? measured_.devices : std::vector<std::string>{});
    blocks_->setTimelines(layout_ ? timeline_.get() : nullptr,
                          measured_layout_ ? &measured_ : nullptr, unit_);
    blocks_->setMeasuredCaption(measuredLabel());
    if (lanes_.devicesChanged()) {
        // Other devices: their groups start from what fits, at the top.
        lanes_.clearDevicesChanged();
        auto_collapse_ = true;
        fit_lanes_ = true;
        setLaneRange(0);
    }
    axisRect()->setMargins(QMargins(labels_->preferredWidth(font()), 0, 0, 0));
    refitLanes();
}

void TimelinePlot::refitLanes() {
    const double h = viewportHeight();
    if (auto_collapse_) {
        lanes_.chooseCollapse(h);
    }
    if (fit_lanes_) {
        lanes_.fitLaneHeight(h);
    }
    fitted_height_ = h;
    setLaneRange(laneScroll());
    emit lanesChanged();
}

void TimelinePlot::syncLaneAxis() {
    const double h = viewportHeight();
    if (h != fitted_height_) {
        refitLanes();  // the plot was resized
    } else if (std::abs(yAxis->range().size() - h) > 0.5) {
        setLaneRange(laneScroll());
    }
}

double TimelinePlot::viewportHeight() const {
    return std::max(1, axisRect()->height());
}

double TimelinePlot::laneScroll() const {
    return yAxis->range().lower;
}

void TimelinePlot::setLaneRange(double top) {
    const double h = viewportHeight();
    const double bottom = std::max(0.0, lanes_.contentHeight() - h);
    top = std::clamp(top, 0.0, bottom);
    syncing_ = true;
    yAxis->setRange(top, top + h);
    syncing_ = false;
    emit viewChanged();
}

std::size_t TimelinePlot::blockCount() const {
    return layout_ ? layout_->blockCount() : 0;
}

std::size_t TimelinePlot::measuredBlockCount() const {
    return measured_layout_ ? measured_layout_->blockCount() : 0;
}

void TimelinePlot::fitSectionTime(int section) {
    const TimelineLayout* layout = section == 0 ? layout_.get() : measured_layout_.get();
    if (layout == nullptr || layout->makespan() <= 0) {
        return;
    }
    const double span = layout->makespan() / unit_;
    xAxis->setRange(-span * 0.01, span * 1.01);
    replot();
    emit viewChanged();
}

void TimelinePlot::fitToWindow() {
    const double span = span_s_ > 0 ? span_s_ / unit_ : 1;
    xAxis->setRange(-span * 0.01, span * 1.01);
    auto_collapse_ = true;
    fit_lanes_ = true;
    refitLanes();
    setLaneRange(0);
    replot();
}

void TimelinePlot::setLaneFilter(const QString& text) {
    if (!lanes_.setFilter(text.toStdString())) {
        return;
    }
    // What passes is laid out afresh: groups collapse if it would not fit.
    auto_collapse_ = true;
    fit_lanes_ = true;
    refitLanes();
    setLaneRange(0);
    replot();
}

void TimelinePlot::toggleGroupAt(int row) {
    if (row < 0 || row >= static_cast<int>(lanes_.rows().size())) {
        return;
    }
    const LaneRow r = lanes_.rows()[static_cast<std::size_t>(row)];
    if (r.kind != LaneRowKind::header && r.kind != LaneRowKind::summary) {
        return;
    }
    // The person decides from now on; lane heights stay as they are, so the
    // rows above the group do not move.
    auto_collapse_ = false;
    fit_lanes_ = false;
    lanes_.setCollapsed(r.section, r.group, r.kind == LaneRowKind::header);
    setLaneRange(laneScroll());
    emit lanesChanged();
    replot();
}

void TimelinePlot::collapseAllGroups() {
    auto_collapse_ = false;
    lanes_.collapseAll();
    if (fit_lanes_) {
        lanes_.fitLaneHeight(viewportHeight());
    }
    setLaneRange(0);
    emit lanesChanged();
    replot();
}

void TimelinePlot::expandAllGroups() {
    auto_collapse_ = false;
    lanes_.expandAll();
    if (fit_lanes_) {
        lanes_.fitLaneHeight(viewportHeight());
    }
    setLaneRange(laneScroll());
    emit lanesChanged();
    replot();
}

void TimelinePlot::scrollLanesTo(double y) {
    setLaneRange(y);
    replot(rpQueuedReplot);
}

void TimelinePlot::scrollLanesBy(double pixels) {
    scrollLanesTo(laneScroll() + pixels);
}

void TimelinePlot::zoomLanes(double factor, double anchor_y) {
    const double anchor = yAxis->pixelToCoord(anchor_y);
    const int row = lanes_.rowAt(anchor);
    double within = 0;
    if (row >= 0) {
        const LaneRow& r = lanes_.rows()[static_cast<std::size_t>(row)];
        within = (anchor - r.top) / r.height;
    }
    fit_lanes_ = false;
    lanes_.setLaneHeight(lanes_.laneHeight() * factor);
    double top = laneScroll();
    if (row >= 0) {
        const LaneRow& r = lanes_.rows()[static_cast<std::size_t>(row)];
        top = r.top + within * r.height - (anchor_y - axisRect()->top());
    }
    setLaneRange(top);
    emit lanesChanged();
    replot(rpQueuedReplot);
}

void TimelinePlot::centreOn(double seconds, int section, int rank) {
    const double size = xAxis->range().size();
    xAxis->setRange(seconds / unit_ - size / 2, seconds / unit_ + size / 2);
    const int row = lanes_.rowShowing(section, rank);
    if (row >= 0) {
        const LaneRow& r = lanes_.rows()[static_cast<std::size_t>(row)];
        setLaneRange(r.top + r.height / 2 - viewportHeight() / 2);
    }
    replot(rpQueuedReplot);
}

QRectF TimelinePlot::rowRect(int row) const {
    const LaneRow& r = lanes_.rows().at(static_cast<std::size_t>(row));
    const double y0 = yAxis->coordToPixel(r.top);
    const double y1 = yAxis->coordToPixel(r.bottom());
    return {QPointF(axisRect()->left(), y0), QPointF(axisRect()->right(), y1)};
}

int TimelinePlot::rowAtPixel(const QPoint& pos) const {
    if (pos.y() < axisRect()->top() || pos.y() > axisRect()->bottom() ||
        pos.x() > axisRect()->right()) {
        return -1;
    }
    return lanes_.rowAt(yAxis->pixelToCoord(pos.y()));
}

int TimelinePlot::drawnRows() const {
    return blocks_->drawnRows();
}

std::vector<QRectF> TimelinePlot::drawnLabelRects() const {
    std::vector<QRectF> out = labels_->drawnLabels();
    out.insert(out.end(), blocks_->drawnLabels().begin(), blocks_->drawnLabels().end());
    return out;
}

QStringList TimelinePlot::drawnLaneNames() const {
    return labels_->drawnTexts();
}

bool TimelinePlot::event(QEvent* event) {
    // At rest, Qt asks for a tooltip: the block, lane or group under the
    // pointer keeps its details; elsewhere the mouse bindings are shown.
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        const QString text = tooltipAt(help->pos());
        QToolTip::showText(help->globalPos(), text.isEmpty() ? toolTip() : text, this);
        return true;
    }
    return QCustomPlot::event(event);
}

void TimelinePlot::mousePressEvent(QMouseEvent* event) {
    const QPoint pos = event->pos();
    if (event->button() == Qt::LeftButton && pos.x() < axisRect()->left()) {
        const int row = rowAtPixel(pos);
        if (row >= 0) {
            toggleGroupAt(row);
            event->accept();
            return;
        }
    }
    QCustomPlot::mousePressEvent(event);
}

void TimelinePlot::mouseMoveEvent(QMouseEvent* event) {
    QCustomPlot::mouseMoveEvent(event);
    if (event->buttons() != Qt::NoButton) {
        return;
    }
    const int row = rowAtPixel(event->pos());
    const bool on_group = row >= 0 && event->pos().x() < axisRect()->left() &&
                          lanes_.rows()[static_cast<std::size_t>(row)].kind != LaneRowKind::lane &&
                          lanes_.rows()[static_cast<std::size_t>(row)].kind != LaneRowKind::caption;
    setCursor(on_group ? Qt::PointingHandCursor : Qt::ArrowCursor);
    const QString text = tooltipAt(event->pos());
    if (text.isEmpty()) {
        QToolTip::hideText();
    } else {
        QToolTip::showText(event->globalPosition().toPoint(), text, this);
    }
}

void TimelinePlot::wheelEvent(QWheelEvent* event) {
    const QPoint delta = event->angleDelta();
    const Qt::KeyboardModifiers mods = event->modifiers();
    if (mods & Qt::ShiftModifier) {
        // Some platforms turn Shift+wheel into a horizontal wheel: take either.
        const int steps = delta.y() != 0 ? delta.y() : delta.x();
        scrollLanesBy(-steps / 120.0 * 3 * std::max(lanes_.laneHeight(), 20.0));
        event->accept();
        return;
    }
    if (mods & Qt::ControlModifier) {
        zoomLanes(std::pow(1.2, delta.y() / 120.0), event->position().y());
        event->accept();
        return;
    }
    if (delta.y() == 0 && delta.x() != 0) {
        // A sideways wheel or touchpad swipe pans time.
        const double size = xAxis->range().size();
        xAxis->moveRange(-delta.x() / 120.0 * size * 0.1);
        replot(rpQueuedReplot);
        event->accept();
        return;
    }
    QCustomPlot::wheelEvent(event);  // time zoom around the cursor
}

}  // namespace pipewright::gui
