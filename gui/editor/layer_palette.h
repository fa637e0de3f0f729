#pragma once

#include <QTreeWidget>

namespace pipewright::gui {

// Every catalog layer type and a few ready-made blocks, dragged into the
// model table or straight onto a device; double-click appends to the model.
class LayerPalette : public QTreeWidget {
    Q_OBJECT

  public:
    explicit LayerPalette(QWidget* parent = nullptr);

    // Wide enough for its longest name with its indentation and a scroll
    // bar: a narrow window squeezes the palette's dock, but never cuts a name.
    [[nodiscard]] QSize minimumSizeHint() const override;

  signals:
    void entryActivated(const QString& entry);  // "layer:linear", "block:mlp"

  protected:
    [[nodiscard]] QMimeData* mimeData(const QList<QTreeWidgetItem*>& items) const override;
    [[nodiscard]] QStringList mimeTypes() const override;
};

}  // namespace pipewright::gui
