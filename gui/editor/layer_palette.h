#pragma once

#include <QTreeWidget>

namespace pipewright::gui {

// Every catalog layer type and a few ready-made blocks, dragged into the
// model table or straight onto a device; double-click appends to the model.
class LayerPalette : public QTreeWidget {
    Q_OBJECT

  public:
    explicit LayerPalette(QWidget* parent = nullptr);

  signals:
    void entryActivated(const QString& entry);  // "layer:linear", "block:mlp"

  protected:
    [[nodiscard]] QMimeData* mimeData(const QList<QTreeWidgetItem*>& items) const override;
    [[nodiscard]] QStringList mimeTypes() const override;
};

}  // namespace pipewright::gui
