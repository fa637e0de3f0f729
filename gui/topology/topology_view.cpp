#include "topology/topology_view.h"

#include <QApplication>
#include <QContextMenuEvent>
#include <QDrag>
#include <QGraphicsRectItem>
#include <QMenu>
#include <QMimeData>
#include <QScrollBar>
#include <algorithm>
#include <cmath>

#include "editor/model_table_model.h"
#include "pipewright/core/device_catalog.h"
#include "studio_core/canvas/canvas_detail.h"
#include "topology/topology_scene.h"

namespace pipewright::gui {

namespace {

// How much larger than the view (in area) a readable cluster may be for the
// fitted view to show it readable, scrolling, rather than whole.
constexpr double kReadableOverflow = 2.5;

QGraphicsItem* tagged(QGraphicsItem* item, TopologyItemKind kind) {
    for (QGraphicsItem* p = item; p != nullptr; p = p->parentItem()) {
        if (p->data(kKindKey).toInt() == static_cast<int>(kind)) {
            return p;
        }
    }
    return nullptr;
}

bool acceptable(const QMimeData* mime) {
    return mime->hasFormat(QString::fromLatin1(kLayersMime)) ||
           mime->hasFormat(QString::fromLatin1(kPaletteMime));
}

}  // namespace

TopologyView::TopologyView(TopologyScene* scene, QWidget* parent)
    : QGraphicsView(scene, parent), scene_(scene) {
    setAcceptDrops(true);
    setRenderHint(QPainter::Antialiasing);
    setAlignment(Qt::AlignHCenter | Qt::AlignTop);
    setDragMode(QGraphicsView::NoDrag);
    // zoomBy keeps the point under the pointer itself, also for key zooms.
    setTransformationAnchor(QGraphicsView::NoAnchor);
    setResizeAnchor(QGraphicsView::NoAnchor);
    setFocusPolicy(Qt::StrongFocus);
    setToolTip(
        tr("Drop layers on a device to place them · right-click: edit the cluster · "
           "Ctrl+wheel: zoom around the cursor · wheel: scroll · middle-drag or Space+drag: pan · "
           "double-click a node: collapse or expand it"));
    connect(scene_, &QGraphicsScene::sceneRectChanged, this, &TopologyView::sceneResized);
}

double TopologyView::zoom() const {
    return transform().m11();
}

double TopologyView::minZoom() const {
    const QRectF rect = scene_->sceneRect();
    const QSize room = viewport()->size();
    double fit = 1.0;
    if (!rect.isEmpty() && !room.isEmpty()) {
        fit = std::min(room.width() / rect.width(), room.height() / rect.height());
    }
    // Half the whole cluster's size: enough to see it all with room around.
    return std::max(0.005, std::min(fit, 1.0) / 2);
}

void TopologyView::setZoom(double zoom) {
    const bool detail = text_readable(scene_->detailTextPixels(), zoom);
    scene_->setDetailShown(detail);
    // Zoomed out to bars, the boxes are a few pixels each: smoothing their
    // edges shows nothing and more than doubles the time to paint them.
    setRenderHint(QPainter::Antialiasing, detail);
    setTransform(QTransform::fromScale(zoom, zoom));
    emit zoomChanged(zoom);
}

void TopologyView::zoomBy(double factor, const QPointF& anchor) {
    const double now = zoom();
    const double next = std::clamp(now * factor, minZoom(), kMaxZoom);
    fitted_ = false;
    if (std::abs(next - now) < 1e-9 * now) {
        return;
    }
    const QPointF scene_point = viewportTransform().inverted().map(anchor);
    setZoom(next);
    updateScrollRoom();
    // Scroll so that the same scene point is under the anchor again.
    const QPointF moved = viewportTransform().map(scene_point) - anchor;
    horizontalScrollBar()->setValue(horizontalScrollBar()->value() + qRound(moved.x()));
    verticalScrollBar()->setValue(verticalScrollBar()->value() + qRound(moved.y()));
}

void TopologyView::zoomIn() {
    zoomBy(kStep, QRectF(viewport()->rect()).center());
}

void TopologyView::zoomOut() {
    zoomBy(1 / kStep, QRectF(viewport()->rect()).center());
}

void TopologyView::updateScrollRoom() {
    if (fitted_) {
        setSceneRect(QRectF());  // the scene's own, centred when smaller
        return;
    }
    // A viewport's worth of room around the cluster: any point of it can
    // then be scrolled under any point of the view, so zooming keeps the
    // point under the pointer even where the cluster is smaller than the
    // view, and a found device can be centred even at the cluster's edge.
    const double w = viewport()->width() / zoom();
    const double h = viewport()->height() / zoom();
    const QPointF centre = mapToScene(viewport()->rect().center());
    setSceneRect(scene_->sceneRect().adjusted(-w, -h, w, h));
    centerOn(centre);  // what the view shows stays where it is
}

void TopologyView::fitToView() {
    fitted_ = true;
    updateScrollRoom();
    const QSize room = viewport()->size();
    if (room.isEmpty()) {
        return;
    }
    // Node boxes flow into rows of the view's shape; this may rebuild the
    // scene, which comes back here through sceneResized.
    scene_->setLayoutAspect(static_cast<double>(room.width()) / room.height());
    const QRectF rect = scene_->sceneRect();
    double scale = 1.0;
    if (!rect.isEmpty()) {
        // A little short of the edges, so that no scroll bar appears.
        scale = std::min(
            1.0, 0.98 * std::min(room.width() / rect.width(), room.height() / rect.height()));
        // Names and layer chips are what the canvas is for: a few devices
        // shown whole but too small to read or drag onto are worse than a
        // readable view that scrolls a little. A cluster that opened with
        // nodes collapsed keeps its overview.
        const double readable = std::min(1.0, readable_scale(scene_->detailTextPixels()));
        const double overflow =
            (rect.width() * readable / room.width()) * (rect.height() * readable / room.height());
        if (scale < readable && scene_->collapsedCount() == 0 && overflow <= kReadableOverflow) {
            scale = readable;
        }
    }
    setZoom(scale);
    centerOn(rect.center());
}

void TopologyView::sceneResized() {
    if (fitted_) {
        fitToView();
    } else {
        updateScrollRoom();
    }
}

bool TopologyView::showsDetail() const {
    return text_readable(scene_->detailTextPixels(), zoom());
}

bool TopologyView::revealDevice(const QString& path) {
    fitted_ = false;
    if (scene_->deviceItem(path) == nullptr ||
        scene_->isNodeCollapsed(TopologyScene::nodeOf(path))) {
        scene_->setNodeCollapsed(TopologyScene::nodeOf(path), false);
    }
    QGraphicsRectItem* device = scene_->deviceItem(path);
    if (device == nullptr) {
        return false;
    }
    if (!showsDetail()) {
        // The device's own size, where its name and chips are readable.
        setZoom(std::max(1.0, readable_scale(scene_->detailTextPixels())));
    }
    updateScrollRoom();
    scene_->setHighlightedDevice(path);
    centerOn(device);
    return true;
}

void TopologyView::resizeEvent(QResizeEvent* event) {
    QGraphicsView::resizeEvent(event);
    if (fitted_) {
        fitToView();
    } else {
        updateScrollRoom();
    }
}

void TopologyView::wheelEvent(QWheelEvent* event) {
    if (event->modifiers() & Qt::ControlModifier) {
        const double notches = event->angleDelta().y() / 120.0;
        if (notches != 0) {
            zoomBy(std::pow(kStep, notches), event->position());
        }
        event->accept();
        return;
    }
    QGraphicsView::wheelEvent(event);
}

void TopologyView::keyPressEvent(QKeyEvent* event) {
    if (event->key() == Qt::Key_Space) {
        if (!event->isAutoRepeat()) {
            space_held_ = true;
            viewport()->setCursor(Qt::OpenHandCursor);
        }
        event->accept();
        return;
    }
    QGraphicsView::keyPressEvent(event);
}

void TopologyView::keyReleaseEvent(QKeyEvent* event) {
    if (event->key() == Qt::Key_Space) {
        if (!event->isAutoRepeat()) {
            space_held_ = false;
            if (!panning_) {
                viewport()->unsetCursor();
            }
        }
        event->accept();
        return;
    }
    QGraphicsView::keyReleaseEvent(event);
}

void TopologyView::focusOutEvent(QFocusEvent* event) {
    // A key release that goes to another widget must not leave Space held.
    space_held_ = false;
    endPan();
    QGraphicsView::focusOutEvent(event);
}

void TopologyView::endPan() {
    panning_ = false;
    if (space_held_) {
        viewport()->setCursor(Qt::OpenHandCursor);
    } else {
        viewport()->unsetCursor();
    }
}

void TopologyView::dragEnterEvent(QDragEnterEvent* event) {
    if (acceptable(event->mimeData())) {
        event->acceptProposedAction();
    } else {
        event->ignore();
    }
}

void TopologyView::dragMoveEvent(QDragMoveEvent* event) {
    if (!acceptable(event->mimeData())) {
        event->ignore();
        return;
    }
    QGraphicsRectItem* device = scene_->deviceAt(mapToScene(event->position().toPoint()));
    scene_->setDropTarget(device);
    if (device != nullptr) {
        event->acceptProposedAction();
    } else {
        event->ignore();
    }
}

void TopologyView::dragLeaveEvent(QDragLeaveEvent* event) {
    scene_->setDropTarget(nullptr);
    QGraphicsView::dragLeaveEvent(event);
}

bool TopologyView::dropAt(const QPoint& pos, const QMimeData* mime) {
    scene_->setDropTarget(nullptr);
    QGraphicsRectItem* device = scene_->deviceAt(mapToScene(pos));
    if (device == nullptr) {
        return false;
    }
    const QString path = device->data(kRefKey).toString();
    if (mime->hasFormat(QString::fromLatin1(kPaletteMime))) {
        emit paletteDropped(QString::fromLatin1(mime->data(QString::fromLatin1(kPaletteMime))),
                            path);
        return true;
    }
    const QStringList range =
        QString::fromLatin1(mime->data(QString::fromLatin1(kLayersMime))).split(QLatin1Char(','));
    if (range.size() != 2) {
        return false;
    }
    emit layersDropped(range[0].toInt(), range[1].toInt(), path);
    return true;
}

void TopologyView::dropEvent(QDropEvent* event) {
    if (!dropAt(event->position().toPoint(), event->mimeData())) {
        event->ignore();
        return;
    }
    // A copy: the source must not delete what it dragged, the drop already
    // moved the layers.
    event->setDropAction(Qt::CopyAction);
    event->accept();
}

void TopologyView::mousePressEvent(QMouseEvent* event) {
    if (event->button() == Qt::MiddleButton || (event->button() == Qt::LeftButton && space_held_)) {
        panning_ = true;
        pan_last_ = event->pos();
        viewport()->setCursor(Qt::ClosedHandCursor);
        event->accept();
        return;
    }
    QGraphicsView::mousePressEvent(event);
    press_pos_ = event->pos();
    pressed_chip_ = -1;
    if (event->button() != Qt::LeftButton) {
        return;
    }
    QGraphicsItem* item = itemAt(event->pos());
    // Chips too small to read are not drawn: the press is on their device.
    QGraphicsItem* chip = showsDetail() ? tagged(item, TopologyItemKind::chip) : nullptr;
    if (chip != nullptr) {
        pressed_chip_ = chip->data(kRefKey).toInt();
        emit layerClicked(pressed_chip_);
    } else if (QGraphicsItem* device = tagged(item, TopologyItemKind::device)) {
        emit deviceClicked(device->data(kRefKey).toString());
    } else if (QGraphicsItem* container = tagged(item, TopologyItemKind::container)) {
        emit containerClicked(container->data(kRefKey).toString());
    } else {
        emit backgroundClicked();
    }
}

void TopologyView::mouseMoveEvent(QMouseEvent* event) {
    if (panning_) {
        const QPoint delta = event->pos() - pan_last_;
        pan_last_ = event->pos();
        if (fitted_) {
            fitted_ = false;
            updateScrollRoom();
        }
        horizontalScrollBar()->setValue(horizontalScrollBar()->value() - delta.x());
        verticalScrollBar()->setValue(verticalScrollBar()->value() - delta.y());
        event->accept();
        return;
    }
    QGraphicsView::mouseMoveEvent(event);
    if (pressed_chip_ < 0 || !(event->buttons() & Qt::LeftButton) ||
        (event->pos() - press_pos_).manhattanLength() < QApplication::startDragDistance()) {
        return;
    }
    auto* mime = new QMimeData;
    mime->setData(QString::fromLatin1(kLayersMime),
                  QStringLiteral("%1,%1").arg(pressed_chip_).toLatin1());
    auto* drag = new QDrag(this);
    drag->setMimeData(mime);
    pressed_chip_ = -1;
    drag->exec(Qt::CopyAction | Qt::MoveAction);
}

void TopologyView::mouseReleaseEvent(QMouseEvent* event) {
    if (panning_) {
        endPan();
        event->accept();
        return;
    }
    QGraphicsView::mouseReleaseEvent(event);
}

void TopologyView::mouseDoubleClickEvent(QMouseEvent* event) {
    QGraphicsItem* item = itemAt(event->pos());
    QGraphicsItem* node = tagged(item, TopologyItemKind::node);
    if (event->button() != Qt::LeftButton || node == nullptr) {
        QGraphicsView::mouseDoubleClickEvent(event);
        return;
    }
    const QString name = node->data(kRefKey).toString();
    const bool collapsed = scene_->isNodeCollapsed(name);
    // An expanded node collapses from its frame or title; a double-click on
    // one of its devices or containers is theirs.
    if (!collapsed && (tagged(item, TopologyItemKind::container) != nullptr ||
                       tagged(item, TopologyItemKind::device) != nullptr)) {
        QGraphicsView::mouseDoubleClickEvent(event);
        return;
    }
    scene_->setNodeCollapsed(name, !collapsed);
    if (!fitted_) {
        if (QGraphicsItem* rebuilt = scene_->nodeItem(name)) {
            centerOn(rebuilt);
        }
    }
    event->accept();
}

void TopologyView::contextMenuEvent(QContextMenuEvent* event) {
    QGraphicsItem* item = itemAt(event->pos());
    QMenu menu(this);
    if (QGraphicsItem* device = tagged(item, TopologyItemKind::device)) {
        const QString path = device->data(kRefKey).toString();
        menu.addAction(tr("Rename device %1…").arg(path), this,
                       [this, path] { emit renameRequested(path); });
        menu.addAction(tr("Remove device %1").arg(path), this,
                       [this, path] { emit removeDeviceRequested(path); });
        menu.addSeparator();
    }
    if (QGraphicsItem* container = tagged(item, TopologyItemKind::container)) {
        const QString path = container->data(kRefKey).toString();
        menu.addAction(tr("Rename container %1…").arg(path), this,
                       [this, path] { emit renameRequested(path); });
        menu.addAction(tr("Remove container %1").arg(path), this,
                       [this, path] { emit removeContainerRequested(path); });
        QMenu* add = menu.addMenu(tr("Add device to %1").arg(path));
        for (const DeviceSpec& spec : DeviceCatalog::builtin().specs()) {
            const QString name = QString::fromStdString(spec.name);
            add->addAction(name, this, [this, path, name] { emit addDeviceRequested(path, name); })
                ->setToolTip(QString::fromStdString(spec.description));
        }
    }
    if (QGraphicsItem* node = tagged(item, TopologyItemKind::node)) {
        const QString name = node->data(kRefKey).toString();
        if (scene_->isNodeCollapsed(name)) {
            menu.addAction(tr("Expand node %1").arg(name), this,
                           [this, name] { scene_->setNodeCollapsed(name, false); });
        } else {
            menu.addAction(tr("Collapse node %1").arg(name), this,
                           [this, name] { scene_->setNodeCollapsed(name, true); });
        }
        menu.addAction(tr("Add container to %1").arg(name), this,
                       [this, name] { emit addContainerRequested(name); });
        menu.addSeparator();
        menu.addAction(tr("Rename node %1…").arg(name), this,
                       [this, name] { emit renameRequested(name); });
        menu.addAction(tr("Remove node %1").arg(name), this,
                       [this, name] { emit removeNodeRequested(name); });
        menu.addSeparator();
    }
    menu.addAction(tr("Add node"), this, [this] { emit addNodeRequested(); });
    menu.addSeparator();
    menu.addAction(tr("Collapse all nodes"), this, [this] { scene_->setAllNodesCollapsed(true); })
        ->setEnabled(scene_->collapsedCount() < scene_->nodeCount());
    menu.addAction(tr("Expand all nodes"), this, [this] { scene_->setAllNodesCollapsed(false); })
        ->setEnabled(scene_->collapsedCount() > 0);
    menu.addAction(tr("Fit to view"), this, &TopologyView::fitToView);
    menu.addAction(tr("Find device…"), this, &TopologyView::findRequested);
    menu.exec(event->globalPos());
}

}  // namespace pipewright::gui
