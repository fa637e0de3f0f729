// The inspector's optional sections: measured layer costs, the model input,
// and per-pair link overrides of a device.
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <cmath>

#include "document/project_document.h"
#include "editor/exact_spin_box.h"
#include "editor/inspector.h"
#include "studio_core/project/topology_edit.h"

namespace pipewright::gui {

namespace {

// A value that is either taken from the project or left to the estimate: a
// checkbox says which, the spin box holds the value (kept while unchecked so
// that ticking the box again brings it back).
struct OptionalRow {
    QWidget* row = nullptr;
    QCheckBox* check = nullptr;
    QDoubleSpinBox* spin = nullptr;
};

OptionalRow optional_row(const QString& object_name, std::optional<double> value, double fallback,
                         const QString& suffix, int decimals, const QString& tip) {
    OptionalRow r;
    r.row = new QWidget;
    auto* h = new QHBoxLayout(r.row);
    h->setContentsMargins(0, 0, 0, 0);
    r.check = new QCheckBox;
    r.check->setObjectName(object_name + QStringLiteral("Check"));
    r.check->setChecked(value.has_value());
    r.check->setToolTip(QObject::tr("Tick to replace the estimate with your own figure"));
    r.spin = new QDoubleSpinBox;
    r.spin->setObjectName(object_name + QStringLiteral("Spin"));
    r.spin->setRange(0, 1e9);
    r.spin->setDecimals(decimals);
    r.spin->setSuffix(suffix);
    r.spin->setValue(value.value_or(fallback));
    r.spin->setEnabled(value.has_value());
    r.spin->setKeyboardTracking(false);
    r.spin->setToolTip(tip);
    h->addWidget(r.check);
    h->addWidget(r.spin, 1);
    return r;
}

// "3, 224, 224", "3x224x224" or "[3 224 224]" to a shape; empty on a
// malformed or non-positive entry.
pipewright::Shape parse_shape(const QString& text) {
    static const QRegularExpression separators(QStringLiteral("[\\s,x×\\[\\]()]+"));
    pipewright::Shape shape;
    for (const QString& part : text.split(separators, Qt::SkipEmptyParts)) {
        bool ok = false;
        const qlonglong v = part.toLongLong(&ok);
        if (!ok || v <= 0) {
            return {};
        }
        shape.push_back(v);
    }
    return shape;
}

QString shape_text(const pipewright::Shape& shape) {
    QStringList parts;
    for (const std::int64_t d : shape) {
        parts << QString::number(d);
    }
    return parts.join(QStringLiteral(", "));
}

constexpr double kMiB = 1024.0 * 1024.0;

}  // namespace

void Inspector::addImportedRows(QFormLayout* form, const LayerSpec& layer) {
    // What the import wrote: where the layer comes from, read-only (import
    // the file again to change it).
    auto text = [&](const char* key) {
        const auto& v = layer.params.value(key, nlohmann::json());
        if (v.is_string()) {
            return QString::fromStdString(v.get<std::string>());
        }
        QStringList items;
        for (const auto& item : v.is_array() ? v : nlohmann::json::array()) {
            items << QString::fromStdString(item.is_string() ? item.get<std::string>()
                                                             : item.dump());
        }
        return items.join(QStringLiteral(", "));
    };
    auto row = [&](const QString& label, const QString& value, const char* name) {
        auto* l = new QLabel(value.isEmpty() ? tr("—") : value);
        l->setObjectName(QString::fromLatin1(name));
        l->setWordWrap(true);
        l->setTextInteractionFlags(Qt::TextSelectableByMouse);
        form->addRow(label, l);
    };
    row(tr("Module file"), text("module"), "importedModuleFile");
    row(tr("Submodule"), text("submodule"), "importedSubmodule");
    row(tr("Class"), text("module_type"), "importedClass");
    if (!text("then").isEmpty()) {
        row(tr("Then"), text("then"), "importedThen");
    }
    row(tr("Imported for"), QLatin1Char('[') + text("input_shape") + QLatin1Char(']'),
        "importedInputShape");
}

void Inspector::buildCost(QFormLayout* form) {
    const int index = selection_.layer;
    const LayerSpec& layer = document_->project().model.layers[static_cast<std::size_t>(index)];
    form->addRow(heading(tr("Measured cost")));
    auto* hint =
        new QLabel(tr("Times per micro-batch that replace the analytic estimate, "
                      "e.g. from a profiler. Unticked: estimated."));
    hint->setWordWrap(true);
    form->addRow(hint);

    struct Part {
        QString label;
        QString key;
        std::optional<double> CostOverride::*member;
        QString tip;
    };
    const Part parts[] = {
        {tr("Forward"), QStringLiteral("costForward"), &CostOverride::forward_ms,
         tr("Forward time of one micro-batch")},
        {tr("Backward (input)"), QStringLiteral("costBackwardInput"),
         &CostOverride::backward_input_ms,
         tr("Gradient with respect to the layer's input, one micro-batch")},
        {tr("Backward (weight)"), QStringLiteral("costBackwardWeight"),
         &CostOverride::backward_weight_ms,
         tr("Gradient with respect to the layer's weights, one micro-batch")},
    };
    const CostOverride cost = layer.cost.value_or(CostOverride{});
    for (const Part& part : parts) {
        OptionalRow r = optional_row(part.key, cost.*(part.member), 1.0, tr(" ms"), 3, part.tip);
        auto apply = [this, index, member = part.member](std::optional<double> v) {
            Project edited = document_->project();
            LayerSpec& l = edited.model.layers[static_cast<std::size_t>(index)];
            CostOverride c = l.cost.value_or(CostOverride{});
            c.*member = v;
            // An override with nothing in it is no override: the file stays clean.
            if (c == CostOverride{}) {
                l.cost.reset();
            } else {
                l.cost = c;
            }
            return edited;
        };
        connect(r.check, &QCheckBox::toggled, this, [this, r, apply, label = part.label](bool on) {
            r.spin->setEnabled(on);
            editInPlace(
                on ? tr("Set measured %1 time").arg(label) : tr("Estimate %1 time").arg(label),
                apply(on ? std::optional<double>(r.spin->value()) : std::nullopt), -1);
        });
        connect(r.spin, &QDoubleSpinBox::valueChanged, this,
                [this, apply, index, key = part.key, label = part.label](double v) {
                    editInPlace(tr("Set measured %1 time").arg(label), apply(v),
                                mergeIdOf(key + QString::number(index)));
                });
        form->addRow(part.label, r.row);
    }

    std::optional<double> stashed;
    if (layer.activation_bytes) {
        stashed = static_cast<double>(*layer.activation_bytes) / kMiB;
    }
    OptionalRow r = optional_row(QStringLiteral("activationBytes"), stashed, 1.0, tr(" MiB"), 3,
                                 tr("Bytes kept from forward until backward, per micro-batch"));
    auto apply = [this, index](std::optional<double> mib) {
        Project edited = document_->project();
        LayerSpec& l = edited.model.layers[static_cast<std::size_t>(index)];
        if (mib) {
            l.activation_bytes = static_cast<std::int64_t>(std::llround(*mib * kMiB));
        } else {
            l.activation_bytes.reset();
        }
        return edited;
    };
    connect(r.check, &QCheckBox::toggled, this, [this, r, apply](bool on) {
        r.spin->setEnabled(on);
        editInPlace(on ? tr("Set stashed activation") : tr("Estimate stashed activation"),
                    apply(on ? std::optional<double>(r.spin->value()) : std::nullopt), -1);
    });
    connect(r.spin, &QDoubleSpinBox::valueChanged, this, [this, apply, index](double v) {
        editInPlace(tr("Set stashed activation"), apply(v),
                    mergeIdOf(QStringLiteral("activation") + QString::number(index)));
    });
    form->addRow(tr("Stashed activation"), r.row);
}

void Inspector::buildModelInput(QFormLayout* form) {
    const ModelInput& input = document_->project().model.input;
    form->addRow(heading(tr("Model input")));
    auto* shape = new QLineEdit(shape_text(input.shape));
    shape->setObjectName(QStringLiteral("inputShape"));
    shape->setToolTip(tr("One sample, without the batch dimension, e.g. 3, 224, 224"));
    connect(shape, &QLineEdit::editingFinished, this, [this, shape] {
        const pipewright::Shape parsed = parse_shape(shape->text());
        const Project& p = document_->project();
        if (parsed.empty()) {
            emit refused(tr("an input shape is a list of positive sizes, e.g. 3, 224, 224"));
            shape->setText(shape_text(p.model.input.shape));
            return;
        }
        if (parsed == p.model.input.shape) {
            return;
        }
        Project edited = p;
        edited.model.input.shape = parsed;
        editInPlace(tr("Change input shape"), edited, -1);
    });
    form->addRow(tr("Shape"), shape);

    auto* dtype = new QComboBox;
    dtype->setObjectName(QStringLiteral("inputDtype"));
    for (DType t : {DType::float32, DType::float16, DType::bfloat16, DType::int64}) {
        dtype->addItem(QString::fromStdString(std::string(to_string(t))));
    }
    dtype->setCurrentText(QString::fromStdString(std::string(to_string(input.dtype))));
    dtype->setToolTip(tr("Element type of the input: int64 for token ids of an embedding"));
    connect(dtype, &QComboBox::currentTextChanged, this, [this](const QString& text) {
        Project edited = document_->project();
        edited.model.input.dtype = parse_dtype(text.toStdString()).value_or(DType::float32);
        editInPlace(tr("Change input dtype"), edited, -1);
    });
    form->addRow(tr("Dtype"), dtype);

    // Tied embeddings (model.tie_word_embeddings): offered where the model
    // could tie, an embedding first and a linear head last; the analysis
    // says why when the head does not match.
    const Model& model = document_->project().model;
    if (!model.layers.empty() && model.layers.front().type == "embedding" &&
        model.layers.back().type == "linear") {
        auto* tied = new QCheckBox(tr("Head tied to the embedding"));
        tied->setObjectName(QStringLiteral("tieWordEmbeddings"));
        tied->setChecked(model.tie_word_embeddings);
        tied->setToolTip(
            tr("The output head multiplies by the token embedding's matrix "
               "(tie_word_embeddings): one matrix in the model's parameters; stages that hold "
               "one end each keep a copy and sum its gradients before the optimizer step"));
        connect(tied, &QCheckBox::toggled, this, [this](bool on) {
            Project edited = document_->project();
            edited.model.tie_word_embeddings = on;
            editInPlace(
                on ? tr("Tie the head to the embedding") : tr("Untie the head from the embedding"),
                edited, -1);
        });
        form->addRow(tr("Embeddings"), tied);
    }
}

void Inspector::buildLinkOverrides(QFormLayout* form) {
    const std::string path = selection_.path.toStdString();
    const Topology& topology = document_->project().topology;
    form->addRow(heading(tr("Links of this device")));

    auto spin = [](double value, double min, double max, const QString& suffix) {
        auto* box = new ExactSpinBox(3);
        box->setRange(min, max);
        box->setSuffix(suffix);
        box->setValue(value);
        box->setKeyboardTracking(false);
        return box;
    };
    std::vector<std::string> linked;
    int row_index = 0;
    for (const LinkOverride& o : topology.link_overrides) {
        if (o.device_a != path && o.device_b != path) {
            continue;
        }
        const std::string other = o.device_a == path ? o.device_b : o.device_a;
        linked.push_back(other);
        auto* row = new QWidget;
        row->setObjectName(QStringLiteral("linkOverride%1").arg(row_index++));
        auto* h = new QHBoxLayout(row);
        h->setContentsMargins(0, 0, 0, 0);
        auto* bandwidth = spin(o.link.bandwidth_GBps, 0.001, 1e5, tr(" GB/s"));
        auto* latency = spin(o.link.latency_us, 0, 1e6, tr(" µs"));
        auto* efficiency = spin(o.link.efficiency, 0.01, 1, QString());
        efficiency->setPrefix(tr("× "));
        efficiency->setToolTip(
            tr("The fraction of the bandwidth that transfers reach "
               "(1 for a measured figure)"));
        auto* remove = new QPushButton(tr("✕"));
        remove->setToolTip(tr("Remove this link: the level's figures apply again"));
        remove->setFixedWidth(remove->fontMetrics().horizontalAdvance(QStringLiteral("✕")) + 16);
        h->addWidget(bandwidth, 1);
        h->addWidget(latency, 1);
        h->addWidget(efficiency, 1);
        h->addWidget(remove);
        auto apply = [this, path, other, bandwidth, latency, efficiency] {
            auto result =
                set_link_override(document_->project(), path, other,
                                  {bandwidth->value(), latency->value(), efficiency->value()});
            if (result.project) {
                editInPlace(tr("Set link to %1").arg(QString::fromStdString(other)),
                            *result.project,
                            mergeIdOf(QString::fromStdString("link " + path + " " + other)));
            }
        };
        connect(bandwidth, &QDoubleSpinBox::valueChanged, this, apply);
        connect(latency, &QDoubleSpinBox::valueChanged, this, apply);
        connect(efficiency, &QDoubleSpinBox::valueChanged, this, apply);
        connect(remove, &QPushButton::clicked, this, [this, path, other] {
            document_->edit(tr("Remove link to %1").arg(QString::fromStdString(other)),
                            remove_link_override(document_->project(), path, other));
        });
        auto* label = new QLabel(QStringLiteral("↔ %1").arg(QString::fromStdString(other)));
        label->setToolTip(tr("Bandwidth and latency between %1 and %2")
                              .arg(selection_.path, QString::fromStdString(other)));
        form->addRow(label, row);
    }

    const auto self = topology.find_device(path);
    auto* others = new QComboBox;
    others->setObjectName(QStringLiteral("linkOtherDevice"));
    for (const DeviceLocation& loc : topology.devices()) {
        if (loc.path != path && std::find(linked.begin(), linked.end(), loc.path) == linked.end()) {
            others->addItem(QString::fromStdString(loc.path));
        }
    }
    auto* add = new QPushButton(tr("Add"));
    add->setObjectName(QStringLiteral("linkAdd"));
    add->setToolTip(
        tr("Give the link to that device its own bandwidth and latency, "
           "starting from the figures of its level"));
    add->setEnabled(others->count() > 0 && self.has_value());
    connect(add, &QPushButton::clicked, this, [this, path, others] {
        const Project& p = document_->project();
        const auto a = p.topology.find_device(path);
        const auto b = p.topology.find_device(others->currentText().toStdString());
        if (!a || !b) {
            return;
        }
        // Start from what the pair uses today, so adding alone changes nothing.
        const LinkSpec start = p.topology.link_between(*a, *b).spec;
        auto result = set_link_override(p, path, b->path, start);
        if (!result.project) {
            emit refused(QString::fromStdString(result.refusal));
            return;
        }
        document_->edit(tr("Add link to %1").arg(QString::fromStdString(b->path)), *result.project);
    });
    auto* row = new QWidget;
    auto* h = new QHBoxLayout(row);
    h->setContentsMargins(0, 0, 0, 0);
    h->addWidget(others, 1);
    h->addWidget(add);
    form->addRow(tr("Link to"), row);
}

}  // namespace pipewright::gui
