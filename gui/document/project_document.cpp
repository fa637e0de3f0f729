#include "document/project_document.h"

#include <QDir>
#include <QFileInfo>
#include <algorithm>
#include <nlohmann/json.hpp>

#include "document/project_edit_command.h"
#include "pipewright/core/project_io.h"

namespace pipewright::gui {

ProjectDocument::ProjectDocument(QObject* parent) : QObject(parent) {
    connect(&undo_, &QUndoStack::cleanChanged, this,
            [this](bool clean) { emit modifiedChanged(!clean || unsaved_new_); });
}

QString ProjectDocument::displayName() const {
    if (!path_.isEmpty()) {
        return QFileInfo(path_).fileName();
    }
    return project_.model.name.empty() ? tr("Untitled")
                                       : QString::fromStdString(project_.model.name);
}

bool ProjectDocument::isModified() const {
    return unsaved_new_ || !undo_.isClean();
}

bool ProjectDocument::open(const QString& path, QString* error) {
    return load(path, QFileInfo(path).absoluteFilePath(), error);
}

bool ProjectDocument::openCopy(const QString& path, QString* error) {
    return load(path, {}, error);
}

bool ProjectDocument::load(const QString& path, const QString& savePath, QString* error) {
    LoadedProject loaded = load_project_file(path.toStdString());
    if (!loaded.project) {
        if (error != nullptr) {
            *error = QString::fromStdString(loaded.diagnostics.format());
        }
        return false;
    }
    reset(*loaded.project, savePath, std::move(loaded.diagnostics), QFileInfo(path).absolutePath());
    // Just read: nothing to save until it is edited, so quitting does not ask.
    unsaved_new_ = false;
    emit modifiedChanged(false);
    return true;
}

void ProjectDocument::reset(const Project& project, const QString& path, Diagnostics problems,
                            const QString& baseDir) {
    undo_.clear();
    project_ = project;
    path_ = path;
    base_dir_ = path.isEmpty() ? baseDir : QFileInfo(path).absolutePath();
    load_diagnostics_ = std::move(problems);
    unsaved_new_ = path.isEmpty();
    emit projectReplaced();
    emit fileChanged();
    emit projectChanged();
    emit modifiedChanged(isModified());
}

void ProjectDocument::restore(const Project& project, const QString& path, const QString& baseDir) {
    reset(project, path, {}, baseDir);
    if (!path.isEmpty()) {
        base_dir_ = baseDir.isEmpty() ? QFileInfo(path).absolutePath() : baseDir;
    }
    unsaved_new_ = true;  // differs from what is on disk until saved
    emit modifiedChanged(true);
}

bool ProjectDocument::saveAs(const QString& path, QString* error) {
    const QString new_base = QFileInfo(path).absolutePath();
    Project saved = project_;
    std::string& csv = saved.training.schedule.csv_path;
    const QString csv_path = QString::fromStdString(csv);
    if (!csv.empty() && QFileInfo(csv_path).isRelative() && !base_dir_.isEmpty() &&
        QDir(base_dir_) != QDir(new_base)) {
        csv = QDir(new_base)
                  .relativeFilePath(QDir(base_dir_).absoluteFilePath(csv_path))
                  .toStdString();
    }
    try {
        save_project_file(saved, path.toStdString());
    } catch (const std::exception& e) {
        if (error != nullptr) {
            *error = QString::fromStdString(e.what());
        }
        return false;
    }
    path_ = QFileInfo(path).absoluteFilePath();
    base_dir_ = new_base;
    unsaved_new_ = false;
    if (saved != project_) {
        // The saved text is the project: keep them the same, without an
        // undo step for a change the user did not make.
        project_ = saved;
        emit projectChanged();
    }
    // The file now holds what the project does: what was wrong with the old
    // file is gone from it.
    load_diagnostics_ = Diagnostics{};
    undo_.setClean();
    emit fileChanged();
    emit modifiedChanged(false);
    return true;
}

void ProjectDocument::edit(const QString& description, const Project& after, int mergeId) {
    if (after == project_) {
        return;
    }
    undo_.push(new ProjectEditCommand(this, description, project_, after, mergeId));
}

void ProjectDocument::replaceProject(const Project& project) {
    forgetFixedLoadProblems(project_, project);
    project_ = project;
    emit projectChanged();
}

namespace {

// "model.layers[3].kv_heads" as a JSON pointer, "/model/layers/3/kv_heads".
nlohmann::json::json_pointer pointer_of(const std::string& path) {
    std::string out;
    for (const char c : path) {
        out += c == '.' || c == '[' ? '/' : c;
    }
    out.erase(std::remove(out.begin(), out.end(), ']'), out.end());
    return nlohmann::json::json_pointer("/" + out);
}

}  // namespace

void ProjectDocument::forgetFixedLoadProblems(const Project& before, const Project& after) {
    if (load_diagnostics_.empty()) {
        return;
    }
    const nlohmann::json old_json = project_to_json(before);
    const nlohmann::json new_json = project_to_json(after);
    Diagnostics kept;
    for (const Diagnostic& d : load_diagnostics_.items()) {
        bool changed = false;
        try {
            const auto at = pointer_of(d.path);
            changed = old_json.contains(at) != new_json.contains(at) ||
                      (old_json.contains(at) && old_json.at(at) != new_json.at(at));
        } catch (const nlohmann::json::exception&) {
            changed = false;  // not a path into the project (kept as it was said)
        }
        if (!changed) {
            kept.add(d.path, d.message);
        }
    }
    load_diagnostics_ = std::move(kept);
}

}  // namespace pipewright::gui
