#pragma once

#include <QGraphicsScene>
#include <QSet>
#include <map>

#include "pipewright/core/project.h"
#include "pipewright/core/timeline_metrics.h"

class QGraphicsRectItem;

namespace pipewright::gui {

// What a box of the canvas stands for, kept in item data.
enum class TopologyItemKind { node = 1, container, device, chip };
inline constexpr int kKindKey = 0;  // QGraphicsItem::data key: TopologyItemKind
inline constexpr int kRefKey = 1;   // device path, "node" / "node/container", or layer index

// The cluster as nested boxes (nodes ▸ containers ▸ devices) with the layers
// each device runs drawn as chips coloured by stage. Rebuilt from the project
// after every change: a few hundred items at most.
class TopologyScene : public QGraphicsScene {
    Q_OBJECT

  public:
    explicit TopologyScene(QObject* parent = nullptr);

    // `devices` gives the memory of each device from the latest simulation
    // (may be empty); `problems` are device paths to outline.
    void rebuild(const Project& project, const std::vector<DeviceMetrics>& devices,
                 const QSet<QString>& problems);
    // The device box under scene position `pos`, or null.
    [[nodiscard]] QGraphicsRectItem* deviceAt(const QPointF& pos) const;
    [[nodiscard]] QGraphicsRectItem* deviceItem(const QString& path) const;
    void setDropTarget(QGraphicsRectItem* device);
    // Marks the chips of layers [first, last] as selected.
    void selectLayers(int first, int last);

  private:
    std::map<QString, QGraphicsRectItem*> devices_;
    std::map<int, QGraphicsRectItem*> chips_;
    QGraphicsRectItem* drop_target_ = nullptr;
};

}  // namespace pipewright::gui
