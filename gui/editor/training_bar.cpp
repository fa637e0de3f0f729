#include "editor/training_bar.h"

#include <QCheckBox>
#include <QComboBox>
#include <QKeyEvent>
#include <QLabel>
#include <QSpinBox>
#include <algorithm>

#include "document/project_document.h"
#include "document/project_edit_command.h"
#include "document/undo_keys.h"
#include "pipewright/core/context_parallel.h"
#include "pipewright/core/expert_parallel.h"
#include "pipewright/core/recomputation_units.h"
#include "pipewright/core/schedule_generators.h"
#include "pipewright/core/transformer_dims.h"

namespace pipewright::gui {

namespace {

QLabel* caption(const QString& text) {
    auto* label = new QLabel(text);
    label->setContentsMargins(8, 0, 4, 0);
    return label;
}

}  // namespace

TrainingBar::TrainingBar(ProjectDocument* document, QWidget* parent)
    : QToolBar(tr("Training"), parent), document_(document) {
    setObjectName(QStringLiteral("trainingBar"));

    schedule_ = new QComboBox(this);
    for (const ScheduleInfo& info : schedule_catalog()) {
        schedule_->addItem(QString::fromStdString(info.name), QString::fromStdString(info.name));
        schedule_->setItemData(schedule_->count() - 1,
                               QStringLiteral("<b>%1</b><br>Constraints: %2")
                                   .arg(QString::fromStdString(info.title).toHtmlEscaped(),
                                        QString::fromStdString(info.constraints).toHtmlEscaped()),
                               Qt::ToolTipRole);
    }
    batch_ = new QSpinBox(this);
    batch_->setRange(1, 1 << 24);
    batch_->setKeyboardTracking(false);
    batch_->setToolTip(tr("Samples per training iteration (global batch)"));
    parallelism_ = new QToolBar(tr("Parallelism"), parent);
    parallelism_->setObjectName(QStringLiteral("parallelismBar"));
    replicas_ = new QSpinBox(parallelism_);
    replicas_->setObjectName(QStringLiteral("replicas"));
    replicas_->setRange(1, 1 << 16);
    replicas_->setKeyboardTracking(false);
    replicas_->setToolTip(
        tr("Data parallelism: copies of the pipeline, each on its own devices (the next ones in "
           "the topology, unless the file lists them) and its share of the batch; each stage "
           "averages its gradients with its copies after the backward"));
    zero_ = new QComboBox(parallelism_);
    zero_->setObjectName(QStringLiteral("zeroStage"));
    zero_->addItem(tr("ZeRO off"));
    zero_->addItem(tr("ZeRO-1"));
    zero_->addItem(tr("ZeRO-2"));
    zero_->addItem(tr("ZeRO-3"));
    zero_->setItemData(0,
                       tr("Every replica keeps all weights, gradients and optimizer state; "
                          "gradients are all-reduced"),
                       Qt::ToolTipRole);
    zero_->setItemData(1,
                       tr("The optimizer state (and fp32 master weights) is split across the "
                          "replicas"),
                       Qt::ToolTipRole);
    zero_->setItemData(2,
                       tr("The gradients are split too, once reduced: they add up whole over "
                          "the micro-batches until the reduce-scatter after the last backward"),
                       Qt::ToolTipRole);
    zero_->setItemData(3,
                       tr("FSDP: the weights are split too, and each stage gathers them "
                          "before it computes"),
                       Qt::ToolTipRole);
    tensor_ = new QSpinBox(parallelism_);
    tensor_->setObjectName(QStringLiteral("tensorParallel"));
    tensor_->setRange(1, kMaxTensorParallel);
    tensor_->setKeyboardTracking(false);
    tensor_->setToolTip(
        tr("Tensor parallelism: each stage runs on its device and the ones after it in its "
           "container, each holding a slice of the stage's matrices (Megatron-LM); the group "
           "all-reduces twice per transformer block in the forward and twice in the backward"));
    sequence_ = new QCheckBox(tr("Sequence parallel"), parallelism_);
    sequence_->setObjectName(QStringLiteral("sequenceParallel"));
    sequence_->setToolTip(
        tr("Split the layer norms and dropouts along the sequence too: less activation memory "
           "for the same traffic"));
    experts_ = new QSpinBox(parallelism_);
    experts_->setObjectName(QStringLiteral("expertParallel"));
    experts_->setRange(1, kMaxExpertParallel);
    experts_->setKeyboardTracking(false);
    experts_->setToolTip(
        tr("Expert parallelism: each mixture-of-experts block's routed experts are split over "
           "this many of the replicas, each holding its share; every block dispatches its "
           "tokens to their experts and combines them with an all-to-all, forward and "
           "backward. It must divide the replicas and each block's experts"));
    context_ = new QSpinBox(parallelism_);
    context_->setObjectName(QStringLiteral("contextParallel"));
    context_->setRange(1, kMaxContextParallel);
    context_->setKeyboardTracking(false);
    context_->setToolTip(
        tr("Context parallelism: every sequence is split over this many of the replicas, each "
           "running its share of the tokens and keeping its share of the activations; "
           "attention exchanges keys and values between them. It must divide the replicas, "
           "and twice it the sequence length"));
    microbatches_ = new QSpinBox(this);
    microbatches_->setRange(1, 4096);
    microbatches_->setKeyboardTracking(false);
    microbatches_->setToolTip(microbatchesTip());
    dtype_ = new QComboBox(this);
    dtype_->setObjectName(QStringLiteral("dtype"));
    for (DType t : {DType::float32, DType::bfloat16, DType::float16}) {
        dtype_->addItem(QString::fromStdString(std::string(to_string(t))));
    }
    dtype_->addItem(QStringLiteral("float8"));
    dtype_->setToolTip(
        tr("Compute precision: decides FLOP/s, activation and weight bytes. float8: the "
           "blocks' linear GEMMs on FP8 tensor cores, everything else in bfloat16 (devices "
           "with FP8 only)"));
    optimizer_ = new QComboBox(this);
    for (OptimizerKind k : {OptimizerKind::sgd, OptimizerKind::adam, OptimizerKind::adamw}) {
        optimizer_->addItem(QString::fromStdString(std::string(to_string(k))));
    }
    optimizer_->setToolTip(tr("Optimizer: its state per parameter counts towards memory"));
    recompute_ = new QComboBox(this);
    recompute_->setObjectName(QStringLiteral("recompute"));
    // Worded to stand without a caption: the bar has no room for one at 900 px.
    recompute_->addItem(tr("no recompute"), static_cast<int>(Recompute::none));
    recompute_->addItem(tr("selective"), static_cast<int>(Recompute::selective));
    recompute_->addItem(tr("recompute all"), static_cast<int>(Recompute::full));
    recompute_->setToolTip(
        tr("Activation recomputation (checkpointing). No recompute: keep every activation. "
           "Selective: recompute the attention core, whose scores grow with the square of the "
           "sequence (much memory for little compute). Recompute all: keep only each block's "
           "input (and each run of layers between blocks) and run the forward again during "
           "backward, one block at a time (least memory, one more forward)"));
    // On the second row, first, beside the recomputation box when the bar
    // is one row: the first keeps to one row at 900 px.
    recompute_blocks_ = new QSpinBox(parallelism_);
    recompute_blocks_->setObjectName(QStringLiteral("recomputeBlocks"));
    recompute_blocks_->setRange(0, 0);  // up to the model's blocks (refresh)
    recompute_blocks_->setSpecialValueText(tr("every block"));
    recompute_blocks_->setPrefix(tr("first "));
    recompute_blocks_->setSuffix(tr(" blocks"));
    recompute_blocks_->setToolTip(
        tr("How many blocks at the start of each stage recompute their forward; the stage's "
           "other layers keep their activations (Megatron-LM's --recompute-method block "
           "--recompute-num-layers). Fewer blocks: less recomputed, more memory"));
    attention_ = new QComboBox(parallelism_);
    attention_->setObjectName(QStringLiteral("attentionKernel"));
    // Worded to stand without a caption, as the recomputation's, and short
    // enough for the second row at 900 px.
    attention_->addItem(tr("FlashAttention-2"), static_cast<int>(AttentionKernel::flash2));
    attention_->addItem(tr("cuDNN attention"), static_cast<int>(AttentionKernel::cudnn));
    attention_->addItem(tr("FlashAttention-3"), static_cast<int>(AttentionKernel::flash3));
    attention_->setToolTip(
        tr("The fused attention kernel the flash-attention blocks run: the implementations "
           "differ by up to 1.8x on one GPU (on an H100 FlashAttention-2 reaches about a third "
           "of the peak, cuDNN's about half, FlashAttention-3 three fifths). FlashAttention-2 "
           "is PyTorch's scaled_dot_product_attention and flash-attn 2; TransformerEngine runs "
           "cuDNN's on Hopper. A device without a measured rate for the kernel is refused"));

    addWidget(caption(tr("Schedule")));
    addWidget(schedule_);
    addWidget(caption(tr("Batch")));
    addWidget(batch_);
    addWidget(caption(tr("Micro-batches")));
    addWidget(microbatches_);
    // Without a caption: "float32" and "bfloat16" say what they are, and the
    // bar has no room to spare at 900 px once the micro-batch size shows.
    addWidget(dtype_);
    addWidget(caption(tr("Optimizer")));
    addWidget(optimizer_);
    addWidget(recompute_);
    recompute_blocks_action_ = parallelism_->addWidget(recompute_blocks_);
    parallelism_->addWidget(caption(tr("Replicas")));
    parallelism_->addWidget(replicas_);
    parallelism_->addWidget(zero_);
    parallelism_->addWidget(caption(tr("Tensor")));
    parallelism_->addWidget(tensor_);
    parallelism_->addWidget(sequence_);
    experts_caption_action_ = parallelism_->addWidget(caption(tr("Experts")));
    experts_action_ = parallelism_->addWidget(experts_);
    context_caption_action_ = parallelism_->addWidget(caption(tr("Context")));
    context_action_ = parallelism_->addWidget(context_);
    // On the second row, beside the other settings only a language model
    // shows: the first keeps to one row at 900 px.
    attention_action_ = parallelism_->addWidget(attention_);

    connect(schedule_, &QComboBox::currentIndexChanged, this, [this](int i) {
        const QString name = schedule_->itemData(i).toString();
        if (name == QLatin1String("csv")) {
            return;  // set by the project file, not offered as a choice
        }
        schedule_->setToolTip(schedule_->itemData(i, Qt::ToolTipRole).toString());
        apply(tr("Change schedule"), -1, [this, name](Training& t) {
            const bool was_naive = schedule_kind(t.schedule.name) == ScheduleKind::naive;
            const bool naive = schedule_kind(name.toStdString()) == ScheduleKind::naive;
            t.schedule = ScheduleChoice{name.toStdString(), ""};
            if (naive && !was_naive) {
                // Naive model parallelism runs the whole batch at once; the
                // pipeline's count comes back when a pipelined schedule does.
                pipelined_microbatches_ = t.resolved_microbatches();
                t.microbatches = 1;
                t.microbatch_size.reset();
            } else if (was_naive && !naive && t.resolved_microbatches() == 1 &&
                       pipelined_microbatches_ > 1) {
                t.microbatches = pipelined_microbatches_;
                t.microbatch_size.reset();
            }
        });
    });
    connect(batch_, &QSpinBox::valueChanged, this, [this](int v) {
        applyToProject(tr("Change batch size"), kMergeBatchSize,
                       [v](Project& p) { p.training.batch_size = v; });
    });
    connect(replicas_, &QSpinBox::valueChanged, this, [this](int v) {
        applyToProject(tr("Change replicas"), kMergeReplicas, [v](Project& p) {
            DataParallel& dp = p.data_parallel;
            dp.size = v;
            // Devices listed for another count no longer fit: the default
            // layout takes over.
            if (!dp.replicas.empty() && dp.replicas.size() + 1 != static_cast<std::size_t>(v)) {
                dp.replicas.clear();
            }
        });
    });
    connect(zero_, &QComboBox::currentIndexChanged, this, [this](int i) {
        applyToProject(tr("Change ZeRO stage"), -1,
                       [i](Project& p) { p.data_parallel.zero_stage = std::max(0, i); });
    });
    connect(tensor_, &QSpinBox::valueChanged, this, [this](int v) {
        applyToProject(tr("Change tensor parallelism"), kMergeTensorParallel,
                       [v](Project& p) { p.tensor_parallel.size = v; });
    });
    connect(experts_, &QSpinBox::valueChanged, this, [this](int v) {
        applyToProject(tr("Change expert parallelism"), kMergeExpertParallel,
                       [v](Project& p) { p.expert_parallel.size = v; });
    });
    connect(context_, &QSpinBox::valueChanged, this, [this](int v) {
        applyToProject(tr("Change context parallelism"), kMergeContextParallel,
                       [v](Project& p) { p.context_parallel.size = v; });
    });
    connect(sequence_, &QCheckBox::toggled, this, [this](bool on) {
        applyToProject(tr("Toggle sequence parallelism"), -1,
                       [on](Project& p) { p.tensor_parallel.sequence_parallel = on; });
    });
    connect(microbatches_, &QSpinBox::valueChanged, this, [this](int v) {
        apply(tr("Change micro-batches"), kMergeMicrobatches, [v](Training& t) {
            t.microbatches = v;
            t.microbatch_size.reset();
        });
    });
    connect(dtype_, &QComboBox::currentTextChanged, this, [this](const QString& text) {
        apply(tr("Change dtype"), -1, [text](Training& t) {
            t.float8 = text == QStringLiteral("float8");
            t.dtype = t.float8 ? DType::bfloat16
                               : parse_dtype(text.toStdString()).value_or(DType::float32);
        });
    });
    connect(optimizer_, &QComboBox::currentTextChanged, this, [this](const QString& text) {
        apply(tr("Change optimizer"), -1, [text](Training& t) {
            t.optimizer.type = parse_optimizer(text.toStdString()).value_or(OptimizerKind::sgd);
        });
    });
    connect(recompute_, &QComboBox::currentIndexChanged, this, [this](int index) {
        const auto r = static_cast<Recompute>(recompute_->itemData(index).toInt());
        apply(tr("Change recomputation"), -1, [r](Training& t) {
            t.recompute = r;
            // Narrows full recomputation only (the analysis refuses it otherwise).
            if (r != Recompute::full) {
                t.recompute_blocks.reset();
            }
        });
    });
    connect(recompute_blocks_, &QSpinBox::valueChanged, this, [this](int blocks) {
        apply(tr("Change recomputed blocks"), kMergeRecomputeBlocks, [blocks](Training& t) {
            t.recompute_blocks = blocks > 0 ? std::optional<int>(blocks) : std::nullopt;
        });
    });
    connect(attention_, &QComboBox::currentIndexChanged, this, [this](int index) {
        const auto k = static_cast<AttentionKernel>(attention_->itemData(index).toInt());
        apply(tr("Change attention kernel"), -1, [k](Training& t) { t.attention_kernel = k; });
    });
    for (QSpinBox* box :
         {batch_, microbatches_, replicas_, tensor_, experts_, context_, recompute_blocks_}) {
        box->installEventFilter(this);
    }
    connect(document_, &ProjectDocument::projectChanged, this, &TrainingBar::refresh);
    refresh();
}

QString TrainingBar::microbatchesTip() const {
    return tr(
        "The batch is split into this many micro-batches that flow through the pipeline; "
        "more fill the bubbles but make each kernel smaller");
}

bool TrainingBar::eventFilter(QObject* watched, QEvent* event) {
    if (event->type() == QEvent::ShortcutOverride) {
        if (is_undo_or_redo(*static_cast<QKeyEvent*>(event))) {
            // Not taken by the line edit: the window's Undo and Redo run.
            event->ignore();
            return true;
        }
    }
    return QToolBar::eventFilter(watched, event);
}

void TrainingBar::apply(const QString& what, int mergeId,
                        const std::function<void(Training&)>& change) {
    if (refreshing_) {
        return;
    }
    Project edited = document_->project();
    change(edited.training);
    document_->edit(what, edited, mergeId);
}

void TrainingBar::applyToProject(const QString& what, int mergeId,
                                 const std::function<void(Project&)>& change) {
    if (refreshing_) {
        return;
    }
    const Project before = document_->project();
    Project edited = before;
    change(edited);
    document_->edit(what, edited, mergeId);
    noteKnockOn(before, edited);
}

namespace {

// The micro-batches per replica the project runs: its count, or its
// micro-batch size's share of each replica's batch.
int shown_microbatches(const Project& p) {
    const Training& t = p.training;
    if (t.microbatches) {
        return *t.microbatches;
    }
    if (t.microbatch_size && *t.microbatch_size > 0) {
        return std::max(1, t.batch_size /
                               batch_shares(p.data_parallel.size, p.context_parallel.size) /
                               *t.microbatch_size);
    }
    return 1;
}

}  // namespace

void TrainingBar::noteKnockOn(const Project& before, const Project& after) {
    const auto& size = after.training.microbatch_size;
    if (after.training.microbatches || !size || *size <= 0) {
        return;
    }
    const int was = shown_microbatches(before);
    const int now = shown_microbatches(after);
    if (was != now) {
        emit knockOn(tr("Micro-batches %1 → %2: the project fixes micro-batches of %n "
                        "sample(s) (training.microbatch_size), so the count follows the batch. "
                        "Set Micro-batches to fix the count instead.",
                        nullptr, *size)
                         .arg(was)
                         .arg(now));
    }
}

void TrainingBar::refresh() {
    refreshing_ = true;
    const Training& t = document_->project().training;
    const int index = schedule_->findData(QString::fromStdString(t.schedule.name));
    if (t.schedule.from_csv()) {
        if (schedule_->findData(QStringLiteral("csv")) < 0) {
            schedule_->addItem(tr("CSV file"), QStringLiteral("csv"));
        }
        schedule_->setCurrentIndex(schedule_->findData(QStringLiteral("csv")));
    } else if (index >= 0) {
        schedule_->setCurrentIndex(index);
    }
    schedule_->setToolTip(schedule_->currentData(Qt::ToolTipRole).toString());
    batch_->setValue(t.batch_size);
    const DataParallel& dp = document_->project().data_parallel;
    replicas_->setValue(dp.size);
    zero_->setCurrentIndex(std::clamp(dp.zero_stage, 0, kMaxZeroStage));
    zero_->setEnabled(dp.size > 1);
    zero_->setToolTip(dp.size > 1 ? zero_->currentData(Qt::ToolTipRole).toString()
                                  : tr("With one replica there is nothing to shard"));
    const TensorParallel& tp = document_->project().tensor_parallel;
    tensor_->setValue(tp.size);
    sequence_->setChecked(tp.sequence_parallel);
    sequence_->setEnabled(tp.size > 1);
    experts_->setValue(document_->project().expert_parallel.size);
    const auto& layers = document_->project().model.layers;
    const bool moe = std::any_of(layers.begin(), layers.end(),
                                 [](const LayerSpec& l) { return has_experts(l); });
    experts_caption_action_->setVisible(moe || document_->project().expert_parallel.size > 1);
    experts_action_->setVisible(moe || document_->project().expert_parallel.size > 1);
    const int context = document_->project().context_parallel.size;
    context_->setValue(context);
    // Offered where it is used: attention over long sequences (the bar
    // keeps to one row on a 1600-pixel screen for the others).
    constexpr std::int64_t kLongSequence = 8192;
    const Shape& input = document_->project().model.input.shape;
    const bool long_attention = !input.empty() && input.front() >= kLongSequence &&
                                std::any_of(layers.begin(), layers.end(), [](const LayerSpec& l) {
                                    return l.type == "transformer_block";
                                });
    context_caption_action_->setVisible(long_attention || context > 1);
    context_action_->setVisible(long_attention || context > 1);
    // Each replica splits its share of the batch: a micro-batch size in the
    // file gives a count per replica.
    microbatches_->setValue(shown_microbatches(document_->project()));
    // Under naive model parallelism the count is 1 by definition: say so
    // instead of offering a box whose other values the schedule refuses.
    const bool naive =
        !t.schedule.from_csv() && schedule_kind(t.schedule.name) == ScheduleKind::naive;
    // A value the file gave but could not be used shows as "—", not as the
    // default that stands in for it (the Problems list says what is wrong).
    const Diagnostics& refused = document_->loadDiagnostics();
    const bool bad_batch = refused.mentions("training.batch_size");
    const bool bad_count =
        refused.mentions("training.microbatches") || refused.mentions("training.microbatch_size");
    batch_->setSpecialValueText(bad_batch ? QStringLiteral("—") : QString());
    batch_->setToolTip(bad_batch ? tr("The file's batch_size cannot be used (see Problems): "
                                      "set a batch here")
                                 : tr("Samples per training iteration (global batch)"));
    microbatches_->setEnabled(!naive);
    microbatches_->setSpecialValueText(naive       ? tr("1 (whole batch)")
                                       : bad_count ? QStringLiteral("—")
                                                   : QString());
    // Each micro-batch's samples, which the simulation runs: shown, so that
    // a count that does not divide the batch (or a size the file fixes) is
    // never a hidden setting.
    const int per_replica =
        t.batch_size / batch_shares(dp.size, document_->project().context_parallel.size);
    const int count = microbatches_->value();
    const bool divides = count > 0 && per_replica % count == 0;
    const QString samples = divides ? QString::number(per_replica / count) : QStringLiteral("?");
    microbatches_->setSuffix(naive || bad_count || bad_batch ? QString()
                                                             : tr(" of %1").arg(samples));
    const bool fixed_size = !t.microbatches && t.microbatch_size && *t.microbatch_size > 0;
    microbatches_->setToolTip(
        naive ? tr("Naive model parallelism sends the whole batch through the devices at once. "
                   "Pick a pipelined schedule (GPipe, 1F1B, …) to split it into micro-batches; "
                   "the count you had comes back.")
              : microbatchesTip() + QStringLiteral("\n\n") +
                    (!divides ? tr("The batch of %n sample(s) per replica does not split into "
                                   "%1 equal micro-batches.",
                                   nullptr, per_replica)
                                    .arg(count)
                     : fixed_size ? tr("Each micro-batch holds %n sample(s), fixed by the project "
                                       "(training.microbatch_size): the count follows the batch.",
                                       nullptr, *t.microbatch_size)
                                  : tr("Each micro-batch holds %n sample(s): the batch per replica "
                                       "divided by the count.",
                                       nullptr, per_replica / count)));
    dtype_->setCurrentText(QString::fromStdString(std::string(t.precision_name())));
    optimizer_->setCurrentText(QString::fromStdString(std::string(to_string(t.optimizer.type))));
    recompute_->setCurrentIndex(recompute_->findData(static_cast<int>(t.recompute)));
    const auto blocks =
        static_cast<int>(std::count_if(layers.begin(), layers.end(), [](const LayerSpec& l) {
            return checkpointed_alone(l.type);
        }));
    recompute_blocks_->setRange(0, std::max(blocks, t.recompute_blocks.value_or(0)));
    recompute_blocks_->setValue(t.recompute_blocks.value_or(0));
    recompute_blocks_->setSuffix(t.recompute_blocks == 1 ? tr(" block") : tr(" blocks"));
    recompute_blocks_action_->setVisible(t.full_recompute() &&
                                         (blocks > 0 || t.recompute_blocks.has_value()));
    attention_->setCurrentIndex(attention_->findData(static_cast<int>(t.attention_kernel)));
    attention_action_->setVisible(any_flash_attention(layers) ||
                                  t.attention_kernel != AttentionKernel::flash2);
    refreshing_ = false;
}

}  // namespace pipewright::gui
