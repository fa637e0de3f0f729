#include "timeline/timeline_view.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QScrollBar>
#include <QSignalBlocker>
#include <QToolButton>
#include <QVBoxLayout>
#include <cmath>

#include "timeline/timeline_overview.h"
#include "timeline/timeline_plot.h"

namespace pipewright::gui {

TimelineView::TimelineView(QWidget* parent) : QWidget(parent) {
    plot_ = new TimelinePlot(this);
    overview_ = new TimelineOverview(plot_, this);
    filter_ = new QLineEdit(this);
    filter_->setObjectName(QStringLiteral("laneFilter"));
    filter_->setClearButtonEnabled(true);
    filter_->setPlaceholderText(tr("Filter lanes: gpu3, node1/, 8-15"));
    filter_->setToolTip(
        tr("Show only some lanes. Terms separated by spaces or commas, any may match:\n"
           "• a rank (12) or a range of ranks (8-15, or 8- for 8 onwards)\n"
           "• part of a device path, case ignored: gpu3, node1/ (node1 but not node10), c0/"));
    filter_->setMaximumWidth(320);
    count_ = new QLabel(this);
    count_->setObjectName(QStringLiteral("laneCount"));
    auto* collapse = new QToolButton(this);
    collapse->setObjectName(QStringLiteral("collapseGroups"));
    collapse->setText(tr("Collapse all"));
    collapse->setToolTip(tr("Show each node as one lane shaded by how busy its devices are"));
    auto* expand = new QToolButton(this);
    expand->setObjectName(QStringLiteral("expandGroups"));
    expand->setText(tr("Expand all"));
    expand->setToolTip(tr("Show every device's lane (scroll with Shift+wheel)"));
    scroll_ = new QScrollBar(Qt::Vertical, this);
    scroll_->setObjectName(QStringLiteral("laneScrollBar"));

    auto* bar = new QHBoxLayout;
    bar->setContentsMargins(0, 0, 0, 0);
    bar->addWidget(filter_, 1);
    bar->addWidget(count_, 1);
    bar->addWidget(collapse);
    bar->addWidget(expand);
    auto* body = new QHBoxLayout;
    body->setContentsMargins(0, 0, 0, 0);
    body->setSpacing(0);
    body->addWidget(plot_, 1);
    body->addWidget(scroll_);
    auto* column = new QVBoxLayout(this);
    column->setContentsMargins(0, 0, 0, 0);
    column->setSpacing(2);
    column->addLayout(bar);
    column->addWidget(overview_);
    column->addLayout(body, 1);

    connect(filter_, &QLineEdit::textChanged, plot_, &TimelinePlot::setLaneFilter);
    connect(collapse, &QToolButton::clicked, plot_, &TimelinePlot::collapseAllGroups);
    connect(expand, &QToolButton::clicked, plot_, &TimelinePlot::expandAllGroups);
    connect(plot_, &TimelinePlot::lanesChanged, this, [this] {
        updateCount();
        updateScrollBar();
    });
    connect(plot_, &TimelinePlot::viewChanged, this, &TimelineView::updateScrollBar);
    connect(scroll_, &QScrollBar::valueChanged, plot_,
            [this](int value) { plot_->scrollLanesTo(value); });
    updateCount();
    updateScrollBar();
}

QString TimelineView::countText() const {
    return count_->text();
}

void TimelineView::updateCount() {
    const TimelineLanes& lanes = plot_->lanes();
    const int total = lanes.totalDevices();
    const int matching = lanes.matchingDevices();
    const int drawn = lanes.drawnLanes();
    const QString error = QString::fromStdString(lanes.filter().error());
    const QString lanes_drawn = drawn == 1 ? tr("1 lane") : tr("%1 lanes").arg(drawn);
    const QLocale locale;
    QString text = matching == total
                       ? tr("%1 · all %2 devices").arg(lanes_drawn, locale.toString(total))
                       : tr("%1 · %2 of %3 devices")
                             .arg(lanes_drawn, locale.toString(matching), locale.toString(total));
    if (!lanes.filter().empty() && matching == 0) {
        // Rank terms number the lanes: say which there are.
        const int ranks = lanes.tree(0).ranks() + lanes.tree(1).ranks();
        text = ranks > 0 ? tr("no device matches (lanes 0–%1)").arg(ranks - 1)
                         : tr("no device matches");
    }
    if (!error.isEmpty()) {
        text += QStringLiteral(" · ") + tr("not understood: %1").arg(error);
    }
    count_->setText(text);
    // A filter that hides everything, or that was partly not understood, is
    // shown in the warning colour so that an empty timeline is not a mystery.
    const bool warn = !error.isEmpty() || (!lanes.filter().empty() && matching == 0);
    count_->setStyleSheet(warn ? QStringLiteral("color: #c0392b") : QString());
}

void TimelineView::updateScrollBar() {
    const double content = plot_->lanes().contentHeight();
    const double view = plot_->viewportHeight();
    const QSignalBlocker block(scroll_);
    scroll_->setRange(0, std::max(0, static_cast<int>(std::ceil(content - view))));
    scroll_->setPageStep(static_cast<int>(view));
    scroll_->setSingleStep(static_cast<int>(std::max(10.0, plot_->lanes().laneHeight())));
    scroll_->setValue(static_cast<int>(std::lround(plot_->laneScroll())));
    scroll_->setVisible(content > view + 0.5);
}

}  // namespace pipewright::gui
