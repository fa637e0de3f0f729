// The inspector's pages for a node and a container: the name, what it holds,
// and the link class that joins its parts, edited in place.
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>

#include "document/project_document.h"
#include "editor/inspector.h"
#include "studio_core/format/format.h"
#include "studio_core/project/topology_edit.h"
#include "studio_core/project/topology_summary.h"

namespace pipewright::gui {

namespace {

// "4 × A100-80GB, 2 × H100"
QString spec_counts(const TopologySummary& s) {
    QStringList parts;
    for (const auto& [spec, count] : s.specs) {
        parts << QStringLiteral("%1 × %2").arg(count).arg(QString::fromStdString(spec));
    }
    return parts.isEmpty() ? QObject::tr("none") : parts.join(QStringLiteral(", "));
}

QLabel* wrapped(const QString& text) {
    auto* label = new QLabel(text);
    label->setWordWrap(true);
    return label;
}

}  // namespace

void Inspector::addContents(QFormLayout* form, int node, int container) {
    const TopologySummary s = summarize_topology(document_->project(), node, container);
    if (container < 0) {
        form->addRow(tr("Containers"), new QLabel(QString::number(s.containers)));
    }
    form->addRow(tr("Devices"), wrapped(tr("%1: %2").arg(s.devices).arg(spec_counts(s))));
    QString memory = format_bytes(static_cast<double>(s.memory_bytes));
    if (s.unknown_specs > 0) {
        memory += tr(" (%n device(s) with an unknown spec not counted)", nullptr, s.unknown_specs);
    }
    auto* memory_label = wrapped(memory);
    memory_label->setToolTip(tr("Sum of the devices' memory, with their overrides"));
    form->addRow(tr("Total memory"), memory_label);
    form->addRow(tr("Layers placed"), new QLabel(QString::number(s.layers)));
}

void Inspector::buildNode(QFormLayout* form) {
    const std::string name = selection_.path.toStdString();
    const int node = find_node(document_->project(), name);
    form->addRow(heading(tr("Node %1").arg(selection_.path)));

    auto* edit = new QLineEdit(selection_.path);
    edit->setObjectName(QStringLiteral("nodeName"));
    edit->setToolTip(tr("Unique among nodes; the placement follows a rename"));
    connect(edit, &QLineEdit::editingFinished, this, [this, edit, node, name] {
        const std::string to = edit->text().trimmed().toStdString();
        if (to == name) {
            return;
        }
        auto result = rename_node(document_->project(), node, to);
        if (!result.project) {
            emit refused(QString::fromStdString(result.refusal));
            edit->setText(QString::fromStdString(name));
            return;
        }
        document_->edit(tr("Rename node"), *result.project);
        setSelection({Selection::Kind::node, -1, QString::fromStdString(to)});
    });
    form->addRow(tr("Name"), edit);
    addContents(form, node, -1);

    form->addRow(heading(tr("Links")));
    form->addRow(tr("Between its containers"),
                 linkEditor(&LinkClasses::intra_node, tr("Within a node"),
                            tr("e.g. PCIe between containers of a node")));
    form->addRow(tr("To other nodes"), linkEditor(&LinkClasses::inter_node, tr("Between nodes"),
                                                  tr("e.g. InfiniBand or Ethernet")));
    form->addRow(wrapped(tr("Link figures are set per level, so they apply to every node.")));
}

void Inspector::buildContainer(QFormLayout* form) {
    const std::string path = selection_.path.toStdString();
    const auto [node, container] = find_container(document_->project(), path);
    form->addRow(heading(tr("Container %1").arg(selection_.path)));

    const QString own = selection_.path.section(QLatin1Char('/'), -1);
    auto* edit = new QLineEdit(own);
    edit->setObjectName(QStringLiteral("containerName"));
    edit->setToolTip(tr("Unique within its node; the placement follows a rename"));
    connect(edit, &QLineEdit::editingFinished, this, [this, edit, node, container, own] {
        const QString to = edit->text().trimmed();
        if (to == own) {
            return;
        }
        auto result = rename_container(document_->project(), node, container, to.toStdString());
        if (!result.project) {
            emit refused(QString::fromStdString(result.refusal));
            edit->setText(own);
            return;
        }
        const QString new_path =
            selection_.path.section(QLatin1Char('/'), 0, -2) + QLatin1Char('/') + to;
        document_->edit(tr("Rename container"), *result.project);
        setSelection({Selection::Kind::container, -1, new_path});
    });
    form->addRow(tr("Name"), edit);
    addContents(form, node, container);

    form->addRow(heading(tr("Links")));
    form->addRow(tr("Between its devices"),
                 linkEditor(&LinkClasses::intra_container, tr("Within a container"),
                            tr("e.g. NVLink between GPUs of one box")));
    form->addRow(
        wrapped(tr("Link figures are set per level, so they apply to every container. A "
                   "device's page sets the link of one particular pair.")));
}

}  // namespace pipewright::gui
