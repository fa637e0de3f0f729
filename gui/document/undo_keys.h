#pragma once

// The keys of Undo and Redo, in one place: the Edit menu binds them, and
// the toolbar's spin boxes let them through to it.

#include <QKeyEvent>
#include <QKeySequence>
#include <QList>

namespace pipewright::gui {

// The platform's Redo keys, or Ctrl+Shift+Z and Ctrl+Y where it binds none
// (the offscreen and plain X11 platforms), as desktop editors use.
[[nodiscard]] QList<QKeySequence> redo_keys();

// Whether `key` is one of the Undo keys or redo_keys().
[[nodiscard]] bool is_undo_or_redo(const QKeyEvent& key);

}  // namespace pipewright::gui
