#pragma once

#include <QStyledItemDelegate>

namespace pipewright::gui {

class ProjectDocument;

// Editors of the model table: a combo of catalog types for the type column
// and of the cluster's device paths for the device column, so a cell can only
// take a value that exists. The name column keeps the default line edit.
class ModelTableDelegate : public QStyledItemDelegate {
    Q_OBJECT

  public:
    explicit ModelTableDelegate(ProjectDocument* document, QObject* parent = nullptr);

    QWidget* createEditor(QWidget* parent, const QStyleOptionViewItem& option,
                          const QModelIndex& index) const override;
    void setEditorData(QWidget* editor, const QModelIndex& index) const override;
    void setModelData(QWidget* editor, QAbstractItemModel* model,
                      const QModelIndex& index) const override;

  private:
    ProjectDocument* document_;
};

}  // namespace pipewright::gui
