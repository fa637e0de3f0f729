#include "topology/topology_view.h"

#include <QApplication>
#include <QContextMenuEvent>
#include <QDrag>
#include <QGraphicsRectItem>
#include <QMenu>
#include <QMimeData>

#include "editor/model_table_model.h"
#include "pipewright/core/device_catalog.h"
#include "topology/topology_scene.h"

namespace pipewright::gui {

namespace {

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
    setAlignment(Qt::AlignLeft | Qt::AlignTop);
    setDragMode(QGraphicsView::NoDrag);
    setToolTip(tr("Drop layers on a device to place them · right-click to edit the cluster"));
    connect(scene_, &QGraphicsScene::sceneRectChanged, this, [this] { fitScene(); });
}

void TopologyView::fitScene() {
    resetTransform();
    const QRectF rect = scene_->sceneRect();
    const QSize room = viewport()->size();
    if (rect.width() > room.width() || rect.height() > room.height()) {
        const double scale = std::min(room.width() / rect.width(), room.height() / rect.height());
        // Below ~60 % text is unreadable: scroll instead.
        const double s = std::max(scale, 0.6);
        setTransform(QTransform::fromScale(s, s));
    }
}

void TopologyView::resizeEvent(QResizeEvent* event) {
    QGraphicsView::resizeEvent(event);
    fitScene();
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
    QGraphicsView::mousePressEvent(event);
    press_pos_ = event->pos();
    pressed_chip_ = -1;
    if (event->button() != Qt::LeftButton) {
        return;
    }
    QGraphicsItem* item = itemAt(event->pos());
    if (QGraphicsItem* chip = tagged(item, TopologyItemKind::chip)) {
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
    menu.exec(event->globalPos());
}

}  // namespace pipewright::gui
