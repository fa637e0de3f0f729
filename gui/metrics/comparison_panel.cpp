#include "metrics/comparison_panel.h"

#include <QComboBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>

#include "metrics/bar_chart.h"
#include "pipewright/sim/layout_comparison.h"
#include "studio_core/format/chart_scale.h"
#include "studio_core/format/format.h"
#include "studio_core/simulation/memory_fit.h"
#include "style/colors.h"

namespace pipewright::gui {

namespace {

// The gain as the command line's table prints it: "+56.6 %", "baseline",
// or "—" when no baseline ran (`gains` false: there is nothing it is over).
QString gain_text(const ComparisonRow& row, bool gains = true) {
    if (row.baseline) {
        return ComparisonPanel::tr("baseline");
    }
    if (!gains) {
        return QStringLiteral("—");
    }
    return (row.gain_percent >= 0 ? QStringLiteral("+") : QString()) +
           QString::number(row.gain_percent, 'f', 1) + QStringLiteral(" %");
}

// What does not fit, said of the device a user knows: the single-device
// row's device is made up for the comparison, so it is named by its kind.
std::optional<MemoryOverflow> row_overflow(const ComparisonRow& row, bool single_device_baseline) {
    auto over = worst_overflow(row.report->devices);
    if (over && single_device_baseline && !row.report->devices.empty()) {
        over->device = ComparisonPanel::tr("one %1").arg(
            QString::fromStdString(row.report->devices.front().spec));
    }
    return over;
}

QString row_tooltip(const ComparisonRow& row, const std::optional<MemoryOverflow>& over) {
    const SimulationReport& r = *row.report;
    QString text =
        QStringLiteral("<b>%1</b><br>").arg(QString::fromStdString(row.label).toHtmlEscaped());
    if (!row.detail.empty()) {
        text += QString::fromStdString(row.detail).toHtmlEscaped() + QStringLiteral("<br>");
    }
    text += ComparisonPanel::tr("iteration %1 · %2 samples/s · %n micro-batch(es)", nullptr,
                                r.microbatches)
                .arg(format_duration(r.iteration_time_s), format_rate(r.throughput_samples_per_s));
    text += QStringLiteral("<br>") +
            ComparisonPanel::tr("bubble %1 · peak memory %2 · gain %3")
                .arg(format_percent(r.bubble_fraction),
                     format_bytes(static_cast<double>(largest_peak(r.devices))), gain_text(row));
    if (over) {
        text += QStringLiteral("<br><span style='color:%1'>%2</span>")
                    .arg(warning_color().name(), overflow_text(*over).toHtmlEscaped());
    }
    return QStringLiteral("<p style='white-space:pre'>%1</p>").arg(text);
}

}  // namespace

ComparisonPanel::ComparisonPanel(QWidget* parent) : QWidget(parent) {
    auto* top = new QHBoxLayout;
    button_ = new QPushButton(tr("Compare schedules"), this);
    button_->setToolTip(
        tr("Simulate every schedule on this layout, plus the whole model on one "
           "device (Ctrl+Shift+C)"));
    layoutsButton_ = new QPushButton(tr("Compare D × p layouts"), this);
    layoutsButton_->setToolTip(
        tr("Plan the best pipeline for every count of data-parallel replicas this cluster "
           "and batch allow, with its ZeRO stage and where the replicas sit, and compare "
           "each with the layout as set"));
    status_ = new QLabel(tr("Press a button to simulate every schedule on this layout, or to "
                            "plan every data × pipeline layout of this cluster."),
                         this);
    status_->setWordWrap(true);
    top->addWidget(button_);
    top->addWidget(layoutsButton_);
    top->addWidget(status_, 1);

    // After a layout comparison: apply one of its layouts to the project.
    applyRow_ = new QWidget(this);
    auto* apply = new QHBoxLayout(applyRow_);
    apply->setContentsMargins(0, 0, 0, 0);
    layoutChoice_ = new QComboBox(applyRow_);
    layoutChoice_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    applyButton_ = new QPushButton(tr("Apply layout"), applyRow_);
    applyButton_->setToolTip(
        tr("Lay the project out as the chosen row: its pipeline, schedule, micro-batches, "
           "replicas and ZeRO stage (Undo restores the layout as set)"));
    apply->addWidget(new QLabel(tr("Layout:"), applyRow_));
    apply->addWidget(layoutChoice_);
    apply->addWidget(applyButton_);
    apply->addStretch(1);
    applyRow_->hide();

    // The charts scroll rather than squeeze below the width their labels
    // need: a label is never cut, however narrow the window.
    area_ = new QWidget;
    auto* grid = new QGridLayout(area_);
    grid->setContentsMargins(0, 0, 0, 0);
    time_ = new BarChart(tr("Iteration time"), area_);
    gain_ = new BarChart(tr("Gain over one device"), area_);
    bubble_ = new BarChart(tr("Bubble"), area_);
    memory_ = new BarChart(tr("Peak memory (largest device)"), area_);
    time_->setObjectName(QStringLiteral("comparisonTime"));
    gain_->setObjectName(QStringLiteral("comparisonGain"));
    bubble_->setObjectName(QStringLiteral("comparisonBubble"));
    memory_->setObjectName(QStringLiteral("comparisonMemory"));
    grid->addWidget(time_, 0, 0);
    grid->addWidget(gain_, 0, 1);
    grid->addWidget(bubble_, 1, 0);
    grid->addWidget(memory_, 1, 1);
    grid->setRowStretch(0, 1);
    grid->setRowStretch(1, 1);
    notes_ = new QLabel(area_);
    notes_->setWordWrap(true);
    notes_->setTextFormat(Qt::RichText);
    notes_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    grid->addWidget(notes_, 2, 0, 1, 2);
    auto* scroll = new QScrollArea(this);
    scroll->setWidget(area_);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    charts_ = scroll;
    charts_->hide();

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(top);
    layout->addWidget(applyRow_);
    layout->addWidget(scroll, 1);
    // The buttons and the hint stay at the top while the charts are hidden.
    layout->addStretch(0);

    connect(button_, &QPushButton::clicked, this, &ComparisonPanel::compareRequested);
    connect(layoutsButton_, &QPushButton::clicked, this, &ComparisonPanel::compareLayoutsRequested);
    connect(applyButton_, &QPushButton::clicked, this,
            [this] { applyLayout(layoutChoice_->currentText()); });
    connect(&watcher_, &QFutureWatcherBase::finished, this, [this] {
        shown_ = watcher_.result();
        button_->setEnabled(true);
        layoutsButton_->setEnabled(true);
        showRows();
        showApplyChoices();
        emit compared();
    });
}

void ComparisonPanel::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) {
        for (BarChart* chart : {time_, gain_, bubble_, memory_}) {
            chart->restyle();
            chart->replot();
        }
    }
}

void ComparisonPanel::compare(const Project& project, const QString& baseDir, StudioCosts costs) {
    start(Kind::schedules, project, baseDir, std::move(costs));
}

void ComparisonPanel::compareLayouts(const Project& project, const QString& baseDir,
                                     StudioCosts costs) {
    start(Kind::layouts, project, baseDir, std::move(costs));
}

void ComparisonPanel::start(Kind kind, const Project& project, const QString& baseDir,
                            StudioCosts studio_costs) {
    if (watcher_.isRunning()) {
        return;
    }
    button_->setEnabled(false);
    layoutsButton_->setEnabled(false);
    status_->setText(kind == Kind::schedules
                         ? tr("Simulating every schedule…")
                         : tr("Planning a pipeline for every count of replicas…"));
    watcher_.setFuture(
        QtConcurrent::run([kind, project, dir = baseDir.toStdString(), studio_costs] {
            Outcome out;
            out.kind = kind;
            out.input = project;
            const CostModelOptions costs = studio_costs.model_options();
            try {
                if (kind == Kind::schedules) {
                    AnalysisOptions options;
                    options.base_dir = dir;
                    options.catalog = studio_costs.catalog_or_null();
                    out.rows = compare_schedules(project, options, costs);
                    out.layouts.resize(out.rows.size());
                } else {
                    PlanOptions options;
                    options.base_dir = dir;
                    options.costs = costs;
                    options.catalog = studio_costs.catalog_or_null();
                    LayoutComparison layouts = compare_replica_layouts(project, options);
                    out.rows = std::move(layouts.rows);
                    out.layouts = std::move(layouts.layouts);
                    out.choice = std::move(layouts.choice);
                    out.baseline = std::move(layouts.baseline);
                }
            } catch (const std::exception& e) {
                ComparisonRow failed;
                failed.label = "comparison";
                failed.reason = e.what();
                out.rows = {failed};
                out.layouts.assign(1, std::nullopt);
            }
            return out;
        }));
}

QStringList ComparisonPanel::applicableLayouts() const {
    QStringList labels;
    for (std::size_t i = 0; i < shown_.rows.size() && i < shown_.layouts.size(); ++i) {
        if (shown_.layouts[i]) {
            labels << QString::fromStdString(shown_.rows[i].label);
        }
    }
    return labels;
}

void ComparisonPanel::applyLayout(const QString& label) {
    for (std::size_t i = 0; i < shown_.rows.size() && i < shown_.layouts.size(); ++i) {
        if (shown_.layouts[i] && QString::fromStdString(shown_.rows[i].label) == label) {
            emit applyLayoutRequested(*shown_.layouts[i], shown_.input);
            return;
        }
    }
}

void ComparisonPanel::showApplyChoices() {
    const QStringList labels = applicableLayouts();
    layoutChoice_->clear();
    layoutChoice_->addItems(labels);
    // The fastest that fits is offered first.
    double fastest = 0;
    for (std::size_t i = 0; i < shown_.rows.size() && i < shown_.layouts.size(); ++i) {
        const auto& r = shown_.rows[i].report;
        if (shown_.layouts[i] && r && r->all_fit &&
            (fastest == 0 || r->iteration_time_s < fastest)) {
            fastest = r->iteration_time_s;
            layoutChoice_->setCurrentText(QString::fromStdString(shown_.rows[i].label));
        }
    }
    applyRow_->setVisible(shown_.kind == Kind::layouts && !labels.isEmpty());
}

void ComparisonPanel::markStale() {
    if (!shown_.rows.empty() && !watcher_.isRunning()) {
        status_->setText(tr("The layout changed since this comparison: compare again to update."));
    }
}

QString ComparisonPanel::notesText() const {
    return notes_->text();
}

QString ComparisonPanel::statusText() const {
    return status_->text();
}

void ComparisonPanel::showRows() {
    charts_->show();
    const bool layouts = shown_.kind == Kind::layouts;
    std::vector<const ComparisonRow*> shown;
    double longest_s = 0;
    double largest_bytes = 0;
    for (const auto& row : shown_.rows) {
        if (row.report) {
            shown.push_back(&row);
            longest_s = std::max(longest_s, row.report->iteration_time_s);
            largest_bytes =
                std::max(largest_bytes, static_cast<double>(largest_peak(row.report->devices)));
        }
    }
    const ChartUnit time_unit = duration_unit(longest_s);
    const ChartUnit bytes = bytes_unit(largest_bytes);

    std::vector<ChartBar> time;
    std::vector<ChartBar> gain;
    const bool gains = has_gains(shown_.rows);
    std::vector<ChartBar> bubble;
    std::vector<ChartBar> memory;
    QStringList over_notes;
    for (const ComparisonRow* row : shown) {
        const SimulationReport& r = *row->report;
        // The schedules' first row is the whole model on one device.
        const auto over = row_overflow(*row, !layouts && row == &shown_.rows.front());
        const QString label = QString::fromStdString(row->label);
        const QString tooltip = row_tooltip(*row, over);
        const bool flagged = over.has_value();
        // Every label is the command line's figure for the same cell.
        time.push_back({label, time_unit.of(r.iteration_time_s),
                        format_duration(r.iteration_time_s), tooltip, flagged, std::nullopt});
        gain.push_back({label,
                        row->baseline ? 0 : row->gain_percent,
                        gain_text(*row, gains),
                        tooltip,
                        flagged,
                        {}});
        bubble.push_back({label, r.bubble_fraction * 100, format_percent(r.bubble_fraction),
                          tooltip, flagged, std::nullopt});
        // The mark is the capacity of the device with the largest peak, the
        // one whose bar this is.
        const auto largest = std::max_element(
            r.devices.begin(), r.devices.end(),
            [](const auto& a, const auto& b) { return a.peak_memory_bytes < b.peak_memory_bytes; });
        const double peak = static_cast<double>(largest_peak(r.devices));
        std::optional<double> capacity;
        if (largest != r.devices.end() && largest->memory_capacity_bytes > 0) {
            capacity = bytes.of(static_cast<double>(largest->memory_capacity_bytes));
        }
        memory.push_back(
            {label, bytes.of(peak),
             flagged ? tr("%1 · does not fit").arg(format_bytes(peak)) : format_bytes(peak),
             tooltip, flagged, capacity});
        if (over) {
            over_notes << QStringLiteral("<b>%1</b> %2")
                              .arg(label.toHtmlEscaped(), overflow_needs(*over).toHtmlEscaped());
        }
    }

    QStringList not_applicable;
    for (const auto& row : shown_.rows) {
        if (!row.report) {
            not_applicable << QStringLiteral("<b>%1</b>: %2")
                                  .arg(QString::fromStdString(row.label).toHtmlEscaped(),
                                       QString::fromStdString(row.reason).toHtmlEscaped());
        }
    }
    const int count = static_cast<int>(shown.size());
    const int over_count = static_cast<int>(over_notes.size());
    const QString none =
        layouts ? tr("No layout fits this cluster.") : tr("No schedule applies to this layout.");
    status_->setText(count == 0 ? none
                     : over_count == 0
                         ? tr("%n configuration(s) simulated.", nullptr, count)
                         : tr("%n configuration(s) simulated; ", nullptr, count) +
                               tr("not fitting in memory (hatched): %n.", nullptr, over_count));
    QStringList notes;
    if (layouts && !shown_.choice.empty()) {
        notes
            << tr("<b>Fastest:</b> %1").arg(QString::fromStdString(shown_.choice).toHtmlEscaped());
    }
    if (!over_notes.isEmpty()) {
        notes << QStringLiteral("<span style='color:%1'>%2</span> %3")
                     .arg(warning_color().name(), tr("Does not fit in memory:"),
                          over_notes.join(QStringLiteral(" · ")));
    }
    if (!not_applicable.isEmpty()) {
        notes << tr("Not applicable: ") + not_applicable.join(QStringLiteral(" · "));
    }
    notes_->setText(notes.join(QStringLiteral("<br>")));

    time_->setBars(std::move(time), block_color(BlockKind::forward),
                   tr("iteration time (%1) · lower is better").arg(time_unit.symbol));
    time_->setTitle(layouts ? tr("Iteration time by layout (replicas × stages)")
                            : tr("Iteration time"));
    QString over = QString::fromStdString(shown_.baseline);
    if (!layouts) {
        // One device, unless the model does not fit there (compare_schedules).
        over = tr("one device");
        for (const ComparisonRow& row : shown_.rows) {
            if (row.baseline && &row != &shown_.rows.front()) {
                over = QString::fromStdString(row.label);
            }
        }
    }
    gain_->setTitle(tr("Gain over %1").arg(over));
    gain_->setBars(std::move(gain), block_color(BlockKind::backward_weight),
                   tr("% faster than %1").arg(over));
    bubble_->setBars(std::move(bubble), block_color(BlockKind::backward), tr("% idle"));
    memory_->setBars(std::move(memory), block_color(BlockKind::recv),
                     over_count == 0
                         ? tr("%1 · dashed = capacity").arg(bytes.symbol)
                         : tr("%1 · dashed = capacity · hatched = does not fit").arg(bytes.symbol));
}

}  // namespace pipewright::gui
