#include "studio_core/simulation/run_comparison.h"

#include <QFileInfo>
#include <QObject>
#include <algorithm>
#include <map>

#include "pipewright/core/timeline_metrics.h"
#include "studio_core/timeline/action_words.h"

namespace pipewright::gui {

std::optional<double> RunComparisonRow::error() const {
    if (!simulated_s || !measured_s || *measured_s <= 0) {
        return std::nullopt;
    }
    return (*simulated_s - *measured_s) / *measured_s;
}

std::vector<RunComparisonRow> compare_run(const SimulationReport* simulated,
                                          const Timeline& measured,
                                          std::optional<double> measured_iteration_s) {
    const TimelineMetrics metrics = timeline_metrics(measured);
    std::vector<RunComparisonRow> rows;
    RunComparisonRow iteration;
    iteration.what = QObject::tr("Iteration time");
    if (simulated != nullptr) {
        iteration.simulated_s = simulated->iteration_time_s;
    }
    iteration.measured_s = measured_iteration_s ? measured_iteration_s : measured.makespan_s();
    if (!measured_iteration_s && measured.events.empty()) {
        iteration.measured_s.reset();
    }
    rows.push_back(iteration);

    auto busy_row = [](const std::string& device) {
        RunComparisonRow row;
        row.kind = RunComparisonRow::Kind::busy;
        row.device = QString::fromStdString(device);
        row.what = QObject::tr("Busy %1").arg(row.device);
        return row;
    };
    if (simulated != nullptr) {
        for (const DeviceMetrics& d : simulated->devices) {
            RunComparisonRow row = busy_row(d.name);
            row.simulated_s = d.busy_s;
            rows.push_back(row);
        }
    }
    for (const DeviceMetrics& d : metrics.devices) {
        auto it = std::find_if(rows.begin() + 1, rows.end(), [&](const RunComparisonRow& r) {
            return r.device == QString::fromStdString(d.name);
        });
        if (it == rows.end()) {
            rows.push_back(busy_row(d.name));
            it = rows.end() - 1;
        }
        it->measured_s = d.busy_s;
    }

    std::map<ActionType, RunComparisonRow> kinds;
    auto kind_row = [&kinds](ActionType type) -> RunComparisonRow& {
        RunComparisonRow& row = kinds[type];
        row.kind = RunComparisonRow::Kind::action;
        row.action = type;
        const std::string_view code = to_string(type);
        row.what = QObject::tr("Median %1 (%2)")
                       .arg(action_kind_in_words(type),
                            QString::fromLatin1(code.data(), static_cast<qsizetype>(code.size())));
        return row;
    };
    if (simulated != nullptr) {
        for (const auto& [type, median] : action_kind_medians(simulated->timeline)) {
            kind_row(type).simulated_s = median;
        }
    }
    for (const auto& [type, median] : action_kind_medians(measured)) {
        kind_row(type).measured_s = median;
    }
    for (auto& [type, row] : kinds) {
        rows.push_back(std::move(row));
    }
    return rows;
}

bool same_run_plan(const Project& ran, const Project& current) {
    Project a = ran;
    Project b = current;
    std::string& csv_a = a.training.schedule.csv_path;
    std::string& csv_b = b.training.schedule.csv_path;
    if (QFileInfo(QString::fromStdString(csv_a)).fileName() ==
        QFileInfo(QString::fromStdString(csv_b)).fileName()) {
        csv_a.clear();
        csv_b.clear();
    }
    return a.model == b.model && a.topology == b.topology && a.placement == b.placement &&
           a.training == b.training;
}

}  // namespace pipewright::gui
