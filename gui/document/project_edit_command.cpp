#include "document/project_edit_command.h"

#include "document/project_document.h"

namespace pipewright::gui {

ProjectEditCommand::ProjectEditCommand(ProjectDocument* document, const QString& text,
                                       Project before, Project after, int mergeId)
    : QUndoCommand(text),
      document_(document),
      before_(std::move(before)),
      after_(std::move(after)),
      merge_id_(mergeId) {}

void ProjectEditCommand::undo() {
    document_->replaceProject(before_);
}

void ProjectEditCommand::redo() {
    document_->replaceProject(after_);
}

bool ProjectEditCommand::mergeWith(const QUndoCommand* other) {
    const auto* next = dynamic_cast<const ProjectEditCommand*>(other);
    if (next == nullptr || next->merge_id_ != merge_id_ || merge_id_ < 0) {
        return false;
    }
    after_ = next->after_;
    return true;
}

}  // namespace pipewright::gui
