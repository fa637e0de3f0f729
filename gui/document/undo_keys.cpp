#include "document/undo_keys.h"

namespace pipewright::gui {

QList<QKeySequence> redo_keys() {
    const QList<QKeySequence> platform = QKeySequence::keyBindings(QKeySequence::Redo);
    if (!platform.isEmpty()) {
        return platform;
    }
    return {QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z), QKeySequence(Qt::CTRL | Qt::Key_Y)};
}

bool is_undo_or_redo(const QKeyEvent& key) {
    if (key.matches(QKeySequence::Undo)) {
        return true;
    }
    const QKeySequence pressed(key.keyCombination());
    for (const QKeySequence& redo : redo_keys()) {
        if (redo == pressed) {
            return true;
        }
    }
    return false;
}

}  // namespace pipewright::gui
