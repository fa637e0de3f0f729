#pragma once

#include <QGraphicsView>

class QMimeData;

namespace pipewright::gui {

class TopologyScene;

// The canvas around TopologyScene: accepts layer and palette drops on device
// boxes, starts drags from chips, and offers topology edits on right-click.
class TopologyView : public QGraphicsView {
    Q_OBJECT

  public:
    explicit TopologyView(TopologyScene* scene, QWidget* parent = nullptr);

    // Scales down to show the whole cluster when it does not fit.
    void fitScene();
    // Handles a drop of `mime` at view position `pos`; false when no device
    // is there. dropEvent uses it, and tests call it without a drag session.
    bool dropAt(const QPoint& pos, const QMimeData* mime);

  signals:
    void layersDropped(int first, int last, const QString& device);
    void paletteDropped(const QString& entry, const QString& device);
    void layerClicked(int index);
    void deviceClicked(const QString& path);
    void containerClicked(const QString& path);
    void backgroundClicked();
    void addDeviceRequested(const QString& containerPath, const QString& spec);
    void addContainerRequested(const QString& node);
    void addNodeRequested();
    void removeDeviceRequested(const QString& path);
    void removeContainerRequested(const QString& path);
    void removeNodeRequested(const QString& name);
    // `path` is a device "n/c/d", a container "n/c" or a node "n".
    void renameRequested(const QString& path);

  protected:
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dragMoveEvent(QDragMoveEvent* event) override;
    void dragLeaveEvent(QDragLeaveEvent* event) override;
    void dropEvent(QDropEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void contextMenuEvent(QContextMenuEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

  private:
    TopologyScene* scene_;
    QPoint press_pos_;
    int pressed_chip_ = -1;
};

}  // namespace pipewright::gui
