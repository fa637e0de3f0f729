#pragma once

#include <QObject>

#include "window/controller_context.h"

class QMenu;
class QMenuBar;

namespace pipewright {
struct Project;
}  // namespace pipewright

namespace pipewright::gui {

// The File menu and the project's files: new from an example, open, import,
// save, recent files, and the edits an earlier session left unsaved.
class FileController : public QObject {
    Q_OBJECT

  public:
    explicit FileController(const ControllerContext& context, QObject* parent = nullptr);

    // The File menu; returns its Export submenu, left empty for the export
    // controller to fill.
    QMenu* buildMenu(QMenuBar* bar);

    // Opens a project file without asking about unsaved changes; false (and
    // a message) when the file cannot be read at all.
    bool openFile(const QString& path);
    // Edits an earlier session autosaved (recovery_prompt.h), shown modified.
    void restoreRecovered(const Project& project, const QString& path, const QString& baseDir);
    bool saveTo(const QString& path);
    // To the project's file, or where the user says for an untitled one.
    bool save();
    bool saveAs();
    // Unsaved changes: asks to save them; false when the user cancels.
    bool maybeSave();

  signals:
    // Another project is on screen, to be simulated at once (before the
    // messages that say it opened).
    void projectOpened();

  private:
    void newFromExample(const QString& path);
    void openDialog();
    void importDialog();
    void addRecent(const QString& path);
    void fillRecentMenu();

    ControllerContext context_;
    QMenu* recent_menu_ = nullptr;
};

}  // namespace pipewright::gui
