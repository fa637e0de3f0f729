#pragma once

#include <QUndoCommand>

#include "pipewright/core/project.h"

namespace pipewright::gui {

class ProjectDocument;

// Every edit stores the whole project before and after: projects are small
// (kilobytes), and a snapshot makes undo restore the exact project, whatever
// the edit touched (placement, model and topology at once for a rename).
// Edits of one continuous control merge into one step while they come in a
// burst (a spin box's arrows held, the wheel turned); a value typed after a
// pause is a step of its own, so undo walks back through each value the user
// entered (typing 8, 3 then 99 into Tensor undid straight back to 2).
class ProjectEditCommand : public QUndoCommand {
  public:
    ProjectEditCommand(ProjectDocument* document, const QString& text, Project before,
                       Project after, int mergeId);

    void undo() override;
    void redo() override;
    [[nodiscard]] int id() const override { return merge_id_; }
    bool mergeWith(const QUndoCommand* other) override;

    // Edits further apart than this are separate undo steps.
    static constexpr qint64 kBurstMs = 800;

  private:
    ProjectDocument* document_;
    Project before_;
    Project after_;
    int merge_id_;
    qint64 made_ms_;  // when the edit (or the last one merged into it) was made
};

// Merge ids of edits that come from continuous controls.
enum MergeId : int {
    kMergeMicrobatches = 1,
    kMergeBatchSize,
    kMergeReplicas,
    kMergeTensorParallel,
    kMergeExpertParallel,
    kMergeContextParallel,
    kMergeInspector,
    kMergeRecomputeBlocks,
};

}  // namespace pipewright::gui
