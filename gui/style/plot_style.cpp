#include "style/plot_style.h"

#include "qcustomplot.h"

namespace pipewright::gui {

void style_plot(QCustomPlot* plot) {
    const QPalette pal = plot->palette();
    const QColor text = pal.color(QPalette::Text);
    plot->setBackground(pal.color(QPalette::Base));
    for (QCPAxisRect* rect : plot->axisRects()) {
        rect->setBackground(pal.color(QPalette::Base));
        for (QCPAxis* axis : rect->axes()) {
            axis->setBasePen(QPen(text));
            axis->setTickPen(QPen(text));
            axis->setSubTickPen(QPen(text));
            axis->setTickLabelColor(text);
            axis->setLabelColor(text);
            axis->grid()->setPen(QPen(pal.color(QPalette::Mid), 0, Qt::DotLine));
            axis->grid()->setZeroLinePen(Qt::NoPen);
        }
    }
    if (plot->legend != nullptr) {
        plot->legend->setBrush(pal.color(QPalette::Base));
        plot->legend->setTextColor(text);
        plot->legend->setBorderPen(QPen(pal.color(QPalette::Mid)));
    }
    for (int i = 0; i < plot->plotLayout()->elementCount(); ++i) {
        if (auto* title = qobject_cast<QCPTextElement*>(plot->plotLayout()->elementAt(i))) {
            title->setTextColor(text);
        }
    }
}

void set_category_ticks(QCPAxis* axis, const QStringList& labels) {
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    for (int i = 0; i < labels.size(); ++i) {
        ticker->addTick(static_cast<double>(i + 1), labels[i]);
    }
    axis->setTicker(ticker);
    axis->setTickLength(0, 0);
    axis->setSubTicks(false);
    axis->grid()->setVisible(false);
    axis->setRange(0.4, static_cast<double>(labels.size()) + 0.6);
}

QCPBars* add_horizontal_bars(QCustomPlot* plot, const std::vector<double>& values,
                             const QColor& color) {
    auto* bars = new QCPBars(plot->yAxis, plot->xAxis);
    QVector<double> keys;
    QVector<double> data;
    for (std::size_t i = 0; i < values.size(); ++i) {
        keys << static_cast<double>(i + 1);
        data << values[i];
    }
    bars->setData(keys, data, true);
    bars->setWidth(0.6);
    bars->setBrush(color);
    bars->setPen(QPen(color.darker(130)));
    return bars;
}

}  // namespace pipewright::gui
