#include "run/run_panel.h"

#include <QComboBox>
#include <QEvent>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListView>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>

#include "run/costs_bar.h"
#include "studio_core/format/format.h"
#include "studio_core/models/past_runs_model.h"
#include "studio_core/models/run_comparison_model.h"
#include "style/colors.h"

namespace pipewright::gui {

namespace {

QLabel* heading(const QString& text, QWidget* parent) {
    auto* label = new QLabel(QStringLiteral("<b>%1</b>").arg(text.toHtmlEscaped()), parent);
    return label;
}

}  // namespace

RunPanel::RunPanel(QWidget* parent) : QWidget(parent), process_(new RunProcess(this)) {
    setObjectName(QStringLiteral("runPanel"));
    run_ = new QPushButton(tr("Run on local devices"), this);
    run_->setObjectName(QStringLiteral("runButton"));
    cancel_ = new QPushButton(tr("Cancel"), this);
    cancel_->setObjectName(QStringLiteral("cancelRunButton"));
    cancel_->setToolTip(tr("Stop the run and every rank it started"));
    steps_ = new QSpinBox(this);
    steps_->setRange(1, 1000000);
    steps_->setValue(10);
    steps_->setToolTip(tr("Training steps of the run; the first is left out of the medians"));
    device_ = new QComboBox(this);
    device_->setObjectName(QStringLiteral("runDeviceCombo"));
    device_->addItem(tr("Auto"), QStringLiteral("auto"));
    device_->addItem(tr("CPUs"), QStringLiteral("cpu"));
    device_->addItem(tr("GPUs (CUDA)"), QStringLiteral("cuda"));
    device_->setToolTip(
        tr("Auto: a GPU for each rank when Pipewright is built with CUDA and this machine has "
           "enough of them, CPU workers otherwise"));
    progress_ = new QProgressBar(this);
    progress_->setObjectName(QStringLiteral("runProgress"));
    progress_->setMinimumWidth(120);
    resetProgress();
    status_ = new QLabel(this);
    status_->setWordWrap(true);

    auto* top = new QHBoxLayout;
    top->addWidget(run_);
    top->addWidget(cancel_);
    top->addSpacing(8);
    top->addWidget(new QLabel(tr("Steps"), this));
    top->addWidget(steps_);
    top->addSpacing(8);
    top->addWidget(new QLabel(tr("Devices"), this));
    top->addWidget(device_);
    top->addStretch(1);
    // The same layout on a cluster: the files its engines take.
    auto* launch = new QPushButton(tr("Export Launch Files…"), this);
    launch->setObjectName(QStringLiteral("exportLaunchFilesButton"));
    launch->setToolTip(
        tr("Write a Slurm batch script, Kubeflow PyTorchJob and TrainJob manifests and a "
           "torchrun script that run this project on a cluster (pipewright launch-files)"));
    connect(launch, &QPushButton::clicked, this, &RunPanel::launchFilesRequested);
    top->addWidget(launch);

    costs_ = new CostsBar(this);

    error_ = new QLabel(this);
    error_->setObjectName(QStringLiteral("runError"));
    error_->setWordWrap(true);
    error_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    error_->setTextFormat(Qt::PlainText);
    error_->setVisible(false);

    past_model_ = new PastRunsModel(this);
    past_model_->setOtherLayoutForeground(palette().color(QPalette::Disabled, QPalette::Text));
    past_list_ = new QListView(this);
    past_list_->setModel(past_model_);
    past_list_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    past_list_->setTextElideMode(Qt::ElideMiddle);
    past_list_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    past_list_->setMinimumWidth(past_list_->fontMetrics().horizontalAdvance(QLatin1Char('m')) * 12);
    past_list_->setToolTip(tr("Double-click a run to show its measured timeline again"));
    auto* past = new QWidget(this);
    auto* past_layout = new QVBoxLayout(past);
    past_layout->setContentsMargins(0, 0, 0, 0);
    past_layout->addWidget(heading(tr("Past runs"), past));
    past_layout->addWidget(past_list_, 1);

    table_title_ = heading(tr("Simulated vs measured"), this);
    comparison_ = new RunComparisonModel(this);
    comparison_->setFarOffForeground(warning_color());
    table_ = new QTableView(this);
    table_->setObjectName(QStringLiteral("runComparisonTable"));
    table_->setModel(comparison_);
    table_->verticalHeader()->hide();
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table_->horizontalHeader()->setSectionResizeMode(RunComparisonModel::what,
                                                     QHeaderView::Stretch);
    table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->setAlternatingRowColors(true);
    note_ = new QLabel(this);
    note_->setWordWrap(true);
    comparison_box_ = new QWidget(this);
    comparison_box_->installEventFilter(this);
    auto* comparison_layout = new QVBoxLayout(comparison_box_);
    comparison_layout->setContentsMargins(0, 0, 0, 0);
    comparison_layout->addWidget(table_title_);
    comparison_layout->addWidget(table_, 1);
    comparison_layout->addWidget(note_);

    log_ = new QPlainTextEdit(this);
    log_->setObjectName(QStringLiteral("runLog"));
    log_->setReadOnly(true);
    log_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    log_->setMaximumBlockCount(5000);
    log_->setPlaceholderText(tr("The run's progress and messages appear here."));
    log_->setMinimumHeight(log_->fontMetrics().lineSpacing() * 4 + 2 * log_->frameWidth() + 8);
    auto* log_box = new QWidget(this);
    auto* log_layout = new QVBoxLayout(log_box);
    log_layout->setContentsMargins(0, 0, 0, 0);
    log_layout->addWidget(heading(tr("Log"), log_box));
    log_layout->addWidget(log_, 1);

    auto* right = new QSplitter(Qt::Vertical, this);
    comparison_split_ = right;
    right->addWidget(comparison_box_);
    right->addWidget(log_box);
    right->setStretchFactor(0, 0);
    right->setStretchFactor(1, 1);
    right->setChildrenCollapsible(false);
    auto* split = new QSplitter(Qt::Horizontal, this);
    split->addWidget(past);
    split->addWidget(right);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 3);
    split->setSizes({220, 700});

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(costs_);
    layout->addLayout(top);
    // On their own line, so that a narrow window keeps the buttons whole and
    // a long summary wraps across the panel's width.
    auto* progress_row = new QHBoxLayout;
    progress_row->addWidget(progress_, 2);
    progress_row->addWidget(status_, 3);
    layout->addLayout(progress_row);
    layout->addWidget(error_);
    layout->addWidget(split, 1);

    connect(run_, &QPushButton::clicked, this, &RunPanel::runRequested);
    connect(cancel_, &QPushButton::clicked, this, &RunPanel::cancel);
    connect(past_list_, &QListView::activated, this, [this](const QModelIndex& index) {
        const QString dir = index.data(PastRunsModel::DirRole).toString();
        if (!dir.isEmpty()) {
            emit pastRunActivated(dir);
        }
    });
    connect(process_, &RunProcess::started, this, [this] {
        log(tr("$ %1 %2").arg(process_->request().cli,
                              RunProcess::arguments(process_->request()).join(QLatin1Char(' '))));
        setStatus(tr("Running…"));
        updateButtons();
    });
    connect(process_, &RunProcess::progress, this, [this](int step, int steps) {
        progress_->setRange(0, std::max(1, steps));
        progress_->setValue(std::min(step, steps));
    });
    connect(process_, &RunProcess::output, this, &RunPanel::log);
    connect(process_, &RunProcess::stepLine, this, [this](const RunStep& step) {
        QString line = tr("step %1/%2").arg(step.step).arg(step.steps);
        if (step.loss) {
            line += tr("  loss %1").arg(*step.loss, 0, 'f', 4);
        }
        log(line + QStringLiteral("  ") + format_duration(step.iteration_time_s));
    });
    connect(process_, &RunProcess::succeeded, this, [this] {
        const auto& s = process_->summary();
        QString text = tr("Finished");
        if (s) {
            text = tr("Finished: %1 per iteration, %2 samples/s")
                       .arg(format_duration(s->iteration_time_s),
                            format_rate(s->throughput_samples_per_s));
            if (s->first_loss && s->last_loss) {
                text += tr(", loss %1 → %2")
                            .arg(*s->first_loss, 0, 'g', 4)
                            .arg(*s->last_loss, 0, 'g', 4);
            }
        }
        progress_->setValue(progress_->maximum());
        setStatus(text);
        log(text);
        updateButtons();
        emit runSucceeded(process_->request().out_dir);
    });
    connect(process_, &RunProcess::failed, this, [this](const QString& message) {
        setStatus(tr("Failed"));
        showError(message);
        updateButtons();
        emit runFailed(message);
    });
    connect(process_, &RunProcess::cancelled, this, [this] {
        setStatus(tr("Cancelled"));
        log(tr("Cancelled: the run and its ranks were stopped."));
        updateButtons();
    });
    connectProfile();
    clearComparison(tr("Run the layout to compare the simulation with reality."));
    updateButtons();
}

void RunPanel::connectProfile() {
    connect(costs_, &CostsBar::profileStarted, this, [this] {
        const ProfileRequest& request = costs_->process()->request();
        showError({});
        log_->clear();
        log(tr("$ %1 %2").arg(request.cli,
                              ProfileProcess::arguments(request).join(QLatin1Char(' '))));
        progress_->setRange(0, 0);  // busy until the first round
        progress_->setFormat(tr("profiling…"));
        setStatus(tr("Profiling this machine…"));
        updateButtons();
    });
    connect(costs_, &CostsBar::profileProgress, this, [this](const ProfileProgress& p) {
        progress_->setRange(0, std::max(1, p.total()));
        progress_->setValue(p.done());
        progress_->setFormat(p.collectives ? tr("profiling: all-reduce and all-gather of two ranks")
                             : p.transfer  ? tr("profiling: a transfer between two ranks")
                             : p.sizes > 1
                                 ? tr("profiling: micro-batch size %1 of %2, round %3 of %4")
                                       .arg(p.size)
                                       .arg(p.sizes)
                                       .arg(p.round)
                                       .arg(p.rounds)
                                 : tr("profiling: round %v of %m over the layers"));
    });
    connect(costs_, &CostsBar::profileOutput, this, &RunPanel::log);
    connect(costs_, &CostsBar::profileSucceeded, this, [this](const QString& path) {
        progress_->setRange(0, 1);
        progress_->setValue(1);
        progress_->setFormat(tr("profiled"));
        setStatus(tr("Profiled: the simulation now uses the costs measured here"));
        log(tr("Wrote %1").arg(path));
        // A warning (a busy machine) says how far to trust the figures.
        const QStringList warnings = costs_->process()->warnings();
        if (!warnings.isEmpty()) {
            showError(tr("Profiled, but: %1").arg(warnings.join(QLatin1Char(' '))));
        }
    });
    connect(costs_, &CostsBar::profileFailed, this, [this](const QString& message) {
        resetProgress();
        setStatus(tr("The profile failed; the costs are as before"));
        showError(message);
    });
    connect(costs_, &CostsBar::profileCancelled, this, [this] {
        resetProgress();
        setStatus(tr("Profile cancelled; the costs are as before"));
        log(tr("Cancelled: the profiler was stopped."));
    });
    connect(costs_, &CostsBar::profilingChanged, this, [this] { updateButtons(); });
}

void RunPanel::setCli(const CliLocation& cli) {
    cli_ = cli;
    costs_->setCli(cli);
    updateButtons();
}

void RunPanel::setDefaultSteps(int steps) {
    steps_->setValue(std::max(1, steps));
}

QString RunPanel::device() const {
    return device_->currentData().toString();
}

int RunPanel::steps() const {
    return steps_->value();
}

void RunPanel::start(const RunRequest& request) {
    if (process_->isRunning()) {
        return;
    }
    showError({});
    log_->clear();
    progress_->setRange(0, std::max(1, request.steps.value_or(1)));
    progress_->setValue(0);
    progress_->setFormat(tr("step %v of %m"));
    setStatus(tr("Starting…"));
    process_->start(request);
    updateButtons();
}

void RunPanel::cancel() {
    if (process_->isRunning()) {
        setStatus(tr("Stopping…"));
        process_->cancel();
        updateButtons();
    }
}

void RunPanel::clearForNewProject() {
    if (process_->isRunning() || costs_->isProfiling()) {
        return;
    }
    log_->clear();
    showError({});
    setStatus({});
    resetProgress();
}

void RunPanel::resetProgress() {
    progress_->setRange(0, 1);
    progress_->setValue(0);
    progress_->setFormat(tr("no run yet"));
}

bool RunPanel::isRunning() const {
    return process_->isRunning();
}

void RunPanel::updateButtons() {
    const bool running = process_->isRunning();
    const bool profiling = costs_->isProfiling();
    run_->setEnabled(cli_.found() && !running && !profiling);
    run_->setToolTip(!cli_.found() ? cli_.reason
                     : profiling
                         ? tr("Profiling: run when the profile has finished")
                         : tr("Train this layout for real on the local devices with %1 (Ctrl+R)")
                               .arg(cli_.path));
    costs_->setOtherWorkRunning(running);
    cancel_->setEnabled(running && !process_->isCancelling());
    steps_->setEnabled(!running);
    emit runAvailabilityChanged();
}

void RunPanel::setStatus(const QString& text) {
    status_->setText(text);
}

void RunPanel::log(const QString& line) {
    log_->appendPlainText(line);
}

QString RunPanel::logText() const {
    return log_->toPlainText();
}

QString RunPanel::errorText() const {
    return error_->text();
}

QString RunPanel::statusText() const {
    return status_->text();
}

void RunPanel::showError(const QString& message) {
    error_->setText(message);
    error_->setVisible(!message.isEmpty());
    QPalette pal = error_->palette();
    pal.setColor(QPalette::WindowText, warning_color());
    error_->setPalette(pal);
}

void RunPanel::setRunsDir(const QString& dir, const Project& current) {
    runs_dir_ = dir;
    current_ = current;
    refreshPastRuns();
}

void RunPanel::refreshPastRuns() {
    past_model_->setRuns(list_past_runs(runs_dir_, current_ ? &*current_ : nullptr), runs_dir_);
}

const std::vector<PastRun>& RunPanel::pastRuns() const {
    return past_model_->runs();
}

void RunPanel::selectPastRun(const QString& dir) {
    if (const int row = past_model_->rowOf(dir); row >= 0) {
        past_list_->setCurrentIndex(past_model_->index(row));
    }
}

void RunPanel::showComparison(const QString& runName, const std::vector<RunComparisonRow>& rows,
                              const QString& note) {
    table_title_->setText(tr("<b>Simulated vs measured</b> · run %1").arg(runName.toHtmlEscaped()));
    comparison_->setRows(rows);
    note_->setText(note);
    note_->setVisible(!note.isEmpty());
    fitTableHeight();
    showWholeTable();
}

void RunPanel::showWholeTable() {
    // Every row where the log keeps its minimum: the splitter otherwise
    // keeps the table's earlier height, a few rows of a longer table.
    const int total = comparison_split_->height();
    if (total <= 0) {
        return;
    }
    const int spacing = std::max(0, comparison_box_->layout()->spacing());
    const int wanted = comparison_box_->minimumHeight() - table_->minimumHeight() +
                       table_->maximumHeight() + spacing;
    const int log_least = comparison_split_->widget(1)->minimumSizeHint().height();
    const int box = std::clamp(wanted, comparison_box_->minimumHeight(),
                               std::max(comparison_box_->minimumHeight(), total - log_least));
    comparison_split_->setSizes({box, std::max(0, total - box)});
}

void RunPanel::fitTableHeight() {
    // As tall as its rows where there is room, never taller, so the log
    // below takes the rest; in a low window both give way down to two rows
    // and a few lines of log (1280 x 720 left the log one clipped line).
    const int header = table_->horizontalHeader()->sizeHint().height();
    const int row = table_->verticalHeader()->defaultSectionSize();
    const int frame = 2 * table_->frameWidth() + 2;
    const int rows = comparison_->rowCount();
    table_->setMinimumHeight(header + std::min(rows, 2) * row + frame);
    table_->setMaximumHeight(header + std::max(rows, 2) * row + frame);
    // A wrapped note's height depends on the width, which a splitter does
    // not ask the layout about: without this the note was drawn over the
    // table's last rows.
    const int spacing = std::max(0, comparison_box_->layout()->spacing());
    const int width = comparison_box_->width();
    int note = 0;
    if (note_->isVisibleTo(this)) {
        note = (width > 0 ? note_->heightForWidth(width) : note_->sizeHint().height()) + spacing;
    }
    comparison_box_->setMinimumHeight(table_title_->sizeHint().height() + spacing +
                                      table_->minimumHeight() + note);
}

void RunPanel::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    fitTableHeight();
}

bool RunPanel::eventFilter(QObject* watched, QEvent* event) {
    // The box's width changes with the splitter beside it, not only with
    // the panel: its note wraps anew.
    if (watched == comparison_box_ && event->type() == QEvent::Resize) {
        fitTableHeight();
    }
    return QWidget::eventFilter(watched, event);
}

void RunPanel::clearComparison(const QString& why) {
    table_title_->setText(tr("<b>Simulated vs measured</b>"));
    comparison_->setRows({});
    note_->setText(why);
    note_->setVisible(!why.isEmpty());
    fitTableHeight();
}

}  // namespace pipewright::gui
