#include "topology/topology_scene.h"

#include <QGraphicsRectItem>
#include <QPen>
#include <QVariant>

#include "studio_core/canvas/canvas_detail.h"
#include "studio_core/canvas/canvas_flow.h"
#include "studio_core/canvas/node_load.h"
#include "studio_core/project/project_edit.h"
#include "style/colors.h"
#include "topology/topology_items.h"

namespace pipewright::gui {

namespace {

constexpr double kGap = 16;     // between node boxes
constexpr double kMargin = 8;   // around the cluster
constexpr int kBasePenKey = 2;  // the pen a device has when not highlighted

QGraphicsItem* tagged_ancestor(QGraphicsItem* item, TopologyItemKind kind) {
    for (QGraphicsItem* p = item; p != nullptr; p = p->parentItem()) {
        if (p->data(kKindKey).toInt() == static_cast<int>(kind)) {
            return p;
        }
    }
    return nullptr;
}

}  // namespace

TopologyScene::TopologyScene(QObject* parent) : QGraphicsScene(parent) {}

TopologyScene::~TopologyScene() = default;

void TopologyScene::rebuild(const Project& project, const std::vector<DeviceMetrics>& metrics,
                            const QSet<QString>& problems,
                            const std::map<std::string, ReplicaRole>& replicas) {
    project_ = project;
    metrics_ = metrics;
    metrics_index_ = DeviceMetricsIndex(metrics_);
    problems_ = problems;
    replicas_ = replicas;
    relayout();
}

void TopologyScene::relayout() {
    clear();
    devices_.clear();
    nodes_.clear();
    chips_.clear();
    drop_target_ = nullptr;

    layers_of_device_.clear();
    const auto devices_of_layer = layer_devices(project_);
    for (std::size_t l = 0; l < devices_of_layer.size(); ++l) {
        layers_of_device_[devices_of_layer[l]].push_back(l);
    }
    stage_of_layer_ = layer_stages(project_);
    // Ranks are the placement's devices in order of first appearance.
    pipeline_ranks_.clear();
    std::map<std::string, std::size_t> rank_of;
    for (std::size_t st = 0; st < project_.placement.size(); ++st) {
        const std::string& device = project_.placement[st].device;
        const auto [it, added] = rank_of.emplace(device, rank_of.size());
        if (added) {
            pipeline_ranks_.push_back({device, {}});
        }
        pipeline_ranks_[it->second].stages.push_back(static_cast<int>(st));
    }
    // Every rank of every replica leads a group of the devices after it.
    group_members_.clear();
    std::vector<std::string> leaders;
    for (const PipelineRank& r : pipeline_ranks_) {
        leaders.push_back(r.device);
    }
    for (const auto& [path, role] : replicas_) {
        if (role.replica > 0) {
            leaders.push_back(path);
        }
    }
    for (const auto& [leader, members] : tensor_group_members(project_, leaders)) {
        for (std::size_t k = 0; k < members.size(); ++k) {
            group_members_.emplace(members[k], GroupMember{leader, static_cast<int>(k) + 1});
        }
    }

    const CanvasStyle style = CanvasStyle::fromApplication();
    std::vector<QGraphicsRectItem*> boxes;
    std::vector<QSizeF> sizes;
    CanvasFlow flow;
    const auto build = [&] {
        devices_.clear();
        chips_.clear();
        for (QGraphicsRectItem* box : boxes) {
            delete box;
        }
        boxes.clear();
        sizes.clear();
        for (std::size_t n = 0; n < project_.topology.nodes.size(); ++n) {
            boxes.push_back(buildNode(static_cast<int>(n), style));
            sizes.push_back(boxes.back()->rect().size());
        }
        flow = flow_boxes(sizes, kGap, aspect_);
        return std::min(aspect_ / std::max(flow.size.width(), 1.0),
                        1.0 / std::max(flow.size.height(), 1.0));
    };
    // How many devices a container lays side by side. A small project tries
    // each count and keeps the one that the view shows largest (two GPUs
    // side by side, four stacked in a narrow canvas); a large one, whose
    // nodes are mostly collapsed, takes eight, as the machines are built.
    if (deviceCount() <= kCollapseAboveDevices) {
        int best = 1;
        double best_scale = 0;
        for (int per_row = 1; per_row <= 8; ++per_row) {
            devices_per_row_ = per_row;
            const double scale = build();
            if (scale > best_scale * 1.0001) {
                best = per_row;
                best_scale = scale;
            }
        }
        devices_per_row_ = best;
    } else {
        devices_per_row_ = 8;
    }
    build();
    for (std::size_t n = 0; n < boxes.size(); ++n) {
        addItem(boxes[n]);
        nodes_[QString::fromStdString(project_.topology.nodes[n].name)] = boxes[n];
    }
    double common_name = 0;
    std::vector<NodeSummaryBox*> summaries;
    for (QGraphicsRectItem* box : boxes) {
        if (auto* summary = dynamic_cast<NodeSummaryBox*>(box)) {
            summaries.push_back(summary);
            common_name = summaries.size() == 1 ? summary->namePixels()
                                                : std::min(common_name, summary->namePixels());
        }
    }
    for (NodeSummaryBox* summary : summaries) {
        summary->setCommonNamePixels(common_name);
    }
    for (std::size_t i = 0; i < boxes.size(); ++i) {
        boxes[i]->setPos(flow.positions[i]);
    }
    for (auto& [path, device] : devices_) {
        device->setData(kBasePenKey, QVariant::fromValue(device->pen()));
        if (!detail_shown_) {
            for (QGraphicsItem* child : device->childItems()) {
                child->setVisible(false);
            }
        }
    }
    setSceneRect(QRectF(QPointF(0, 0), flow.size).adjusted(-kMargin, -kMargin, kMargin, kMargin));
    applyHighlight(true);
    selectLayers(selected_first_, selected_last_);
    emit rebuilt();
}

QGraphicsRectItem* TopologyScene::buildNode(int node, const CanvasStyle& style) {
    const Node& n = project_.topology.nodes[static_cast<std::size_t>(node)];
    const QString name = QString::fromStdString(n.name);
    if (!collapsed_.contains(name)) {
        return buildExpandedNode(node, style);
    }
    auto* box = new NodeSummaryBox(node_load(project_, node, metrics_index_), style);
    box->setData(kKindKey, static_cast<int>(TopologyItemKind::node));
    box->setData(kRefKey, name);
    box->setBrush(style.dark ? QColor(0x1D, 0x20, 0x24) : QColor(0xE2, 0xE7, 0xEE));
    box->setPen(QPen(style.dark_line, 1.5));
    for (QGraphicsItem* child : box->childItems()) {
        if (auto* cell = dynamic_cast<DeviceCell*>(child)) {
            const QString path = QString::fromStdString(cell->load().path);
            cell->setData(kKindKey, static_cast<int>(TopologyItemKind::device));
            cell->setData(kRefKey, path);
            if (problems_.contains(path)) {
                cell->setPen(QPen(warning_color(), 1.5, Qt::DashLine));
            }
            devices_[path] = cell;
        }
    }
    return box;
}

QGraphicsRectItem* TopologyScene::deviceAt(const QPointF& pos) const {
    for (QGraphicsItem* item : items(pos)) {
        if (QGraphicsItem* device = tagged_ancestor(item, TopologyItemKind::device)) {
            return static_cast<QGraphicsRectItem*>(device);
        }
    }
    return nullptr;
}

QGraphicsRectItem* TopologyScene::deviceItem(const QString& path) const {
    auto it = devices_.find(path);
    return it == devices_.end() ? nullptr : it->second;
}

QGraphicsRectItem* TopologyScene::nodeItem(const QString& name) const {
    auto it = nodes_.find(name);
    return it == nodes_.end() ? nullptr : it->second;
}

QGraphicsRectItem* TopologyScene::chipItem(int index) const {
    auto it = chips_.find(index);
    return it == chips_.end() ? nullptr : it->second;
}

void TopologyScene::setDropTarget(QGraphicsRectItem* device) {
    if (device == drop_target_) {
        return;
    }
    if (drop_target_ != nullptr) {
        drop_target_->setOpacity(1.0);
    }
    drop_target_ = device;
    if (drop_target_ != nullptr) {
        drop_target_->setOpacity(0.7);
    }
}

void TopologyScene::selectLayers(int first, int last) {
    selected_first_ = first;
    selected_last_ = last;
    const QColor highlight = CanvasStyle::fromApplication().highlight;
    for (auto& [index, chip] : chips_) {
        const bool selected = index >= first && index <= last;
        if (selected) {
            chip->setPen(QPen(highlight, 2.5));
        } else {
            chip->setPen(QPen(chip->brush().color().darker(140), 1));
        }
    }
}

bool TopologyScene::isNodeCollapsed(const QString& node) const {
    return collapsed_.contains(node);
}

void TopologyScene::setNodeCollapsed(const QString& node, bool collapsed) {
    if (collapsed_.contains(node) == collapsed) {
        return;
    }
    if (collapsed) {
        collapsed_.insert(node);
    } else {
        collapsed_.remove(node);
    }
    relayout();
}

void TopologyScene::setAllNodesCollapsed(bool collapsed) {
    QSet<QString> now;
    if (collapsed) {
        for (const Node& n : project_.topology.nodes) {
            now.insert(QString::fromStdString(n.name));
        }
    }
    if (now == collapsed_) {
        return;
    }
    collapsed_ = now;
    relayout();
}

void TopologyScene::startProject(const Project& project) {
    project_ = project;
    metrics_.clear();
    highlighted_.clear();
    selected_first_ = -1;
    selected_last_ = -2;
    collapsed_.clear();
    int devices = 0;
    for (const Node& n : project.topology.nodes) {
        for (const Container& c : n.containers) {
            devices += static_cast<int>(c.devices.size());
        }
    }
    if (opens_collapsed(devices)) {
        for (const Node& n : project.topology.nodes) {
            collapsed_.insert(QString::fromStdString(n.name));
        }
    }
}

int TopologyScene::collapsedCount() const {
    int count = 0;
    for (const Node& n : project_.topology.nodes) {
        count += collapsed_.contains(QString::fromStdString(n.name)) ? 1 : 0;
    }
    return count;
}

int TopologyScene::nodeCount() const {
    return static_cast<int>(project_.topology.nodes.size());
}

int TopologyScene::deviceCount() const {
    int count = 0;
    for (const Node& n : project_.topology.nodes) {
        for (const Container& c : n.containers) {
            count += static_cast<int>(c.devices.size());
        }
    }
    return count;
}

QString TopologyScene::nodeOf(const QString& path) {
    return path.section(QLatin1Char('/'), 0, 0);
}

void TopologyScene::setHighlightedDevice(const QString& path) {
    applyHighlight(false);
    highlighted_ = path;
    applyHighlight(true);
}

void TopologyScene::applyHighlight(bool on) {
    QGraphicsRectItem* device = deviceItem(highlighted_);
    if (device == nullptr) {
        return;
    }
    if (on) {
        device->setPen(QPen(CanvasStyle::fromApplication().highlight, 4));
        device->setZValue(1);  // the outline above its neighbours'
    } else {
        device->setPen(device->data(kBasePenKey).value<QPen>());
        device->setZValue(0);
    }
}

void TopologyScene::setLayoutAspect(double aspect) {
    if (aspect <= 0 || std::abs(aspect - aspect_) < 0.05 * aspect_) {
        return;
    }
    aspect_ = aspect;
    relayout();
}

void TopologyScene::setDetailShown(bool shown) {
    if (shown == detail_shown_) {
        return;
    }
    detail_shown_ = shown;
    for (auto& [path, device] : devices_) {
        for (QGraphicsItem* child : device->childItems()) {
            child->setVisible(shown);
        }
    }
}

double TopologyScene::detailTextPixels() const {
    return CanvasStyle::fromApplication().small_pixels;
}

}  // namespace pipewright::gui
