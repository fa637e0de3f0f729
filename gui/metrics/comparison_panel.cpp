#include "metrics/comparison_panel.h"

#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QtConcurrent/QtConcurrentRun>

#include "qcustomplot.h"
#include "studio_core/format.h"
#include "style/colors.h"
#include "style/plot_style.h"

namespace pipewright::gui {

namespace {

QCustomPlot* chart(QWidget* parent, const QString& title) {
    auto* plot = new QCustomPlot(parent);
    plot->plotLayout()->insertRow(0);
    plot->plotLayout()->addElement(
        0, 0, new QCPTextElement(plot, title, QFont(plot->font().family(), -1, QFont::Bold)));
    plot->setMinimumHeight(140);
    return plot;
}

}  // namespace

ComparisonPanel::ComparisonPanel(QWidget* parent) : QWidget(parent) {
    auto* top = new QHBoxLayout;
    button_ = new QPushButton(tr("Compare schedules"), this);
    button_->setToolTip(
        tr("Simulate every schedule on this layout, plus the whole model on one "
           "device (Ctrl+Shift+C)"));
    status_ = new QLabel(tr("Press the button to simulate every schedule on this layout."), this);
    top->addWidget(button_);
    top->addWidget(status_, 1);

    auto* grid = new QGridLayout;
    time_ = chart(this, tr("Iteration time"));
    gain_ = chart(this, tr("Gain over one device"));
    bubble_ = chart(this, tr("Bubble"));
    memory_ = chart(this, tr("Peak memory (largest device)"));
    grid->addWidget(time_, 0, 0);
    grid->addWidget(gain_, 0, 1);
    grid->addWidget(bubble_, 1, 0);
    grid->addWidget(memory_, 1, 1);

    notes_ = new QLabel(this);
    notes_->setWordWrap(true);
    notes_->setTextInteractionFlags(Qt::TextSelectableByMouse);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(top);
    layout->addLayout(grid, 1);
    layout->addWidget(notes_);

    connect(button_, &QPushButton::clicked, this, &ComparisonPanel::compareRequested);
    connect(&watcher_, &QFutureWatcherBase::finished, this, [this] {
        rows_ = watcher_.result();
        button_->setEnabled(true);
        showRows();
        emit compared();
    });
    for (QCustomPlot* plot : {time_, gain_, bubble_, memory_}) {
        style_plot(plot);
    }
}

void ComparisonPanel::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) {
        for (QCustomPlot* plot : {time_, gain_, bubble_, memory_}) {
            style_plot(plot);
            plot->replot();
        }
    }
}

void ComparisonPanel::compare(const Project& project, const QString& baseDir) {
    if (watcher_.isRunning()) {
        return;
    }
    button_->setEnabled(false);
    status_->setText(tr("Simulating every schedule…"));
    watcher_.setFuture(QtConcurrent::run([project, dir = baseDir.toStdString()] {
        AnalysisOptions options;
        options.base_dir = dir;
        try {
            return compare_schedules(project, options, CostModelOptions{});
        } catch (const std::exception& e) {
            ComparisonRow failed;
            failed.label = "comparison";
            failed.reason = e.what();
            return std::vector<ComparisonRow>{failed};
        }
    }));
}

void ComparisonPanel::markStale() {
    if (!rows_.empty() && !watcher_.isRunning()) {
        status_->setText(tr("The layout changed since this comparison: compare again to update."));
    }
}

void ComparisonPanel::showRows() {
    QStringList labels;
    std::vector<double> time;
    std::vector<double> gain;
    std::vector<double> bubble;
    std::vector<double> memory;
    QStringList notes;
    for (const auto& row : rows_) {
        if (!row.report) {
            notes << QStringLiteral("<b>%1</b>: %2")
                         .arg(QString::fromStdString(row.label),
                              QString::fromStdString(row.reason).toHtmlEscaped());
            continue;
        }
        labels << QString::fromStdString(row.label);
        time.push_back(row.report->iteration_time_s * 1e3);
        gain.push_back(row.baseline ? 0 : row.gain_percent);
        bubble.push_back(row.report->bubble_fraction * 100);
        double peak = 0;
        for (const auto& d : row.report->devices) {
            peak = std::max(peak, static_cast<double>(d.peak_memory_bytes));
        }
        memory.push_back(peak / (1024.0 * 1024.0 * 1024.0));
    }
    status_->setText(labels.isEmpty() ? tr("No schedule applies to this layout.")
                                      : tr("%n configuration(s) simulated.", nullptr,
                                           static_cast<int>(labels.size())));
    notes_->setText(notes.isEmpty() ? QString()
                                    : tr("Not applicable: ") + notes.join(QStringLiteral(" · ")));

    struct Series {
        QCustomPlot* plot;
        const std::vector<double>* values;
        QColor color;
        QString unit;
    };
    const Series all[] = {
        {time_, &time, block_color(BlockKind::forward), tr("ms (lower is better)")},
        {gain_, &gain, block_color(BlockKind::backward_weight), tr("% faster than one device")},
        {bubble_, &bubble, block_color(BlockKind::backward), tr("% idle")},
        {memory_, &memory, block_color(BlockKind::recv), tr("GiB")},
    };
    for (const Series& s : all) {
        s.plot->clearPlottables();
        s.plot->clearItems();
        add_horizontal_bars(s.plot, *s.values, s.color);
        set_category_ticks(s.plot->yAxis, labels);
        s.plot->yAxis->setRangeReversed(true);
        double lo = 0;
        double hi = 0;
        for (std::size_t i = 0; i < s.values->size(); ++i) {
            const double v = (*s.values)[i];
            lo = std::min(lo, v);
            hi = std::max(hi, v);
            auto* text = new QCPItemText(s.plot);
            text->position->setCoords(v, static_cast<double>(i + 1));
            text->setPositionAlignment(v < 0 ? (Qt::AlignRight | Qt::AlignVCenter)
                                             : (Qt::AlignLeft | Qt::AlignVCenter));
            text->setPadding(QMargins(4, 0, 4, 0));
            text->setColor(palette().color(QPalette::Text));
            text->setText(QString::number(v, 'f', std::fabs(v) >= 100 ? 0 : 1));
        }
        const double pad = (hi - lo) * 0.18 + 1e-9;
        s.plot->xAxis->setRange(lo < 0 ? lo - pad : 0, hi + pad);
        s.plot->xAxis->setLabel(s.unit);
        s.plot->replot();
    }
}

}  // namespace pipewright::gui
