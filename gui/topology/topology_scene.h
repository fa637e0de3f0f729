#pragma once

#include <QGraphicsScene>
#include <QSet>
#include <map>
#include <string>

#include "pipewright/core/project.h"
#include "pipewright/core/timeline_metrics.h"
#include "studio_core/canvas/node_load.h"
#include "studio_core/canvas/replica_view.h"

class QGraphicsRectItem;

namespace pipewright::gui {

struct CanvasStyle;

// What a box of the canvas stands for, kept in item data.
enum class TopologyItemKind { node = 1, container, device, chip };
inline constexpr int kKindKey = 0;  // QGraphicsItem::data key: TopologyItemKind
inline constexpr int kRefKey = 1;   // device path, "node" / "node/container", or layer index

// The cluster as nested boxes (nodes ▸ containers ▸ devices) with the layers
// each device runs drawn as chips coloured by stage. A node can be collapsed
// into one summary box with a load and a memory bar per device (a
// DeviceCell, which is a device to clicks and drops like a full box). Node
// boxes flow into rows shaped like the view. Rebuilt from the project after
// every change, and from the last inputs when a node is collapsed or
// expanded.
class TopologyScene : public QGraphicsScene {
    Q_OBJECT

  public:
    explicit TopologyScene(QObject* parent = nullptr);
    ~TopologyScene() override;

    // `devices` gives the memory of each device from the latest simulation
    // (may be empty); `problems` are device paths to outline.
    // `replicas` says which data-parallel replica each device serves
    // (replica_view.h); empty without data parallelism.
    void rebuild(const Project& project, const std::vector<DeviceMetrics>& devices,
                 const QSet<QString>& problems,
                 const std::map<std::string, ReplicaRole>& replicas = {});
    // The device box (or collapsed node's cell) under scene position `pos`, or null.
    [[nodiscard]] QGraphicsRectItem* deviceAt(const QPointF& pos) const;
    [[nodiscard]] QGraphicsRectItem* deviceItem(const QString& path) const;
    [[nodiscard]] QGraphicsRectItem* nodeItem(const QString& name) const;
    // The chip of layer `index`, or null when its node is collapsed.
    [[nodiscard]] QGraphicsRectItem* chipItem(int index) const;
    void setDropTarget(QGraphicsRectItem* device);
    // Marks the chips of layers [first, last] as selected (kept across rebuilds).
    void selectLayers(int first, int last);

    // A project opened in place of the last: forgets what was collapsed,
    // highlighted and selected, and collapses every node when the project
    // is too large to read expanded (opens_collapsed). Takes effect at the
    // rebuild that follows.
    void startProject(const Project& project);
    // Collapsing: by node name, kept across rebuilds while the name lasts.
    [[nodiscard]] bool isNodeCollapsed(const QString& node) const;
    void setNodeCollapsed(const QString& node, bool collapsed);
    void setAllNodesCollapsed(bool collapsed);
    [[nodiscard]] int collapsedCount() const;
    [[nodiscard]] int nodeCount() const;
    [[nodiscard]] int deviceCount() const;
    // The node a device path is in.
    [[nodiscard]] static QString nodeOf(const QString& path);

    // Outlines one device (the find bar's match); empty for none.
    void setHighlightedDevice(const QString& path);
    [[nodiscard]] QString highlightedDevice() const { return highlighted_; }

    // Width over height of the view: node boxes flow into rows that give
    // the whole cluster about this shape. Rebuilds when it changes much.
    void setLayoutAspect(double aspect);
    // The pixel size of the chips' text at zoom 1: below the zoom that makes
    // it readable, devices draw as bars.
    [[nodiscard]] double detailTextPixels() const;
    // Hides the devices' names and chips where the view draws devices as
    // bars (they would draw nothing), so that painting a zoomed-out canvas
    // does not visit them: 4,600 of the 5,600 items of 1,024 devices.
    void setDetailShown(bool shown);
    [[nodiscard]] const Project& project() const { return project_; }

  signals:
    // After every rebuild, with the collapsed nodes as they now are.
    void rebuilt();

  private:
    void relayout();
    QGraphicsRectItem* buildNode(int node, const CanvasStyle& style);
    QGraphicsRectItem* buildExpandedNode(int node, const CanvasStyle& style);
    void applyHighlight(bool on);

    Project project_;
    std::vector<DeviceMetrics> metrics_;
    DeviceMetricsIndex metrics_index_;  // into metrics_
    QSet<QString> problems_;
    QSet<QString> collapsed_;
    QString highlighted_;
    double aspect_ = 1.5;
    int devices_per_row_ = 8;  // in an expanded container
    bool detail_shown_ = true;
    int selected_first_ = -1;
    int selected_last_ = -2;
    // Of project_, for the chips: device path -> its layers in model order.
    std::map<std::string, std::vector<std::size_t>> layers_of_device_;
    std::vector<int> stage_of_layer_;
    std::map<std::string, ReplicaRole> replicas_;
    // The placement's ranks (its devices in order of first appearance), for
    // what the other replicas' devices run.
    struct PipelineRank {
        std::string device;
        std::vector<int> stages;
    };
    std::vector<PipelineRank> pipeline_ranks_;
    // With tensor parallelism: each group's other devices -> the device that
    // leads the group (whose stages they share) and their slice (1 .. T-1).
    struct GroupMember {
        std::string leader;
        int slice = 0;
    };
    std::map<std::string, GroupMember> group_members_;
    std::map<QString, QGraphicsRectItem*> devices_;
    std::map<QString, QGraphicsRectItem*> nodes_;
    std::map<int, QGraphicsRectItem*> chips_;
    QGraphicsRectItem* drop_target_ = nullptr;
};

}  // namespace pipewright::gui
