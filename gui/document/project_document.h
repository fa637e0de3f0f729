#pragma once

#include <QObject>
#include <QString>
#include <QUndoStack>

#include "pipewright/core/diagnostics.h"
#include "pipewright/core/project.h"

namespace pipewright::gui {

// The open project: its current value, where it lives on disk, and the undo
// history of every edit made to it. Widgets never change the project
// directly; they call edit(), which goes through the undo stack.
class ProjectDocument : public QObject {
    Q_OBJECT

  public:
    explicit ProjectDocument(QObject* parent = nullptr);

    [[nodiscard]] const Project& project() const { return project_; }
    [[nodiscard]] QUndoStack* undoStack() { return &undo_; }
    // Where Save writes; empty for an untitled project (Save asks where).
    [[nodiscard]] QString filePath() const { return path_; }
    // The folder that relative paths in the project (a schedule CSV) start
    // from: the file's folder, or for an untitled copy the folder of the
    // file it was copied from; empty for a project from nowhere.
    [[nodiscard]] QString baseDir() const { return base_dir_; }
    // Title for the window: file name, or the model name for an unsaved one.
    [[nodiscard]] QString displayName() const;
    [[nodiscard]] bool isModified() const;
    // Problems found when reading the file (unknown keys, wrong types); the
    // semantic ones come from each simulation.
    [[nodiscard]] const Diagnostics& loadDiagnostics() const { return load_diagnostics_; }

    // Reads a project file. Structural problems do not stop it: the parts that
    // could be read are opened and the problems kept in loadDiagnostics().
    // Returns false with the reason only when nothing usable was found.
    bool open(const QString& path, QString* error);
    // Reads a project file as an untitled copy (a shipped example, a
    // read-only file): unmodified until edited, and Save asks where, so the
    // file itself is never overwritten.
    bool openCopy(const QString& path, QString* error);
    // Starts an unsaved project from `project`; relative paths in it start
    // from `baseDir` (the folder of `path` when one is given).
    void reset(const Project& project, const QString& path = {}, Diagnostics problems = {},
               const QString& baseDir = {});
    // Brings back edits an earlier session autosaved (document_autosave.h):
    // the project as it was, modified, and saved to `path` (the file it was
    // edited from; empty: untitled) only when the user saves.
    void restore(const Project& project, const QString& path, const QString& baseDir);
    // Atomic save; on success the document is clean and lives at `path`. A
    // relative schedule CSV is rewritten relative to the new folder, so the
    // saved file still finds it.
    bool saveAs(const QString& path, QString* error);

    // Records an undoable edit that replaces the project with `after`. Edits
    // with the same non-negative mergeId in a row collapse into one step (a
    // spin box being stepped).
    void edit(const QString& description, const Project& after, int mergeId = -1);

    // Used by the undo commands only.
    void replaceProject(const Project& project);

  signals:
    // Another project took this one's place (open, open as a copy, reset);
    // not sent for edits or Save As, which keep the same project.
    void projectReplaced();
    void projectChanged();
    void fileChanged();
    void modifiedChanged(bool modified);

  private:
    // A problem the file had is dropped once an edit changes the value it
    // names: the user has set another.
    void forgetFixedLoadProblems(const Project& before, const Project& after);
    // Reads `path`; Save then writes to `savePath` (empty: asks where).
    bool load(const QString& path, const QString& savePath, QString* error);

    Project project_;
    QString path_;
    QString base_dir_;
    QUndoStack undo_;
    Diagnostics load_diagnostics_;
    bool unsaved_new_ = false;
};

}  // namespace pipewright::gui
