#include "editor/model_table_delegate.h"

#include <QComboBox>

#include "document/project_document.h"
#include "editor/model_table_model.h"
#include "pipewright/core/layer_catalog.h"

namespace pipewright::gui {

ModelTableDelegate::ModelTableDelegate(ProjectDocument* document, QObject* parent)
    : QStyledItemDelegate(parent), document_(document) {}

QWidget* ModelTableDelegate::createEditor(QWidget* parent, const QStyleOptionViewItem& option,
                                          const QModelIndex& index) const {
    if (index.column() == ModelTableModel::Type) {
        auto* box = new QComboBox(parent);
        for (const LayerTypeInfo& info : layer_types()) {
            box->addItem(QString::fromStdString(info.type));
            box->setItemData(box->count() - 1, QString::fromStdString(info.description),
                             Qt::ToolTipRole);
        }
        return box;
    }
    if (index.column() == ModelTableModel::Device) {
        auto* box = new QComboBox(parent);
        if (index.data(Qt::EditRole).toString().isEmpty()) {
            box->addItem(QString());  // unplaced: keep it so unless a device is picked
        }
        for (const DeviceLocation& loc : document_->project().topology.devices()) {
            box->addItem(QString::fromStdString(loc.path));
        }
        return box;
    }
    return QStyledItemDelegate::createEditor(parent, option, index);
}

void ModelTableDelegate::setEditorData(QWidget* editor, const QModelIndex& index) const {
    if (auto* box = qobject_cast<QComboBox*>(editor)) {
        box->setCurrentText(index.data(Qt::EditRole).toString());
        return;
    }
    QStyledItemDelegate::setEditorData(editor, index);
}

void ModelTableDelegate::setModelData(QWidget* editor, QAbstractItemModel* model,
                                      const QModelIndex& index) const {
    if (auto* box = qobject_cast<QComboBox*>(editor)) {
        // Closing the combo without a change is no edit (and no undo step).
        if (box->currentText() != index.data(Qt::EditRole).toString()) {
            model->setData(index, box->currentText(), Qt::EditRole);
        }
        return;
    }
    QStyledItemDelegate::setModelData(editor, model, index);
}

}  // namespace pipewright::gui
