#pragma once

#include <QGraphicsView>

class QMimeData;

namespace pipewright::gui {

class TopologyScene;

// The canvas around TopologyScene: accepts layer and palette drops on device
// boxes, starts drags from chips, offers topology edits on right-click, and
// zooms and pans.
//
// Ctrl+wheel zooms around the pointer, the wheel scrolls, a middle-button
// drag or a drag with Space held pans. The view starts in *fit* mode, where
// it keeps the whole cluster in sight through resizes and edits; zooming
// leaves it, fitToView() comes back to it.
class TopologyView : public QGraphicsView {
    Q_OBJECT

  public:
    explicit TopologyView(TopologyScene* scene, QWidget* parent = nullptr);

    // Handles a drop of `mime` at view position `pos`; false when no device
    // is there. dropEvent uses it, and tests call it without a drag session.
    bool dropAt(const QPoint& pos, const QMimeData* mime);

    // The scene's scale on screen (1: one scene unit per pixel).
    [[nodiscard]] double zoom() const;
    // Scales by `factor` keeping the scene point under `anchor` (viewport
    // coordinates) where it is, within [minZoom(), kMaxZoom].
    void zoomBy(double factor, const QPointF& anchor);
    void zoomIn();  // around the middle of the view
    void zoomOut();
    // Shows the whole cluster, never larger than zoom 1, and stays fitted.
    void fitToView();
    [[nodiscard]] bool isFitted() const { return fitted_; }
    [[nodiscard]] double minZoom() const;
    static constexpr double kMaxZoom = 4.0;
    static constexpr double kStep = 1.25;  // per wheel notch and Ctrl++

    // Whether the devices draw their names and chips at this zoom (else
    // they draw as load and memory bars).
    [[nodiscard]] bool showsDetail() const;
    // Brings a device into view: expands its node, zooms in until its text
    // is readable, centres it and outlines it. False when there is none.
    bool revealDevice(const QString& path);

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
    void zoomChanged(double zoom);
    // From the context menu (the canvas's toolbar does the same).
    void findRequested();

  protected:
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dragMoveEvent(QDragMoveEvent* event) override;
    void dragLeaveEvent(QDragLeaveEvent* event) override;
    void dropEvent(QDropEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void mouseDoubleClickEvent(QMouseEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    void keyReleaseEvent(QKeyEvent* event) override;
    void focusOutEvent(QFocusEvent* event) override;
    void contextMenuEvent(QContextMenuEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

  private:
    void setZoom(double zoom);
    void sceneResized();
    void updateScrollRoom();
    void endPan();

    TopologyScene* scene_;
    QPoint press_pos_;
    int pressed_chip_ = -1;
    bool fitted_ = true;
    bool space_held_ = false;
    bool panning_ = false;
    QPoint pan_last_;
};

}  // namespace pipewright::gui
