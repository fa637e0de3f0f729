// What the views show of the project's simulation: the timeline and its
// keys, the metrics, the summary in the status bar, the canvas's figures and
// the problems found, each redrawn when a simulation ends.
#include <QDockWidget>
#include <QLabel>
#include <QRegularExpression>
#include <QStatusBar>
#include <algorithm>

#include "document/project_document.h"
#include "editor/model_table_model.h"
#include "editor/problems_panel.h"
#include "editor/training_bar.h"
#include "metrics/comparison_panel.h"
#include "metrics/metrics_panel.h"
#include "pipewright/sim/report_inner_waits.h"
#include "run/profile_controller.h"
#include "run/run_controller.h"
#include "studio_core/canvas/replica_view.h"
#include "studio_core/format/format.h"
#include "studio_core/simulation/simulation_runner.h"
#include "style/colors.h"
#include "timeline/timeline_plot.h"
#include "topology/topology_scene.h"
#include "topology/topology_view.h"
#include "window/main_window.h"

namespace pipewright::gui {

void MainWindow::projectChanged() {
    comparison_->markStale();
    runner_->request(document_->project(), baseDir(), document_->loadDiagnostics());
    const auto latest = runner_->latest();
    rebuildCanvas(document_->project(), latest && latest->report ? &*latest->report : nullptr);
}

void MainWindow::rebuildCanvas(const Project& project, const SimulationReport* report) {
    if (report == nullptr) {
        scene_->rebuild(project, {}, problem_devices_);
        return;
    }
    scene_->rebuild(project, with_tensor_group_members(every_replica_device(*report), project),
                    problem_devices_, replica_roles(*report));
}

QString MainWindow::replicasSummary(const SimulationReport& r) const {
    if (r.data_parallel <= 1) {
        return {};
    }
    // The timeline draws the replicas simulated; say what the others do.
    QString text = tr(" · %n replica(s)", nullptr, r.data_parallel);
    if (r.context_parallel.size > 1) {
        text += tr(", %1 to a sequence").arg(r.context_parallel.size);
    }
    if (r.expert_parallel.size > 1) {
        text += tr(", experts over %1").arg(r.expert_parallel.size);
    }
    if (r.zero_stage > 0) {
        text += tr(", ZeRO-%1").arg(r.zero_stage);
    }
    if (r.replicas.size() == 1) {
        text += tr(", drawn once (all alike)");
    } else {
        text += tr(", %n kind(s) drawn", nullptr, static_cast<int>(r.replicas.size()));
    }
    return text;
}

void MainWindow::setLegend(const SubBlockSeconds& sub_blocks) {
    legend_sub_blocks_ = sub_blocks;
    // A collapsed group's lane is its busy share, which has its own key.
    const auto& rows = timeline_->lanes().rows();
    const bool groups = std::any_of(rows.begin(), rows.end(), [](const LaneRow& row) {
        return row.kind == LaneRowKind::summary;
    });
    QStringList keys;
    // A key never breaks inside: not at its spaces, nor at a hyphen ("Tensor
    // all-/reduce" wrapped over two lines); U+2011 is the non-breaking hyphen.
    const auto key = [](const QColor& colour, QString name) {
        return QStringLiteral("<span style='color:%1;font-size:large'>■</span>&nbsp;%2")
            .arg(colour.name(), name.replace(QLatin1Char(' '), QStringLiteral("&nbsp;"))
                                    .replace(QLatin1Char('-'), QChar(0x2011)));
    };
    for (BlockKind k :
         {BlockKind::forward, BlockKind::backward, BlockKind::backward_input,
          BlockKind::backward_weight, BlockKind::send, BlockKind::recv, BlockKind::collective}) {
        keys << key(block_color(k), block_name(k));
    }
    const bool dark = palette().color(QPalette::Window).lightness() < 128;
    for (const SubBlock kind : kSubBlockKinds) {
        if (!sub_blocks[kind].empty()) {
            keys << key(sub_block_color(kind, dark), sub_block_key(kind));
        }
    }
    if (groups) {
        keys << key(busy_share_color(dark), tr("busy share of a collapsed group"));
    }
    keys << tr("<span style='font-size:large'>▨</span>&nbsp;bubble&nbsp;(idle)");
    // A non-breaking hyphen (U+2011): the key wraps whole, never "micro-/batch".
    keys << tr("labels:&nbsp;stage·micro\u2011batch");
    // Plain spaces between the keys let the legend wrap in a narrow window
    // instead of setting the window's minimum width.
    legend_->setText(keys.join(QStringLiteral(" &nbsp; ")));
}

void MainWindow::simulateNow() {
    runner_->runSynchronously(document_->project(), baseDir(), document_->loadDiagnostics());
}

void MainWindow::simulationDone() {
    const auto result = runner_->latest();
    if (!result) {
        return;
    }
    if (result->report) {
        const SimulationReport& r = *result->report;
        // A failure's message would otherwise cover the new summary for seconds.
        statusBar()->clearMessage();
        // Shared with the result, not copied.
        timeline_->setTimeline(std::shared_ptr<const Timeline>(result, &r.timeline), r.lane_devices,
                               result->layout);
        const SubBlockSeconds sub_blocks = inner_waits(r);
        setLegend(sub_blocks);
        timeline_->setSubBlocks(sub_blocks);
        timeline_->setTensorGroups(r.tensor_groups);
        std::vector<std::array<QString, 3>> kernels;
        for (const StageKernels& stage : result->kernels) {
            kernels.push_back({QString::fromStdString(describe_pass(stage.forward)),
                               QString::fromStdString(describe_pass(stage.backward_input)),
                               QString::fromStdString(describe_pass(stage.backward_weight))});
        }
        timeline_->setStageKernels(std::move(kernels));
        metrics_->setReport(r, runner_->costs().memory_margin_bytes);
        summary_->setText(
            tr("%1 · %n micro-batch(es) · %2 · %3 samples/s · bubble %4", nullptr, r.microbatches)
                .arg(QString::fromStdString(r.schedule), format_duration(r.iteration_time_s),
                     format_rate(r.throughput_samples_per_s), format_percent(r.bubble_fraction)) +
            replicasSummary(r) +
            (r.tensor_parallel.size > 1
                 ? tr(" · %1 devices a stage (tensor%2 parallel)")
                       .arg(r.tensor_parallel.size)
                       .arg(r.tensor_parallel.sequence_parallel ? tr(" and sequence") : QString())
                 : QString()) +
            (result->profile ? tr(" · measured costs") : QString()) +
            // The catalog is also the margin's (StudioCosts): say which it is.
            (profile_->deviceCalibrations().empty() ? QString() : tr(" · calibrated devices")) +
            (runner_->costs().memory_margin_bytes > 0
                 ? tr(" · %1 kept free on each GPU")
                       .arg(format_bytes(static_cast<double>(runner_->costs().memory_margin_bytes)))
                 : QString()) +
            (result->host_pace.empty() ? QString() : tr(" · likely host-bound")));
        QString priced = result->profile
                             ? tr("Priced with the profile measured on this machine (Run tab)")
                             : tr("Priced with the analytic estimate (Run tab: Costs)");
        if (!profile_->deviceCalibrations().empty()) {
            priced +=
                QLatin1Char('\n') + describe_device_calibrations(profile_->deviceCalibrations());
        }
        for (const std::string* note :
             {&result->attention, &result->core_sharing, &result->host_pace}) {
            if (!note->empty()) {
                QString sentence = QString::fromStdString(*note);
                sentence[0] = sentence[0].toUpper();
                priced += QLatin1Char('\n') + sentence + QLatin1Char('.');
            }
        }
        summary_->setToolTip(priced);
    } else {
        const QString why = result->error.empty() ? tr("fix the problems listed to simulate")
                                                  : QString::fromStdString(result->error);
        timeline_->clearTimeline(tr("No timeline: %1").arg(why));
        metrics_->clear(tr("not simulated"));
        summary_->setText(tr("Not simulated"));
    }
    showProblems();
    run_->updateComparison();
}

void MainWindow::showProblems() {
    Diagnostics all = document_->loadDiagnostics();
    const auto result = runner_->latest();
    if (result) {
        all.append(result->diagnostics);
        if (!result->error.empty()) {
            all.add("", result->error);
        }
    }
    problems_->setProblems(all);
    const bool appearing = !all.empty() && problems_dock_->isHidden();
    problems_dock_->setVisible(!all.empty());
    if (appearing) {
        // As tall as its lines (up to a quarter of the window), not the
        // dock's default that left the canvas blank for one line.
        const int rows = std::min(problems_->count(), 6);
        const int line = std::max(problems_->sizeHintForRow(0), fontMetrics().height() + 4);
        const int wanted = std::min(rows * line + 2 * problems_->frameWidth() + 6, height() / 4);
        resizeDocks({problems_dock_}, {wanted}, Qt::Vertical);
    }

    // Highlight what the problems name: layer rows and device boxes.
    static const QRegularExpression layer_re(QStringLiteral("^model\\.layers\\[(\\d+)\\]"));
    static const QRegularExpression stage_re(QStringLiteral("^placement\\[(\\d+)\\]"));
    static const QRegularExpression device_re(
        QStringLiteral("^topology\\.([^\\s.]+/[^\\s.]+/[^\\s.]+)"));
    const Project& p = document_->project();
    QSet<int> rows;
    QSet<QString> devices;
    for (const Diagnostic& d : all.items()) {
        const QString path = QString::fromStdString(d.path);
        if (auto m = layer_re.match(path); m.hasMatch()) {
            rows.insert(m.captured(1).toInt());
        } else if (auto s = stage_re.match(path); s.hasMatch()) {
            const auto stage = static_cast<std::size_t>(s.captured(1).toInt());
            if (stage < p.placement.size()) {
                devices.insert(QString::fromStdString(p.placement[stage].device));
            }
        } else if (auto dm = device_re.match(path); dm.hasMatch()) {
            devices.insert(dm.captured(1));
        }
    }
    model_->setProblemRows(rows);
    problem_devices_ = devices;
    rebuildCanvas(p, result && result->report ? &*result->report : nullptr);
}

void MainWindow::selectProblem(const QString& path) {
    static const QRegularExpression layer_re(QStringLiteral("^model\\.layers\\[(\\d+)\\]"));
    static const QRegularExpression stage_re(QStringLiteral("^placement\\[(\\d+)\\]"));
    static const QRegularExpression device_re(
        QStringLiteral("^topology\\.([^\\s.]+/[^\\s.]+/[^\\s.]+)"));
    const Project& p = document_->project();
    if (auto m = layer_re.match(path); m.hasMatch()) {
        const int row = m.captured(1).toInt();
        selectLayers(row, row);
    } else if (auto s = stage_re.match(path); s.hasMatch()) {
        const auto stage = static_cast<std::size_t>(s.captured(1).toInt());
        if (stage < p.placement.size()) {
            inspector_->setSelection(
                {Selection::Kind::device, -1, QString::fromStdString(p.placement[stage].device)});
            if (!p.placement[stage].layers.empty()) {
                const int first = p.model.layer_index(p.placement[stage].layers.front());
                const int last = p.model.layer_index(p.placement[stage].layers.back());
                if (first >= 0 && last >= first) {
                    selectLayers(first, last);
                }
            }
        }
    } else if (auto d = device_re.match(path); d.hasMatch()) {
        inspector_->setSelection({Selection::Kind::device, -1, d.captured(1)});
        view_->revealDevice(d.captured(1));
    } else if (path.startsWith(QLatin1String("training"))) {
        training_->scheduleBox()->setFocus();
    }
}

}  // namespace pipewright::gui
