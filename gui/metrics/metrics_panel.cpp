#include "metrics/metrics_panel.h"

#include <QGridLayout>
#include <QLabel>

#include "pipewright/core/memory_headroom.h"
#include "qcustomplot.h"
#include "studio_core/format/chart_scale.h"
#include "studio_core/format/format.h"
#include "studio_core/models/metrics_rows.h"
#include "style/colors.h"
#include "style/plot_style.h"

namespace pipewright::gui {

namespace {

QLabel* figure_label(QWidget* parent, const QString& tooltip) {
    auto* label = new QLabel(parent);
    label->setTextFormat(Qt::RichText);
    label->setToolTip(tooltip);
    label->setFrameShape(QFrame::StyledPanel);
    label->setMargin(6);
    return label;
}

QString figure(const QString& name, const QString& value) {
    return QStringLiteral(
               "<span style='font-size:small'>%1</span><br><b style='font-size:large'>%2</b>")
        .arg(name, value);
}

QCustomPlot* small_plot(QWidget* parent, const QString& title) {
    auto* plot = new QCustomPlot(parent);
    plot->plotLayout()->insertRow(0);
    auto* text = new QCPTextElement(plot, title, QFont(plot->font().family(), -1, QFont::Bold));
    plot->plotLayout()->addElement(0, 0, text);
    // Low enough that the figures and two rows of plots fit the views of a
    // 1280 x 720 window: the tallest tab sets every tab's height, and a
    // taller one made the timeline's axis scroll out of sight.
    plot->setMinimumHeight(100);
    return plot;
}

QStringList device_labels(const SimulationReport& report) {
    QStringList out;
    for (const auto& d : report.devices) {
        out << QString::fromStdString(d.name);
    }
    return out;
}

QString memoryTip() {
    return MetricsPanel::tr("Whether every device's peak memory fits its capacity");
}

}  // namespace

MetricsPanel::MetricsPanel(QWidget* parent) : QWidget(parent) {
    auto* grid = new QGridLayout(this);
    grid->setContentsMargins(4, 4, 4, 4);
    iteration_ =
        figure_label(this, tr("Simulated time of one training iteration (all micro-batches)"));
    throughput_ = figure_label(this, tr("Samples per second: batch size / iteration time"));
    bubble_ =
        figure_label(this, tr("Share of device time spent idle: 1 - busy / (devices × iteration)"));
    memory_ = figure_label(this, memoryTip());
    memory_->setObjectName(QStringLiteral("memoryFigure"));
    grid->addWidget(iteration_, 0, 0);
    grid->addWidget(throughput_, 0, 1);
    grid->addWidget(bubble_, 0, 2);
    grid->addWidget(memory_, 0, 3);

    utilisation_ = small_plot(this, tr("Utilisation and bubble per device"));
    peak_ = small_plot(this, tr("Peak memory vs capacity"));
    curve_ = small_plot(this, tr("Memory over time"));
    // The legend gets a column of its own beside the curves: inside the
    // axis rectangle it hid the peaks it names.
    curve_->axisRect()->insetLayout()->take(curve_->legend);
    // Curves join the legend only when it is shown: QCustomPlot removes a
    // legend item in time proportional to the legend, so clearing 1,024
    // curves from it took seconds.
    curve_->setAutoAddPlottableToLegend(false);
    legend_column_ = new QCPLayoutGrid;
    legend_column_->addElement(0, 0, curve_->legend);
    // keeps the legend at the top
    legend_column_->addElement(1, 0, new QCPLayoutElement(curve_));
    legend_column_->setRowStretchFactor(0, 0.001);
    showLegend(true);
    grid->addWidget(utilisation_, 1, 0, 1, 2);
    grid->addWidget(peak_, 1, 2, 1, 2);
    grid->addWidget(curve_, 2, 0, 1, 4);
    grid->setRowStretch(1, 1);
    grid->setRowStretch(2, 1);
    restyle();
    clear({});
}

MetricsPanel::~MetricsPanel() {
    // Back in the plot's layout, which deletes it with the plot.
    showLegend(true);
}

void MetricsPanel::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) {
        restyle();
    }
}

void MetricsPanel::restyle() {
    for (QCustomPlot* plot : {utilisation_, peak_, curve_}) {
        style_plot(plot);
        plot->replot();
    }
}

QString MetricsPanel::headline() const {
    return iteration_->text();
}

void MetricsPanel::clear(const QString& message) {
    const QString dash = QStringLiteral("–");
    iteration_->setText(figure(tr("Iteration"), dash));
    throughput_->setText(figure(tr("Throughput"), dash));
    bubble_->setText(figure(tr("Bubble"), dash));
    memory_->setText(figure(tr("Memory"), message.isEmpty() ? dash : message.toHtmlEscaped()));
    devices_.clear();
    drawn_rows_ = -1;
    for (QCustomPlot* plot : {utilisation_, peak_, curve_}) {
        plot->clearPlottables();
        plot->replot();
    }
}

void MetricsPanel::showLegend(bool show) {
    QCPLayoutGrid* layout = curve_->plotLayout();
    const bool in = layout->hasElement(1, 1) && layout->element(1, 1) == legend_column_;
    curve_->legend->setVisible(show);
    if (show && !in) {
        layout->addElement(1, 1, legend_column_);
        layout->setColumnStretchFactor(1, 0.001);
    } else if (!show && in) {
        // Out of the layout, so that the curves and the title take its width.
        layout->take(legend_column_);
        layout->simplify();
    }
}

int MetricsPanel::barRows() const {
    // A line of text per bar, less the title and the axis below.
    const int line = utilisation_->fontMetrics().height() + 2;
    const int height = utilisation_->height() > 0 ? utilisation_->height() : 300;
    return std::max(4, (height - 5 * line) / line);
}

void MetricsPanel::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    if (!devices_.empty() && barRows() != drawn_rows_) {
        drawDeviceBars();
    }
}

void MetricsPanel::drawDeviceBars() {
    drawn_rows_ = barRows();
    const std::vector<MetricsRow> rows = metrics_rows(devices_, drawn_rows_);
    const bool groups = rows_are_groups(rows);
    QStringList labels;
    double largest_bytes = 0;
    for (const MetricsRow& row : rows) {
        labels << row.label;
        largest_bytes = std::max({largest_bytes, static_cast<double>(row.peak_bytes),
                                  static_cast<double>(row.capacity_bytes)});
    }
    // One unit for both memory charts, from the largest figure they show.
    const ChartUnit bytes = bytes_unit(largest_bytes);
    std::vector<double> busy;
    std::vector<double> idle;
    std::vector<double> peak;
    std::vector<double> capacity;
    for (const MetricsRow& row : rows) {
        busy.push_back(100 * row.busy_fraction);
        idle.push_back(100 * (1 - row.busy_fraction));
        peak.push_back(bytes.of(static_cast<double>(row.peak_bytes)));
        capacity.push_back(bytes.of(static_cast<double>(row.capacity_bytes)));
    }
    auto retitle = [](QCustomPlot* plot, const QString& title) {
        if (auto* text = qobject_cast<QCPTextElement*>(plot->plotLayout()->element(0, 0))) {
            text->setText(title);
        }
    };
    retitle(utilisation_, groups ? tr("Utilisation and bubble per node (mean of its devices)")
                                 : tr("Utilisation and bubble per device"));
    retitle(peak_, groups ? tr("Peak memory vs capacity per node (its fullest device)")
                          : tr("Peak memory vs capacity"));

    utilisation_->clearPlottables();
    auto* busy_bars = add_horizontal_bars(utilisation_, busy, block_color(BlockKind::forward));
    busy_bars->setName(tr("busy"));
    auto* idle_bars = add_horizontal_bars(utilisation_, idle, QColor(0xAA, 0xAA, 0xAA));
    idle_bars->setBrush(QBrush(QColor(0x99, 0x99, 0x99), Qt::BDiagPattern));
    idle_bars->moveAbove(busy_bars);
    set_category_ticks(utilisation_->yAxis, labels);
    utilisation_->yAxis->setRangeReversed(true);
    utilisation_->xAxis->setRange(0, 100);
    utilisation_->xAxis->setLabel(tr("% of iteration · hatched = bubble"));
    utilisation_->replot();

    peak_->clearPlottables();
    auto* cap_bars = add_horizontal_bars(peak_, capacity, QColor(0xDD, 0xDD, 0xDD));
    cap_bars->setWidth(0.7);
    cap_bars->setPen(QPen(QColor(0x88, 0x88, 0x88), 1, Qt::DashLine));
    auto* peak_bars = add_horizontal_bars(peak_, peak, block_color(BlockKind::backward_weight));
    peak_bars->setWidth(0.4);
    for (std::size_t i = 0; i < rows.size(); ++i) {
        if (!rows[i].fits()) {
            // One bar per row over capacity, drawn red on top.
            std::vector<double> only(rows.size(), 0);
            only[i] = peak[i];
            add_horizontal_bars(peak_, only, warning_color())->setWidth(0.4);
        }
    }
    set_category_ticks(peak_->yAxis, labels);
    peak_->yAxis->setRangeReversed(true);
    double top = 0;
    for (std::size_t i = 0; i < peak.size(); ++i) {
        top = std::max({top, peak[i], capacity[i]});
    }
    peak_->xAxis->setRange(0, top * 1.05 + 1e-9);
    peak_->xAxis->setLabel(tr("%1 · dashed = capacity").arg(bytes.symbol));
    peak_->replot();
}

QString MetricsPanel::iterationNote() const {
    return iteration_->toolTip();
}

void MetricsPanel::setReport(const SimulationReport& r, std::int64_t memory_margin_bytes) {
    iteration_->setText(figure(tr("Iteration"), format_duration(r.iteration_time_s)));
    // The tied embeddings' sum is no action of the timeline: say where it went.
    const auto& tied = r.tied_embedding_sync;
    iteration_->setToolTip(
        !tied ? QString()
        : tied->same_rank
            ? tr("Includes %1 to add the tied embedding's and head's gradients on rank %2 "
                 "before the optimizer step")
                  .arg(format_duration(tied->seconds))
                  .arg(tied->head_rank)
            : tr("Includes %1 to sum the tied embedding's and head's gradients (%2) between "
                 "ranks %3 and %4 before the optimizer step")
                  .arg(format_duration(tied->seconds), format_bytes(tied->bytes))
                  .arg(tied->embedding_rank)
                  .arg(tied->head_rank));
    throughput_->setText(
        figure(tr("Throughput"), format_rate(r.throughput_samples_per_s) + tr(" samples/s")));
    bubble_->setText(figure(tr("Bubble"), format_percent(r.bubble_fraction)));
    int over = 0;
    for (const auto& d : r.devices) {
        over += d.fits ? 0 : 1;
    }
    // A GPU that fits with less to spare than NCCL's buffers and
    // fragmentation take (memory_headroom.h) fits in amber, and says why.
    const auto tight =
        memory_margin_bytes > 0 ? std::optional<TightDevice>() : tightest_gpu(r.devices);
    const auto coloured = [](const QColor& colour, const QString& text) {
        return QStringLiteral("<span style='color:%1'>%2</span>").arg(colour.name(), text);
    };
    QString memory = memory_margin_bytes > 0
                         ? tr("every device fits, %1 kept free")
                               .arg(format_bytes(static_cast<double>(memory_margin_bytes)))
                         : tr("every device fits");
    if (over > 0) {
        memory = coloured(warning_color(), tr("%n device(s) over capacity", nullptr, over));
    } else if (tight) {
        memory = coloured(caution_color(),
                          tr("every device fits, %1 to spare")
                              .arg(format_bytes(static_cast<double>(tight->spare_bytes))));
    }
    memory_->setText(figure(tr("Memory"), memory));
    memory_->setToolTip(tight ? QString::fromStdString(tight_memory_note(*tight)) : memoryTip());

    const QStringList labels = device_labels(r);
    devices_ = r.devices;
    drawDeviceBars();
    // The curves' unit from their own top (the peaks), not the capacities
    // the bars show: half a MiB would read "0.0005 GiB".
    double largest_peak = 0;
    for (const auto& d : r.devices) {
        largest_peak = std::max(largest_peak, static_cast<double>(d.peak_memory_bytes));
    }
    const ChartUnit bytes = bytes_unit(largest_peak);

    curve_->clearPlottables();
    const double span = r.timeline.makespan_s();
    const ChartUnit time = duration_unit(span);
    static const BlockKind lane_colors[] = {BlockKind::forward,         BlockKind::backward,
                                            BlockKind::backward_weight, BlockKind::recv,
                                            BlockKind::backward_input,  BlockKind::send};
    double curve_top = 0;
    for (std::size_t rank = 0; rank < r.timeline.memory.size(); ++rank) {
        auto* graph = curve_->addGraph();
        graph->setLineStyle(QCPGraph::lsStepLeft);
        graph->setPen(QPen(block_color(lane_colors[rank % std::size(lane_colors)]), 2));
        graph->setName(rank < static_cast<std::size_t>(labels.size())
                           ? labels[static_cast<int>(rank)]
                           : QString::number(rank));
        QVector<double> x;
        QVector<double> y;
        for (const auto& sample : r.timeline.memory[rank]) {
            x << time.of(sample.time_s);
            y << bytes.of(static_cast<double>(sample.bytes));
            curve_top = std::max(curve_top, y.back());
        }
        if (!x.isEmpty()) {
            x << time.of(span);
            y << y.back();
        }
        graph->setData(x, y, true);
    }
    // Beyond a dozen lanes the colours repeat and a legend names nothing.
    constexpr std::size_t kMaxLegendEntries = 12;
    const bool legend = r.timeline.memory.size() <= kMaxLegendEntries;
    if (legend) {
        for (int i = 0; i < curve_->graphCount(); ++i) {
            curve_->graph(i)->addToLegend();
        }
    }
    showLegend(legend);
    curve_->xAxis->setRange(0, time.of(span));
    curve_->xAxis->setLabel(tr("time (%1)").arg(time.symbol));
    curve_->yAxis->setRange(0, curve_top * 1.1 + 1e-9);
    curve_->yAxis->setLabel(bytes.symbol);
    curve_->replot();
}

}  // namespace pipewright::gui
