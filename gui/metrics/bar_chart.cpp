#include "metrics/bar_chart.h"

#include <QHelpEvent>
#include <QToolTip>
#include <algorithm>
#include <cmath>

#include "studio_core/format/chart_scale.h"
#include "style/colors.h"
#include "style/plot_style.h"

namespace pipewright::gui {

namespace {

constexpr int kLabelPadding = 4;  // each side of a bar's label
constexpr int kBarsPx = 80;       // the least room the bars themselves get
constexpr int kMinHeightPx = 140;
constexpr int kChromeLines = 6;  // title, value axis and its label, margins: in text lines
constexpr int kRowGapPx = 2;     // between the labels of neighbouring rows

}  // namespace

BarChart::BarChart(const QString& title, QWidget* parent) : QCustomPlot(parent) {
    plotLayout()->insertRow(0);
    title_ = new QCPTextElement(this, title, QFont(font().family(), -1, QFont::Bold));
    plotLayout()->addElement(0, 0, title_);
    setMinimumHeight(kMinHeightPx);
    // Plain figures: the unit is chosen so that they stay short, and the
    // axis' label names it ("1·10⁶" would hide a unit chosen badly).
    xAxis->setNumberFormat(QStringLiteral("g"));
    xAxis->setNumberPrecision(6);
    restyle();
}

void BarChart::setTitle(const QString& title) {
    title_->setText(title);
}

QString BarChart::title() const {
    return title_->text();
}

void BarChart::restyle() {
    style_plot(this);
    for (std::size_t i = 0; i < labels_.size(); ++i) {
        labels_[i]->setColor(bars_[i].flagged ? warning_color() : palette().color(QPalette::Text));
    }
    for (int i = 0; i < itemCount(); ++i) {
        if (auto* mark = qobject_cast<QCPItemLine*>(item(i))) {
            QPen pen = mark->pen();
            pen.setColor(palette().color(QPalette::Text));
            mark->setPen(pen);
        }
    }
}

double BarChart::labelWidth(const QString& text) const {
    // As QCPItemText measures it: the bounding rectangle in its font, plus padding.
    const QFontMetrics metrics(font());
    return metrics.boundingRect(0, 0, 0, 0, Qt::TextDontClip | Qt::AlignCenter, text).width() +
           2 * kLabelPadding + 2;
}

void BarChart::setBars(std::vector<ChartBar> bars, const QColor& color, const QString& axisLabel) {
    bars_ = std::move(bars);
    clearPlottables();
    clearItems();
    labels_.clear();

    auto* plain = new QCPBars(yAxis, xAxis);
    plain->setWidth(0.6);
    plain->setBrush(color);
    plain->setPen(QPen(color.darker(130)));
    auto* flagged = new QCPBars(yAxis, xAxis);
    flagged->setWidth(0.6);
    flagged->setBrush(QBrush(warning_color(), Qt::BDiagPattern));
    flagged->setPen(QPen(warning_color(), 1.5));
    std::vector<double> values;
    for (const ChartBar& bar : bars_) {
        values.push_back(bar.value);
    }
    cap_ = bar_scale_cap(values);
    drawn_.clear();
    for (const ChartBar& bar : bars_) {
        drawn_.push_back(cap_ && bar.value > *cap_ ? *cap_ : bar.value);
    }
    QStringList categories;
    for (std::size_t i = 0; i < bars_.size(); ++i) {
        const ChartBar& bar = bars_[i];
        const double key = static_cast<double>(i + 1);
        const double length = drawn_[i];
        categories << bar.category;
        (bar.flagged ? flagged : plain)->addData(key, length);
        if (length != bar.value) {
            // Broken: two slashes across the bar's end say it goes on.
            auto* gap = new QCPItemText(this);
            gap->position->setCoords(length * 0.9, key);
            gap->setPositionAlignment(Qt::AlignCenter);
            gap->setText(QStringLiteral("//"));
            gap->setFont(font());
            gap->setColor(palette().color(QPalette::Text));
            gap->setBrush(palette().color(QPalette::Base));
        }

        auto* text = new QCPItemText(this);
        // Never clipped to the axis rectangle: its range leaves the label
        // room, and a chart squeezed below its minimum still shows it whole.
        text->setClipToAxisRect(false);
        text->position->setCoords(length, key);
        text->setPositionAlignment(bar.value < 0 ? (Qt::AlignRight | Qt::AlignVCenter)
                                                 : (Qt::AlignLeft | Qt::AlignVCenter));
        text->setPadding(QMargins(kLabelPadding, 0, kLabelPadding, 0));
        text->setFont(font());
        text->setText(bar.label);
        labels_.push_back(text);

        if (bar.limit && (!cap_ || *bar.limit <= *cap_)) {
            auto* mark = new QCPItemLine(this);
            mark->start->setCoords(*bar.limit, key - 0.42);
            mark->end->setCoords(*bar.limit, key + 0.42);
            mark->setPen(QPen(palette().color(QPalette::Text), 1.5, Qt::DashLine));
        }
    }
    set_category_ticks(yAxis, categories);
    yAxis->setRangeReversed(true);
    xAxis->setLabel(axisLabel);
    restyle();

    // The width its labels need: the categories on the left (as the axis
    // measures them, with its paddings), then the bars and their labels.
    values = drawn_;
    std::vector<double> widths;
    int category_px = 0;
    const QFontMetrics tick_metrics(yAxis->tickLabelFont());
    for (const ChartBar& bar : bars_) {
        widths.push_back(labelWidth(bar.label));
        category_px = std::max(category_px, tick_metrics.horizontalAdvance(bar.category));
    }
    constexpr int kAxisPaddings = 30;  // tick label padding, axis padding, right margin
    // The axis' title is centred under the axis: it needs as much.
    const int title_px = QFontMetrics(xAxis->labelFont()).horizontalAdvance(axisLabel);
    // Each row keeps a line of its labels' height: many rows make the chart
    // taller (the charts scroll) rather than draw their labels over each other.
    // The title, the value axis' figures, its label and the margins take
    // about six lines.
    const int line_px = QFontMetrics(font()).height();
    const int rows = static_cast<int>(bars_.size());
    setMinimumHeight(std::max(kMinHeightPx, line_px * kChromeLines + (line_px + kRowGapPx) * rows));
    min_width_ =
        category_px + kAxisPaddings +
        std::max(title_px, static_cast<int>(std::ceil(bar_axis_needs_px(values, widths, kBarsPx))));
    updateGeometry();
    replot();
}

void BarChart::updateLayout() {
    QCustomPlot::updateLayout();
    fitValueAxis(axisRect()->width());
}

void BarChart::fitValueAxis(double axis_px) {
    std::vector<double> values;
    std::vector<double> widths;
    for (std::size_t i = 0; i < bars_.size(); ++i) {
        const ChartBar& bar = bars_[i];
        values.push_back(drawn_[i]);
        widths.push_back(labelWidth(bar.label));
        if (bar.limit && (!cap_ || *bar.limit <= *cap_)) {
            values.push_back(*bar.limit);  // the mark is inside the range, without a label
            widths.push_back(0);
        }
    }
    const AxisRange range = bar_axis_range(values, widths, axis_px);
    xAxis->setRange(range.lo, range.hi);
}

QSize BarChart::minimumSizeHint() const {
    return {min_width_, minimumHeight()};
}

QRect BarChart::labelRect(int i) const {
    if (i < 0 || static_cast<std::size_t>(i) >= bars_.size()) {
        return {};
    }
    const ChartBar& bar = bars_[static_cast<std::size_t>(i)];
    const QFontMetrics metrics(font());
    const QRect text =
        metrics.boundingRect(0, 0, 0, 0, Qt::TextDontClip | Qt::AlignCenter, bar.label);
    const int w = text.width() + 2 * kLabelPadding;
    // Beside the bar as drawn (an outlier's is cut at the scale's cap).
    const int x =
        static_cast<int>(std::lround(xAxis->coordToPixel(drawn_.at(static_cast<std::size_t>(i)))));
    const int y = static_cast<int>(std::lround(yAxis->coordToPixel(static_cast<double>(i + 1))));
    return bar.value < 0 ? QRect(x - w, y - text.height() / 2, w, text.height())
                         : QRect(x, y - text.height() / 2, w, text.height());
}

QString BarChart::toolTipAt(const QPoint& pos) const {
    const QRect rect = axisRect()->rect();
    if (pos.y() < rect.top() || pos.y() > rect.bottom() || pos.x() > rect.right()) {
        return {};
    }
    // Anywhere in a row's band, its category label included.
    const double key = yAxis->pixelToCoord(pos.y());
    const long index = std::lround(key) - 1;
    if (index < 0 || static_cast<std::size_t>(index) >= bars_.size() ||
        std::fabs(key - static_cast<double>(index + 1)) > 0.5) {
        return {};
    }
    return bars_[static_cast<std::size_t>(index)].tooltip;
}

bool BarChart::event(QEvent* event) {
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        const QString text = toolTipAt(help->pos());
        if (text.isEmpty()) {
            QToolTip::hideText();
            event->ignore();
        } else {
            QToolTip::showText(help->globalPos(), text, this);
        }
        return true;
    }
    return QCustomPlot::event(event);
}

}  // namespace pipewright::gui
