#pragma once

#include <QDateTime>
#include <QString>
#include <cstdint>
#include <optional>
#include <vector>

#include "pipewright/core/project.h"
#include "pipewright/core/timeline.h"

// The folders real runs leave behind (timeline.json, metrics.json, run.log,
// and the project.json the studio ran), and where the studio puts new ones.
namespace pipewright::gui {

// Where the runs of the project saved at `project_path` go: its own folder's
// runs/ when the project is saved in a writable folder that is not the
// examples shipped with Pipewright; else runs/<model> in the studio's data
// folder, so an example or an unsaved project still keeps its history.
[[nodiscard]] QString runs_dir_for(const QString& project_path, const QString& model_name);

// A fresh folder name in `runs_dir`: <model>-<yyyyMMdd-HHmmss>, with -2, -3 …
// when taken (core/run_folder_names.h, as the command line names its own).
// Not created.
[[nodiscard]] QString new_run_dir(const QString& runs_dir, const QString& model_name,
                                  const QDateTime& now = QDateTime::currentDateTime());

// Writes the project as edited, to be run from `path`. A schedule CSV named
// relative to the project's folder `base_dir` is made absolute, so the copy
// finds it from the run folder. False with the reason when it cannot write.
bool write_run_project(const Project& project, const QString& base_dir, const QString& path,
                       QString* error);

// A finished run found in a runs folder.
struct PastRun {
    // What the run's project.json says of it against the project on screen.
    enum class Plan : std::uint8_t {
        same,        // the layout on screen: its lanes compare action by action
        other,       // the same model laid out otherwise
        unrecorded,  // no project.json (a run started outside the studio)
    };
    QString dir;   // absolute
    QString name;  // the folder's name
    QDateTime finished;
    std::optional<double> iteration_time_s;  // from metrics.json
    int steps = 0;
    Plan plan = Plan::unrecorded;
};

// Runs in `runs_dir` that left a measured timeline, newest first. With
// `current`, only the runs of its model (projects saved in one folder share
// its runs/), each marked with whether it ran the layout on screen.
[[nodiscard]] std::vector<PastRun> list_past_runs(const QString& runs_dir,
                                                  const Project* current = nullptr);

// What the studio shows of a finished run.
struct MeasuredRun {
    QString dir;
    QString name;
    Timeline timeline;                       // the representative measured step
    std::optional<double> iteration_time_s;  // median over the measured steps
    std::optional<Project> project;          // what was run, when the folder holds it
};

// Reads a run folder; nullopt with the reason when it has no readable
// timeline.json.
[[nodiscard]] std::optional<MeasuredRun> load_measured_run(const QString& dir, QString* error);

}  // namespace pipewright::gui
