#pragma once
// At start, the studio offers back the unsaved edits an earlier session
// autosaved before it ended without saving (document_autosave.h).
#include <QString>

namespace pipewright::gui {

class MainWindow;

// Asks about the newest recovery file in `folder` that no running studio
// holds: Recover restores it into `window` (modified, saved only when the
// user saves), Discard deletes it, Later keeps it for the next start.
// Returns true when a project was restored.
bool offer_recovery(MainWindow& window, const QString& folder);

}  // namespace pipewright::gui
