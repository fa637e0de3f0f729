#pragma once

#include <QToolBar>
#include <functional>

#include "pipewright/core/project.h"

class QAction;
class QCheckBox;
class QComboBox;
class QSpinBox;

namespace pipewright::gui {

class ProjectDocument;

// The training settings that change the pipeline most: schedule, batch,
// micro-batches, compute dtype and optimizer; and in parallelismBar(), the
// data-parallel replicas and ZeRO, and the tensor-parallel group size.
class TrainingBar : public QToolBar {
    Q_OBJECT

  public:
    explicit TrainingBar(ProjectDocument* document, QWidget* parent = nullptr);

    [[nodiscard]] QComboBox* scheduleBox() const { return schedule_; }
    [[nodiscard]] QSpinBox* microbatchesBox() const { return microbatches_; }
    [[nodiscard]] QSpinBox* batchSizeBox() const { return batch_; }
    // Replicas and ZeRO, in a toolbar of their own that the window places
    // (and moves to a second row when it is narrow).
    [[nodiscard]] QToolBar* parallelismBar() const { return parallelism_; }
    [[nodiscard]] QSpinBox* replicasBox() const { return replicas_; }
    [[nodiscard]] QComboBox* zeroBox() const { return zero_; }
    // Tensor parallelism: devices of each stage's group, and sequence parallelism.
    [[nodiscard]] QSpinBox* tensorParallelBox() const { return tensor_; }
    [[nodiscard]] QCheckBox* sequenceParallelBox() const { return sequence_; }
    // Expert parallelism: replicas each block's experts are split over;
    // shown only for a model with a mixture of experts.
    [[nodiscard]] QSpinBox* expertParallelBox() const { return experts_; }
    // Context parallelism: replicas each sequence is split over; shown only
    // for a model with attention over sequences of 8,192 tokens or more, or
    // a project that already splits them.
    [[nodiscard]] QSpinBox* contextParallelBox() const { return context_; }
    // The fused attention kernel of flash-attention blocks; shown only for
    // a model with such blocks, or a project that names another kernel.
    [[nodiscard]] QComboBox* attentionKernelBox() const { return attention_; }
    // Under "recompute all": how many blocks at the start of each stage
    // recompute (0: every one; training.recompute_blocks). Shown only then,
    // for a model with blocks.
    [[nodiscard]] QSpinBox* recomputeBlocksBox() const { return recompute_blocks_; }

  signals:
    // An edit here changed a setting the user did not touch (the file fixes
    // the micro-batch size, so a new batch changes the count): in words,
    // for the status bar.
    void knockOn(const QString& message);

  protected:
    // Ctrl+Z and Ctrl+Shift+Z in a spin box undo and redo the project's
    // edits: the spin box's line edit would otherwise take them for its own
    // text, and the user, who is there after typing a value, gets nothing.
    bool eventFilter(QObject* watched, QEvent* event) override;

  private:
    void refresh();
    // Says when the edit from `before` to `after` changed the micro-batch
    // count through the file's micro-batch size.
    void noteKnockOn(const Project& before, const Project& after);
    [[nodiscard]] QString microbatchesTip() const;
    void apply(const QString& what, int mergeId, const std::function<void(Training&)>& change);
    void applyToProject(const QString& what, int mergeId,
                        const std::function<void(Project&)>& change);

    ProjectDocument* document_;
    QComboBox* schedule_ = nullptr;
    QSpinBox* batch_ = nullptr;
    QToolBar* parallelism_ = nullptr;
    QSpinBox* replicas_ = nullptr;
    QComboBox* zero_ = nullptr;
    QSpinBox* tensor_ = nullptr;
    QCheckBox* sequence_ = nullptr;
    QSpinBox* experts_ = nullptr;
    // The toolbar shows and hides its widgets through their actions.
    QAction* experts_caption_action_ = nullptr;
    QAction* experts_action_ = nullptr;
    QSpinBox* context_ = nullptr;
    QAction* context_caption_action_ = nullptr;
    QAction* context_action_ = nullptr;
    QSpinBox* microbatches_ = nullptr;
    QComboBox* dtype_ = nullptr;
    QComboBox* optimizer_ = nullptr;
    QComboBox* recompute_ = nullptr;
    QSpinBox* recompute_blocks_ = nullptr;
    QAction* recompute_blocks_action_ = nullptr;
    QComboBox* attention_ = nullptr;
    QAction* attention_action_ = nullptr;
    bool refreshing_ = false;
    // The micro-batches in use before switching to naive, restored after.
    int pipelined_microbatches_ = 0;
};

}  // namespace pipewright::gui
