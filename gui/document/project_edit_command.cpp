#include "document/project_edit_command.h"

#include <QDateTime>

#include "document/project_document.h"

namespace pipewright::gui {

ProjectEditCommand::ProjectEditCommand(ProjectDocument* document, const QString& text,
                                       Project before, Project after, int mergeId)
    : QUndoCommand(text),
      document_(document),
      before_(std::move(before)),
      after_(std::move(after)),
      merge_id_(mergeId),
      made_ms_(QDateTime::currentMSecsSinceEpoch()) {}

void ProjectEditCommand::undo() {
    document_->replaceProject(before_);
}

void ProjectEditCommand::redo() {
    document_->replaceProject(after_);
}

bool ProjectEditCommand::mergeWith(const QUndoCommand* other) {
    const auto* next = dynamic_cast<const ProjectEditCommand*>(other);
    if (next == nullptr || next->merge_id_ != merge_id_ || merge_id_ < 0 ||
        next->made_ms_ - made_ms_ > kBurstMs) {
        return false;
    }
    after_ = next->after_;
    made_ms_ = next->made_ms_;
    return true;
}

}  // namespace pipewright::gui
