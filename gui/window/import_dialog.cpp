#include "window/import_dialog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>

#include "pipewright/core/device_catalog.h"
#include "pipewright/core/quantity_format.h"
#include "window/file_dialogs.h"

namespace pipewright::gui {

ImportDialog::ImportDialog(QString cli, QString start_folder, QWidget* parent)
    : QDialog(parent), cli_(std::move(cli)), start_folder_(std::move(start_folder)) {
    setWindowTitle(tr("Import"));
    auto* form = new QFormLayout;
    QPushButton* browse = addModuleFields(form);
    addDeviceFields(form);
    addTrainingFields(form);
    addPreview();
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Cancel);
    QPushButton* preview_button = addButtons(buttons);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(table_, 1);
    layout->addWidget(status_);
    layout->addWidget(buttons);
    // Module, then its shape (the widgets are the dialog's only now): the
    // Browse button comes after the project file in the tab order.
    setTabOrder(module_, shape_);
    setTabOrder(out_, browse);
    import_->setDefault(false);
    preview_button->setDefault(true);  // Enter previews; Import is a click
    resize(720, 600);

    process_ = new QProcess(this);
    connect(process_, &QProcess::finished, this, &ImportDialog::finished);
    moduleKindChanged();
}

QPushButton* ImportDialog::addModuleFields(QFormLayout* form) {
    module_ = new QLineEdit;
    module_->setObjectName(QStringLiteral("importModule"));
    module_->setPlaceholderText(
        tr("model.pt (torch.jit.script or trace), or a Hugging Face config.json"));
    auto* browse = new QPushButton(tr("Browse…"));
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString path = open_file_name(
            this, tr("TorchScript module or model config"), start_folder_,
            tr("TorchScript modules (*.pt *.pth *.ts);;Hugging Face configs (*.json);;All "
               "files (*)"));
        if (!path.isEmpty()) {
            module_->setText(path);
        }
    });
    auto* module_row = new QHBoxLayout;
    module_row->addWidget(module_, 1);
    module_row->addWidget(browse);
    form->addRow(tr("Module"), module_row);
    shape_ = new QLineEdit;
    shape_->setObjectName(QStringLiteral("importShape"));
    shape_->setPlaceholderText(tr("one sample, without the batch: 3,224,224"));
    form->addRow(tr("Input shape"), shape_);
    seq_len_ = new QSpinBox;
    seq_len_->setObjectName(QStringLiteral("importSeqLen"));
    seq_len_->setRange(0, 1 << 24);
    seq_len_->setSpecialValueText(tr("from the config (at most 4,096)"));
    seq_len_->setToolTip(tr("Tokens per sequence of a config's model"));
    form->addRow(tr("Sequence"), seq_len_);
    dtype_ = new QComboBox;
    dtype_->addItem(tr("float32"), QStringLiteral("float32"));
    dtype_->addItem(tr("int64 (token ids)"), QStringLiteral("int64"));
    form->addRow(tr("Input type"), dtype_);
    loss_ = new QComboBox;
    loss_->addItem(tr("cross_entropy"), QStringLiteral("cross_entropy"));
    loss_->addItem(tr("mse"), QStringLiteral("mse"));
    form->addRow(tr("Loss"), loss_);
    depth_ = new QSpinBox;
    depth_->setObjectName(QStringLiteral("importDepth"));
    depth_->setRange(0, 16);
    depth_->setToolTip(
        tr("Levels to split below the module's children: a child whose forward "
           "calls its own children in sequence is split into them"));
    form->addRow(tr("Depth"), depth_);
    return browse;
}

void ImportDialog::addDeviceFields(QFormLayout* form) {
    devices_ = new QSpinBox;
    devices_->setObjectName(QStringLiteral("importDevices"));
    devices_->setRange(1, 4096);
    devices_->setToolTip(tr("CPU devices to place the layers on, balanced by their work"));
    spec_ = new QComboBox;
    spec_->setObjectName(QStringLiteral("importDeviceSpec"));
    for (const auto& name : DeviceCatalog::builtin().names()) {
        spec_->addItem(QString::fromStdString(name));
    }
    spec_->setCurrentText(QStringLiteral("cpu"));
    spec_->setToolTip(
        tr("What the devices are: the CPU workers of this machine, or a GPU of the "
           "catalog to plan for it"));
    nodes_ = new QSpinBox;
    nodes_->setObjectName(QStringLiteral("importNodes"));
    nodes_->setRange(1, 4096);
    nodes_->setSuffix(tr(" node(s) of"));
    nodes_->setToolTip(tr("Nodes of a config's cluster, each with the devices after it"));
    auto* devices_row = new QHBoxLayout;
    devices_row->addWidget(nodes_);
    devices_row->addWidget(devices_);
    devices_row->addWidget(new QLabel(tr("×")));
    devices_row->addWidget(spec_, 1);
    form->addRow(tr("Devices"), devices_row);
}

void ImportDialog::addTrainingFields(QFormLayout* form) {
    batch_ = new QSpinBox;
    batch_->setRange(1, 1 << 20);
    batch_->setValue(32);
    microbatches_ = new QSpinBox;
    microbatches_->setRange(0, 1 << 20);
    microbatches_->setSpecialValueText(tr("auto"));
    microbatches_->setToolTip(
        tr("Micro-batches per iteration; auto: twice the stages, dividing "
           "the batch"));
    auto* batch_row = new QHBoxLayout;
    batch_row->addWidget(batch_);
    batch_row->addWidget(new QLabel(tr("in micro-batches")));
    batch_row->addWidget(microbatches_);
    form->addRow(tr("Batch size"), batch_row);
    vocabulary_ = new QSpinBox;
    vocabulary_->setRange(0, 2147483647);
    vocabulary_->setSpecialValueText(tr("from the model's first embedding"));
    vocabulary_->setToolTip(tr("Token ids are below this (int64 input)"));
    vocabulary_->setEnabled(false);
    form->addRow(tr("Vocabulary"), vocabulary_);
    connect(dtype_, &QComboBox::currentIndexChanged, this, [this] {
        vocabulary_->setEnabled(dtype_->currentData().toString() == QStringLiteral("int64"));
    });
    fresh_ = new QCheckBox(tr("Fresh weights from the project's seed"));
    fresh_->setObjectName(QStringLiteral("importFreshWeights"));
    fresh_->setToolTip(
        tr("Train from PyTorch's default initialisation of each layer instead of "
           "the module's own weights"));
    form->addRow(tr("Weights"), fresh_);
    out_ = new QLineEdit;
    out_->setObjectName(QStringLiteral("importOut"));
    form->addRow(tr("Project file"), out_);
    connect(module_, &QLineEdit::textChanged, this, [this](const QString& text) {
        out_->setText(suggested_project_file(text));
        moduleKindChanged();
    });
}

void ImportDialog::addPreview() {
    table_ = new QTableWidget(0, 6);
    table_->setObjectName(QStringLiteral("importPreview"));
    table_->setHorizontalHeaderLabels({tr("Layer"), tr("Module"), tr("Output"), tr("Parameters"),
                                       tr("FLOP / sample"), tr("Stage")});
    table_->horizontalHeader()->setSectionResizeMode(1, QHeaderView::Stretch);
    table_->verticalHeader()->hide();
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    status_ = new QLabel(
        tr("Choose a module and its input shape, or a model's config.json, then Preview."));
    status_->setObjectName(QStringLiteral("importStatus"));
    status_->setWordWrap(true);
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
}

QPushButton* ImportDialog::addButtons(QDialogButtonBox* buttons) {
    auto* preview_button = buttons->addButton(tr("Preview"), QDialogButtonBox::ActionRole);
    preview_button->setObjectName(QStringLiteral("importPreviewButton"));
    import_ = buttons->addButton(tr("Import"), QDialogButtonBox::AcceptRole);
    import_->setObjectName(QStringLiteral("importButton"));
    connect(preview_button, &QPushButton::clicked, this, &ImportDialog::preview);
    connect(import_, &QPushButton::clicked, this, &ImportDialog::runImport);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    return preview_button;
}

void ImportDialog::moduleKindChanged() {
    const bool config = request().is_config();
    for (QWidget* module_only :
         std::initializer_list<QWidget*>{shape_, dtype_, loss_, depth_, fresh_}) {
        module_only->setEnabled(!config);
    }
    vocabulary_->setEnabled(!config && dtype_->currentData().toString() == QStringLiteral("int64"));
    seq_len_->setEnabled(config);
    nodes_->setEnabled(config);
    table_->setVisible(!config);  // a config has no layers to measure
    // A config is planned for GPUs; a module is measured on this machine's CPUs.
    if (config && spec_->currentText() == QStringLiteral("cpu")) {
        spec_->setCurrentText(QStringLiteral("H100-SXM"));
    }
}

QString ImportDialog::projectFile() const {
    return out_->text();
}

ImportRequest ImportDialog::request() const {
    ImportRequest r;
    r.cli = cli_;
    r.module = module_->text().trimmed();
    r.input_shape = shape_->text().trimmed();
    r.input_dtype = dtype_->currentData().toString();
    r.loss = loss_->currentData().toString();
    r.depth = depth_->value();
    r.devices = devices_->value();
    r.device_spec = spec_->currentText();
    r.batch_size = batch_->value();
    r.microbatches = microbatches_->value();
    r.vocabulary = vocabulary_->value();
    r.fresh_weights = fresh_->isChecked();
    r.nodes = nodes_->value();
    r.seq_len = seq_len_->value();
    r.out = out_->text().trimmed();
    return r;
}

void ImportDialog::preview() {
    start(true);
}

void ImportDialog::runImport() {
    start(false);
}

void ImportDialog::start(bool preview) {
    const ImportRequest r = request();
    if (r.cli.isEmpty()) {
        showError(tr("The pipewright command line was not found; it imports the module."));
        return;
    }
    QStringList missing;
    if (r.module.isEmpty()) {
        missing << tr("the module");
    }
    if (!r.is_config() && r.input_shape.isEmpty()) {
        missing << tr("its input shape");
    }
    if (!preview && r.out.isEmpty()) {
        missing << tr("the project file");
    }
    if (!missing.isEmpty()) {
        showError(tr("Give %1.").arg(missing.join(tr(" and "))));
        return;
    }
    if (process_->state() != QProcess::NotRunning) {
        return;
    }
    previewing_ = preview;
    status_->setStyleSheet(QString());
    status_->setText(preview ? (r.is_config() ? tr("Reading the config and placing its layers…")
                                              : tr("Reading and measuring the module…"))
                             : tr("Importing into %1…").arg(r.out));
    import_->setEnabled(false);
    process_->start(r.cli, import_arguments(r, preview));
}

void ImportDialog::finished(int code, QProcess::ExitStatus status) {
    import_->setEnabled(true);
    const QByteArray output = process_->readAllStandardOutput();
    QString errors = QString::fromUtf8(process_->readAllStandardError()).trimmed();
    errors.remove(QStringLiteral("pipewright: "));
    if (status != QProcess::NormalExit || code != 0) {
        showError(errors.isEmpty() ? tr("The import failed (exit code %1).").arg(code)
                                   : in_dialog_words(errors));
        return;
    }
    if (!previewing_) {
        accept();
        return;
    }
    const ImportPreview p = parse_import_preview(output);
    if (!p.error.isEmpty()) {
        showError(p.error);
        return;
    }
    if (!p.summary.isEmpty()) {
        table_->setRowCount(0);
        status_->setText(p.summary +
                         (p.notes.isEmpty()
                              ? QString()
                              : QStringLiteral(" ") +
                                    tr("Left out: %1.").arg(p.notes.join(QStringLiteral("; ")))));
        emit previewShown(0);
        return;
    }
    showLayers(p);
}

void ImportDialog::showLayers(const ImportPreview& p) {
    table_->setRowCount(static_cast<int>(p.layers.size()));
    for (int row = 0; row < table_->rowCount(); ++row) {
        const auto& l = p.layers[static_cast<std::size_t>(row)];
        table_->setItem(row, 0, new QTableWidgetItem(l.name));
        table_->setItem(row, 1, new QTableWidgetItem(l.module));
        table_->setItem(row, 2, new QTableWidgetItem(l.output));
        auto* params = new QTableWidgetItem(QLocale().toString(l.parameters));
        params->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        table_->setItem(row, 3, params);
        // FLOPs beside the stages, so that a split's balance shows.
        auto* flops = new QTableWidgetItem(QString::fromStdString(format_count(l.forward_flops)));
        flops->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        table_->setItem(row, 4, flops);
        auto* stage = new QTableWidgetItem(l.stage >= 0 ? QString::number(l.stage) : QString());
        stage->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        table_->setItem(row, 5, stage);
    }
    table_->resizeColumnToContents(0);
    const int rows = table_->rowCount();
    QString text = p.stages == 1 ? tr("%1 layers, placed as one stage.").arg(rows)
                                 : tr("%1 layers, placed as %2 stages.").arg(rows).arg(p.stages);
    // Each stage's forward FLOPs per sample: how even the split is.
    std::vector<double> per_stage(static_cast<std::size_t>(std::max(0, p.stages)), 0.0);
    for (const auto& l : p.layers) {
        if (l.stage >= 0 && static_cast<std::size_t>(l.stage) < per_stage.size()) {
            per_stage[static_cast<std::size_t>(l.stage)] += l.forward_flops;
        }
    }
    if (per_stage.size() > 1) {
        QStringList figures;
        for (const double f : per_stage) {
            figures << QString::fromStdString(format_count(f));
        }
        text +=
            QLatin1Char(' ') +
            tr("Forward FLOPs per sample by stage: %1.").arg(figures.join(QStringLiteral(", ")));
    }
    if (!p.kept_whole.isEmpty()) {
        text +=
            QLatin1Char(' ') + tr("Kept whole: %1").arg(p.kept_whole.join(QStringLiteral("; ")));
    }
    status_->setText(text);
    emit previewShown(table_->rowCount());
}

void ImportDialog::showError(const QString& message) {
    status_->setStyleSheet(QStringLiteral("color: #c0392b;"));
    status_->setText(message);
    emit failed(message);
}

}  // namespace pipewright::gui
