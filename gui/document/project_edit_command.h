#pragma once

#include <QUndoCommand>

#include "pipewright/core/project.h"

namespace pipewright::gui {

class ProjectDocument;

// Every edit stores the whole project before and after: projects are small
// (kilobytes), and a snapshot makes undo restore the exact project, whatever
// the edit touched (placement, model and topology at once for a rename).
class ProjectEditCommand : public QUndoCommand {
  public:
    ProjectEditCommand(ProjectDocument* document, const QString& text, Project before,
                       Project after, int mergeId);

    void undo() override;
    void redo() override;
    [[nodiscard]] int id() const override { return merge_id_; }
    bool mergeWith(const QUndoCommand* other) override;

  private:
    ProjectDocument* document_;
    Project before_;
    Project after_;
    int merge_id_;
};

// Merge ids of edits that come from continuous controls.
enum MergeId : int {
    kMergeMicrobatches = 1,
    kMergeBatchSize,
    kMergeReplicas,
    kMergeTensorParallel,
    kMergeInspector,
};

}  // namespace pipewright::gui
