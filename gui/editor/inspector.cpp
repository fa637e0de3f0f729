#include "editor/inspector.h"

#include <algorithm>

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>
#include <QVBoxLayout>
#include <climits>

#include "document/project_document.h"
#include "document/project_edit_command.h"
#include "editor/exact_spin_box.h"
#include "pipewright/core/device_catalog.h"
#include "pipewright/core/layer_catalog.h"
#include "studio_core/project/project_edit.h"
#include "studio_core/project/topology_edit.h"

namespace pipewright::gui {

int Inspector::mergeIdOf(const QString& field) {
    return kMergeInspector + 100 + static_cast<int>(qHash(field) % 100000U);
}

QLabel* Inspector::heading(const QString& text) {
    return new QLabel(QStringLiteral("<b>%1</b>").arg(text.toHtmlEscaped()));
}

void Inspector::editInPlace(const QString& text, const Project& after, int mergeId) {
    editing_ = true;
    document_->edit(text, after, mergeId);
    editing_ = false;
}

Inspector::Inspector(ProjectDocument* document, QWidget* parent)
    : QScrollArea(parent), document_(document) {
    setWidgetResizable(true);
    setFrameShape(QFrame::NoFrame);
    // Rows wrap to the dock's width, so only vertical scrolling is needed.
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    connect(document_, &ProjectDocument::projectChanged, this, [this] {
        if (!editing_) {
            rebuild();
        }
    });
    rebuild();
}

void Inspector::setSelection(const Selection& selection) {
    if (selection == selection_) {
        return;
    }
    selection_ = selection;
    rebuild();
}

void Inspector::rebuild() {
    auto* page = new QWidget;
    auto* form = new QFormLayout(page);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    // In a narrow dock a field goes under its label rather than being
    // squeezed until its numbers are cut off.
    form->setRowWrapPolicy(QFormLayout::WrapLongRows);
    const Project& p = document_->project();
    if (selection_.kind == Selection::Kind::layer && selection_.layer >= 0 &&
        selection_.layer < static_cast<int>(p.model.layers.size())) {
        buildLayer(form);
    } else if (selection_.kind == Selection::Kind::device &&
               p.topology.find_device(selection_.path.toStdString())) {
        buildDevice(form);
    } else if (selection_.kind == Selection::Kind::container &&
               find_container(p, selection_.path.toStdString()).first >= 0) {
        buildContainer(form);
    } else if (selection_.kind == Selection::Kind::node &&
               find_node(p, selection_.path.toStdString()) >= 0) {
        buildNode(form);
    } else {
        auto* hint = new QLabel(
            tr("Select a layer, device, container or node to edit it. With nothing selected: "
               "the model's input and the cluster's links."));
        hint->setWordWrap(true);
        form->addRow(hint);
        buildModelInput(form);
        buildLinks(form);
    }
    setWidget(page);
}

void Inspector::buildLayer(QFormLayout* form) {
    const int index = selection_.layer;
    const LayerSpec& layer = document_->project().model.layers[static_cast<std::size_t>(index)];
    form->addRow(heading(tr("Layer %1").arg(index)));
    auto* name = new QLineEdit(QString::fromStdString(layer.name));
    name->setToolTip(tr("Unique name; the placement follows a rename"));
    connect(name, &QLineEdit::editingFinished, this, [this, name, index] {
        auto result =
            rename_layer(document_->project(), index, name->text().trimmed().toStdString());
        if (!result.project) {
            emit refused(QString::fromStdString(result.refusal));
            name->setText(QString::fromStdString(
                document_->project().model.layers[static_cast<std::size_t>(index)].name));
            return;
        }
        document_->edit(tr("Rename layer"), *result.project);
    });
    form->addRow(tr("Name"), name);
    const LayerTypeInfo* info = find_layer_type(layer.type);
    auto* type = new QLabel(QString::fromStdString(layer.type));
    if (info != nullptr) {
        type->setToolTip(QString::fromStdString(info->description));
    }
    form->addRow(tr("Type"), type);
    if (info == nullptr) {
        return;
    }
    auto* description = new QLabel(QString::fromStdString(info->description));
    description->setWordWrap(true);
    form->addRow(description);
    const bool any_required = std::any_of(info->params.begin(), info->params.end(),
                                          [](const ParamSpec& p) { return p.required; });
    if (any_required) {
        // The star on a label is explained once, where it appears.
        auto* legend =
            new QLabel(tr("* required: the file must give it; the others have defaults"));
        legend->setObjectName(QStringLiteral("requiredLegend"));
        legend->setWordWrap(true);
        legend->setEnabled(false);
        form->addRow(legend);
    }

    if (layer.type == "torchscript") {
        addImportedRows(form, layer);
    }
    for (const ParamSpec& spec : info->params) {
        const QString key = QString::fromStdString(spec.name);
        const QString label = key + (spec.required ? QStringLiteral(" *") : QString());
        const double current = layer_param(layer, spec.name);
        auto apply = [this, index, name = spec.name, key](const nlohmann::json& value) {
            Project edited = document_->project();
            edited.model.layers[static_cast<std::size_t>(index)].params[name] = value;
            editing_ = true;
            document_->edit(tr("Set %1").arg(key), edited, mergeIdOf(key + QString::number(index)));
            editing_ = false;
        };
        QWidget* editor = nullptr;
        if (spec.kind == ParamKind::boolean) {
            auto* box = new QCheckBox;
            box->setChecked(current != 0);
            connect(box, &QCheckBox::toggled, this, [apply](bool on) { apply(on); });
            editor = box;
        } else if (spec.kind == ParamKind::choice) {
            auto* box = new QComboBox;
            for (const std::string& word : spec.choices) {
                box->addItem(QString::fromStdString(word));
            }
            box->setCurrentIndex(static_cast<int>(current));
            connect(box, &QComboBox::currentTextChanged, this,
                    [apply](const QString& word) { apply(word.toStdString()); });
            editor = box;
        } else if (spec.kind == ParamKind::integer) {
            auto* box = new QSpinBox;
            box->setRange(0, INT_MAX);
            if (!spec.zero_means.empty()) {
                // 0 reads as what it stands for ("hidden / heads"), not a width of 0.
                box->setSpecialValueText(tr("0 = %1").arg(QString::fromStdString(spec.zero_means)));
            }
            box->setValue(static_cast<int>(current));
            box->setKeyboardTracking(false);
            connect(box, &QSpinBox::valueChanged, this,
                    [apply](int v) { apply(static_cast<std::int64_t>(v)); });
            editor = box;
        } else {
            auto* box = new QDoubleSpinBox;
            box->setDecimals(4);
            box->setRange(0, 1e9);
            box->setSingleStep(0.05);
            box->setValue(current);
            box->setKeyboardTracking(false);
            connect(box, &QDoubleSpinBox::valueChanged, this, [apply](double v) { apply(v); });
            editor = box;
        }
        editor->setObjectName(QStringLiteral("param-") + key);
        editor->setToolTip(QString::fromStdString(spec.description) +
                           (spec.required ? tr("\nRequired: a project must give it.") : QString()));
        form->addRow(label, editor);
    }
    buildCost(form);
}

void Inspector::buildDevice(QFormLayout* form) {
    const std::string path = selection_.path.toStdString();
    const Project& p = document_->project();
    const auto loc = *p.topology.find_device(path);
    const Device& device = p.topology.device_at(loc);
    form->addRow(heading(tr("Device %1").arg(selection_.path)));

    auto* name = new QLineEdit(QString::fromStdString(device.name));
    connect(name, &QLineEdit::editingFinished, this, [this, name, path] {
        auto result =
            rename_device(document_->project(), path, name->text().trimmed().toStdString());
        if (!result.project) {
            if (name->text().trimmed().toStdString() != path.substr(path.rfind('/') + 1)) {
                emit refused(QString::fromStdString(result.refusal));
            }
            return;
        }
        const QString new_path =
            QString::fromStdString(path.substr(0, path.rfind('/') + 1)) + name->text().trimmed();
        document_->edit(tr("Rename device"), *result.project);
        setSelection({Selection::Kind::device, -1, new_path});
    });
    form->addRow(tr("Name"), name);

    auto* spec = new QComboBox;
    for (const DeviceSpec& s : DeviceCatalog::builtin().specs()) {
        spec->addItem(QString::fromStdString(s.name));
        spec->setItemData(spec->count() - 1, QString::fromStdString(s.description),
                          Qt::ToolTipRole);
    }
    spec->setCurrentText(QString::fromStdString(device.spec));
    connect(spec, &QComboBox::currentTextChanged, this, [this, loc](const QString& text) {
        Project edited = document_->project();
        edited.topology.nodes[static_cast<std::size_t>(loc.node)]
            .containers[static_cast<std::size_t>(loc.container)]
            .devices[static_cast<std::size_t>(loc.device)]
            .spec = text.toStdString();
        document_->edit(tr("Change device spec"), edited);
    });
    form->addRow(tr("Spec"), spec);
    if (const DeviceSpec* s = DeviceCatalog::builtin().find(device.spec)) {
        auto* about = new QLabel(QString::fromStdString(s->description));
        about->setWordWrap(true);
        form->addRow(about);
    }

    auto override_box = [this, loc, form](const QString& label, const QString& tip,
                                          std::optional<double> value, double max,
                                          std::optional<double> DeviceOverrides::*member) {
        auto* box = new QDoubleSpinBox;
        box->setRange(0, max);
        box->setDecimals(1);
        box->setSpecialValueText(tr("from catalog"));
        box->setValue(value.value_or(0));
        box->setKeyboardTracking(false);
        box->setToolTip(tip);
        connect(box, &QDoubleSpinBox::valueChanged, this, [this, loc, member, label](double v) {
            Project edited = document_->project();
            auto& d = edited.topology.nodes[static_cast<std::size_t>(loc.node)]
                          .containers[static_cast<std::size_t>(loc.container)]
                          .devices[static_cast<std::size_t>(loc.device)];
            d.overrides.*member = v > 0 ? std::optional<double>(v) : std::nullopt;
            editing_ = true;
            document_->edit(tr("Override %1").arg(label), edited, mergeIdOf(label));
            editing_ = false;
        });
        form->addRow(label, box);
    };
    override_box(tr("Peak TFLOP/s"),
                 tr("Replaces the catalog's FLOP/s for every dtype (0: catalog)"),
                 device.overrides.peak_tflops, 1e5, &DeviceOverrides::peak_tflops);
    override_box(tr("Memory GiB"), tr("Replaces the catalog's memory (a MIG slice; 0: catalog)"),
                 device.overrides.memory_GiB, 1e5, &DeviceOverrides::memory_GiB);
    buildLinkOverrides(form);
    buildLinks(form);
}

void Inspector::buildLinks(QFormLayout* form) {
    struct Level {
        QString name;
        LinkSpec LinkClasses::*member;
        QString tip;
    };
    const Level levels[] = {
        {tr("Within a container"), &LinkClasses::intra_container,
         tr("e.g. NVLink between GPUs of one box")},
        {tr("Within a node"), &LinkClasses::intra_node,
         tr("e.g. PCIe between containers of a node")},
        {tr("Between nodes"), &LinkClasses::inter_node, tr("e.g. InfiniBand or Ethernet")},
    };
    form->addRow(heading(tr("Links")));
    for (const Level& level : levels) {
        form->addRow(level.name, linkEditor(level.member, level.name, level.tip));
    }
}

QWidget* Inspector::linkEditor(LinkSpec LinkClasses::*member, const QString& name,
                               const QString& tip) {
    const LinkSpec& spec = document_->project().topology.links.*member;
    auto* bandwidth = new ExactSpinBox(3);
    bandwidth->setRange(0.001, 1e5);
    bandwidth->setSuffix(tr(" GB/s"));
    bandwidth->setValue(spec.bandwidth_GBps);
    bandwidth->setKeyboardTracking(false);
    bandwidth->setToolTip(tip);
    auto* latency = new ExactSpinBox(3);
    latency->setRange(0, 1e6);
    latency->setSuffix(tr(" µs"));
    latency->setValue(spec.latency_us);
    latency->setKeyboardTracking(false);
    latency->setToolTip(tip);
    auto* efficiency = new ExactSpinBox(3);
    efficiency->setRange(0.01, 1);
    efficiency->setPrefix(tr("× "));
    efficiency->setValue(spec.efficiency);
    efficiency->setKeyboardTracking(false);
    efficiency->setToolTip(
        tr("The fraction of the bandwidth that transfers and collectives "
           "reach: NCCL's model takes 0.8 of NVLink, 0.75 of PCIe, 0.96 of "
           "the network"));
    auto apply = [this, member, name](double LinkSpec::*field, double v) {
        Project edited = document_->project();
        (edited.topology.links.*member).*field = v;
        editing_ = true;
        document_->edit(tr("Set link %1").arg(name), edited, mergeIdOf(name));
        editing_ = false;
    };
    connect(bandwidth, &QDoubleSpinBox::valueChanged, this,
            [apply](double v) { apply(&LinkSpec::bandwidth_GBps, v); });
    connect(latency, &QDoubleSpinBox::valueChanged, this,
            [apply](double v) { apply(&LinkSpec::latency_us, v); });
    connect(efficiency, &QDoubleSpinBox::valueChanged, this,
            [apply](double v) { apply(&LinkSpec::efficiency, v); });
    auto* row = new QWidget;
    auto* h = new QHBoxLayout(row);
    h->setContentsMargins(0, 0, 0, 0);
    h->addWidget(bandwidth);
    h->addWidget(latency);
    h->addWidget(efficiency);
    return row;
}

}  // namespace pipewright::gui
