#pragma once
// Autosave: the open project is written to a recovery file of its own a
// moment after every edit, so that a studio that crashes, or a machine that
// loses power, loses at most the last moment's edits. The user's file is
// never written: the recovery file lives in a folder of the studio's, and
// the next start offers it back (recovery_prompt.h).
#include <QDateTime>
#include <QLockFile>
#include <QObject>
#include <QString>
#include <QTimer>
#include <memory>
#include <vector>

#include "pipewright/core/project.h"

namespace pipewright::gui {

class ProjectDocument;

// The recovery folder: $PIPEWRIGHT_RECOVERY_DIR, else "recovery" in the
// studio's application data folder.
[[nodiscard]] QString default_recovery_folder();

class DocumentAutosave : public QObject {
    Q_OBJECT

  public:
    // How long after an edit the project is written: a burst of edits (a
    // spin box held down) is written once.
    static constexpr int kDelayMs = 1500;

    // Keeps `document`'s unsaved edits in a file of this session in `folder`
    // (made when needed), locked while this session runs.
    DocumentAutosave(ProjectDocument* document, const QString& folder, QObject* parent = nullptr);
    // A session that ends normally leaves nothing to recover: the user saved,
    // or chose to discard.
    ~DocumentAutosave() override;
    DocumentAutosave(const DocumentAutosave&) = delete;
    DocumentAutosave& operator=(const DocumentAutosave&) = delete;

    [[nodiscard]] QString recoveryFile() const { return file_; }
    // Writes a pending autosave now.
    void flush();
    // Why the last write failed (empty when it did not).
    [[nodiscard]] QString lastError() const { return error_; }

  private:
    void schedule();
    void write();
    void remove();

    ProjectDocument* document_;
    QString file_;
    std::unique_ptr<QLockFile> lock_;
    QTimer timer_;
    QString error_;
};

// A recovery file left by a session that is no longer running.
struct RecoveredProject {
    QString recoveryFile;
    Project project;
    QString filePath;  // the user's file the edits were made to; empty: untitled
    QString baseDir;   // where its relative paths start
    QString name;      // as the window titled it
    QDateTime savedAt;
};

// The recovery files in `folder` that no running studio holds, newest first.
// Files that cannot be read are left out (and left alone).
[[nodiscard]] std::vector<RecoveredProject> orphaned_recoveries(const QString& folder);
// Removes a recovery file once its project was restored or declined.
void discard_recovery(const RecoveredProject& recovered);

}  // namespace pipewright::gui
