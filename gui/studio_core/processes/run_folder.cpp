#include "studio_core/processes/run_folder.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QStandardPaths>
#include <algorithm>
#include <ctime>
#include <exception>

#include "pipewright/core/file_names.h"
#include "pipewright/core/project_io.h"
#include "pipewright/core/run_folder_names.h"
#include "pipewright/core/run_records.h"
#include "studio_core/project/asset_paths.h"
#include "studio_core/simulation/run_comparison.h"

namespace pipewright::gui {

namespace {

QString safe_name(const QString& name) {
    return QString::fromStdString(safe_file_stem(name.toStdString()));
}

// metrics.json through the run records' own reader (core/run_records.h);
// nullopt when the run wrote none, an error when it cannot be read.
std::optional<RunMetrics> read_metrics(const QString& dir) {
    const QString path = QDir(dir).filePath(QStringLiteral("metrics.json"));
    if (!QFileInfo(path).isFile()) {
        return std::nullopt;
    }
    return load_run_metrics_file(path.toStdString());
}

}  // namespace

QString runs_dir_for(const QString& project_path, const QString& model_name) {
    if (!project_path.isEmpty()) {
        const QFileInfo project(project_path);
        const QFileInfo folder(project.absolutePath());
        if (folder.isWritable() && !is_shipped_asset(project.absoluteFilePath())) {
            return QDir(project.absolutePath()).filePath(QStringLiteral("runs"));
        }
    }
    const QString data = QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation);
    return QDir(data).filePath(QStringLiteral("runs/") + safe_name(model_name));
}

QString new_run_dir(const QString& runs_dir, const QString& model_name, const QDateTime& now) {
    const QDate day = now.date();
    const QTime time = now.time();
    std::tm local{};
    local.tm_year = day.year() - 1900;
    local.tm_mon = day.month() - 1;
    local.tm_mday = day.day();
    local.tm_hour = time.hour();
    local.tm_min = time.minute();
    local.tm_sec = time.second();
    const QDir dir(runs_dir);
    return dir.filePath(QString::fromStdString(first_free_run_folder(
        run_folder_stem(model_name.toStdString(), local), [&dir](const std::string& name) {
            return QFileInfo::exists(dir.filePath(QString::fromStdString(name)));
        })));
}

bool write_run_project(const Project& project, const QString& base_dir, const QString& path,
                       QString* error) {
    Project copy = project;
    std::string& csv = copy.training.schedule.csv_path;
    if (!csv.empty() && QFileInfo(QString::fromStdString(csv)).isRelative() &&
        !base_dir.isEmpty()) {
        csv = QDir(base_dir).absoluteFilePath(QString::fromStdString(csv)).toStdString();
    }
    try {
        save_project_file(copy, path.toStdString());
    } catch (const std::exception& e) {
        *error = QString::fromStdString(e.what());
        return false;
    }
    return true;
}

std::vector<PastRun> list_past_runs(const QString& runs_dir, const Project* current) {
    std::vector<PastRun> out;
    if (runs_dir.isEmpty()) {
        return out;  // QDir("") would be the current folder
    }
    const QDir dir(runs_dir);
    for (const QFileInfo& info : dir.entryInfoList(QDir::Dirs | QDir::NoDotAndDotDot)) {
        const QFileInfo timeline(
            QDir(info.absoluteFilePath()).filePath(QStringLiteral("timeline.json")));
        if (!timeline.isFile()) {
            continue;
        }
        PastRun run;
        run.dir = info.absoluteFilePath();
        run.name = info.fileName();
        run.finished = timeline.lastModified();
        const QString recorded = QDir(run.dir).filePath(QStringLiteral("project.json"));
        if (current != nullptr && QFileInfo(recorded).isFile()) {
            const auto ran = load_project_file(recorded.toStdString()).project;
            if (ran && !(ran->model == current->model)) {
                continue;  // another model's run, from a project saved beside this one
            }
            run.plan =
                ran && same_run_plan(*ran, *current) ? PastRun::Plan::same : PastRun::Plan::other;
        }
        try {
            if (const auto metrics = read_metrics(run.dir)) {
                run.iteration_time_s = metrics->iteration_time_s;
                run.steps = static_cast<int>(metrics->steps.size());
            }
        } catch (const std::exception&) {
            // Listed without figures; opening it says what is wrong.
        }
        out.push_back(std::move(run));
    }
    std::sort(out.begin(), out.end(), [](const PastRun& a, const PastRun& b) {
        return a.finished != b.finished ? a.finished > b.finished : a.name > b.name;
    });
    return out;
}

std::optional<MeasuredRun> load_measured_run(const QString& dir, QString* error) {
    MeasuredRun run;
    run.dir = QFileInfo(dir).absoluteFilePath();
    run.name = QFileInfo(dir).fileName();
    const QString timeline = QDir(dir).filePath(QStringLiteral("timeline.json"));
    if (!QFileInfo(timeline).isFile()) {
        *error = QObject::tr("%1 holds no timeline.json (the run did not finish)").arg(dir);
        return std::nullopt;
    }
    try {
        run.timeline = load_timeline_file(timeline.toStdString());
    } catch (const std::exception& e) {
        *error = QObject::tr("cannot read %1: %2").arg(timeline, QString::fromStdString(e.what()));
        return std::nullopt;
    }
    try {
        if (const auto metrics = read_metrics(dir)) {
            run.iteration_time_s = metrics->iteration_time_s;
        }
    } catch (const std::exception& e) {
        // InputError naming the file and field, or the file's own error.
        *error = QString::fromStdString(e.what());
        return std::nullopt;
    }
    const QString project = QDir(dir).filePath(QStringLiteral("project.json"));
    if (QFileInfo(project).isFile()) {
        run.project = load_project_file(project.toStdString()).project;
    }
    return run;
}

}  // namespace pipewright::gui
