// An expanded node of the cluster canvas: its containers, their devices in
// rows, and the layers each device runs as chips.
#include <QFontMetrics>
#include <QPen>

#include "pipewright/core/transformer_dims.h"
#include "studio_core/canvas/node_load.h"
#include "studio_core/format/format.h"
#include "style/colors.h"
#include "topology/topology_items.h"
#include "topology/topology_scene.h"

namespace pipewright::gui {

namespace {

constexpr double kPad = 8;
constexpr double kHeader = 20;
constexpr double kDeviceWidth = 230;
constexpr double kChipHeight = 18;
constexpr double kChipGap = 3;
void tag(QGraphicsItem* item, TopologyItemKind kind, const QVariant& ref) {
    item->setData(kKindKey, static_cast<int>(kind));
    item->setData(kRefKey, ref);
}

CanvasLabel* label(QGraphicsItem* parent, const QString& text, const QFont& font,
                   const QColor& color, QPointF at) {
    auto* item = new CanvasLabel(text, font, color, parent);
    item->setPos(at);
    return item;
}

}  // namespace

QGraphicsRectItem* TopologyScene::buildExpandedNode(int index, const CanvasStyle& style) {
    const Node& node = project_.topology.nodes[static_cast<std::size_t>(index)];
    const NodeLoad loads = node_load(project_, index, metrics_index_);
    const QFontMetrics small_metrics(style.small);

    auto* node_box = new QGraphicsRectItem;
    tag(node_box, TopologyItemKind::node, QString::fromStdString(node.name));
    node_box->setToolTip(tr("Node %1 · double-click to collapse · right-click to add a container")
                             .arg(QString::fromStdString(node.name)));
    label(node_box, QStringLiteral("▾ %1").arg(QString::fromStdString(node.name)), style.bold,
          style.text, {kPad, 2});
    double cy = kHeader + kPad;
    double node_width = 160;
    std::size_t device_index = 0;
    for (const Container& container : node.containers) {
        auto* cbox = new QGraphicsRectItem(node_box);
        const QString cpath = QString::fromStdString(node.name + "/" + container.name);
        tag(cbox, TopologyItemKind::container, cpath);
        cbox->setToolTip(tr("Container %1 · right-click to add a device").arg(cpath));
        label(cbox, QString::fromStdString(container.name), style.bold, style.text, {kPad, 2});
        double dx = kPad;
        double dy = kHeader + 4;
        double row_height = 0;
        double cwidth = 140;
        int in_row = 0;
        const int per_row = devices_per_row_;
        for (const Device& device : container.devices) {
            const DeviceLoad& load = loads.devices[device_index++];
            const std::string& path = load.path;
            const QString qpath = QString::fromStdString(path);
            if (in_row == per_row) {
                dx = kPad;
                dy += row_height + kPad;
                row_height = 0;
                in_row = 0;
            }
            auto* dbox = new DeviceBox(load, style.small_pixels, cbox);
            tag(dbox, TopologyItemKind::device, qpath);
            devices_[qpath] = dbox;

            const bool over = load.over;
            // Before the first simulation nothing is known yet; after it, a
            // device the simulation did not list holds no layer.
            QString memory = metrics_.empty() ? QString() : tr("not used");
            if (load.simulated) {
                memory = tr("%1 / %2").arg(format_bytes(static_cast<double>(load.peak_bytes)),
                                           format_bytes(static_cast<double>(load.capacity_bytes)));
            }
            const QColor ink = over ? warning_color() : style.text;
            label(dbox, QString::fromStdString(device.name), style.bold, ink, {kPad, 2});
            label(dbox,
                  QString::fromStdString(device.spec) +
                      (memory.isEmpty() ? QString() : QStringLiteral(" · ") + memory),
                  style.small, ink, {kPad, 2 + kHeader - 2});

            // Chips flow left to right in model order, wrapping at the box's edge.
            double x = kPad;
            double cy_chip = 2 * kHeader + 2;
            const auto add_chip = [&](const QString& text, const QColor& fill, const QColor& edge,
                                      Qt::PenStyle line) {
                const double w =
                    std::min(kDeviceWidth - 2 * kPad,
                             static_cast<double>(small_metrics.horizontalAdvance(text)) + 10);
                if (x + w > kDeviceWidth - kPad) {
                    x = kPad;
                    cy_chip += kChipHeight + kChipGap;
                }
                auto* chip = new ChipItem(QRectF(0, 0, w, kChipHeight), style.small_pixels, dbox);
                chip->setPos(x, cy_chip);
                chip->setBrush(fill);
                chip->setPen(QPen(edge, 1, line));
                label(chip, small_metrics.elidedText(text, Qt::ElideRight, static_cast<int>(w) - 6),
                      style.small, Qt::black, {3, 1});
                x += w + kChipGap;
                return chip;
            };
            const auto on_device = layers_of_device_.find(path);
            for (const std::size_t l : on_device == layers_of_device_.end()
                                           ? std::vector<std::size_t>{}
                                           : on_device->second) {
                const QString name = QString::fromStdString(project_.model.layers[l].name);
                const QColor colour = stage_color(stage_of_layer_[l]);
                auto* chip = add_chip(name, colour, colour.darker(140), Qt::SolidLine);
                QString tip = tr("%1 (%2) · stage %3 · drag to another device")
                                  .arg(name, QString::fromStdString(project_.model.layers[l].type))
                                  .arg(stage_of_layer_[l]);
                if (const int experts = project_.expert_parallel.size;
                    experts > 1 && has_experts(project_.model.layers[l])) {
                    tip += tr("<br>Expert parallelism: share 1 of %1 of its experts is here; "
                              "replicas 1 to %2 hold the others")
                               .arg(experts)
                               .arg(experts - 1);
                }
                if (const int context = project_.context_parallel.size; context > 1) {
                    tip += tr("<br>Context parallelism: it runs part 1 of %1 of every "
                              "sequence; replicas 1 to %2 run the others")
                               .arg(context)
                               .arg(context - 1);
                }
                chip->setToolTip(tip);
                tag(chip, TopologyItemKind::chip, static_cast<int>(l));
                chips_[static_cast<int>(l)] = chip;
            }
            // Another replica's device: the stages it runs as its twin in
            // replica 0 does, not draggable (the placement is replica 0's).
            const auto role = replicas_.find(path);
            if (role != replicas_.end() && role->second.replica > 0 &&
                static_cast<std::size_t>(role->second.rank) < pipeline_ranks_.size()) {
                const ReplicaRole& r = role->second;
                const PipelineRank& twin = pipeline_ranks_[static_cast<std::size_t>(r.rank)];
                const int experts = project_.expert_parallel.size;
                for (const int st : twin.stages) {
                    QString text = tr("replica %1 · stage %2").arg(r.replica).arg(st);
                    QString tip =
                        tr("Replica %1 runs stage %2 here on its share of the batch, as %3 does "
                           "for replica 0; their gradients are averaged after each backward")
                            .arg(r.replica)
                            .arg(st)
                            .arg(QString::fromStdString(twin.device));
                    if (experts > 1) {
                        // Megatron-LM's expert groups: consecutive replicas.
                        const int share = r.replica % experts + 1;
                        text += tr(" · experts %1/%2").arg(share).arg(experts);
                        tip += tr("<br>Expert parallelism: it holds share %1 of %2 of each "
                                  "mixture-of-experts block's experts, computes the tokens its "
                                  "expert group routes to them, and averages their gradients "
                                  "with the replicas that hold the same share")
                                   .arg(share)
                                   .arg(experts);
                    }
                    if (const int context = project_.context_parallel.size; context > 1) {
                        // Megatron-LM's context groups: consecutive replicas.
                        const int part = r.replica % context + 1;
                        text += tr(" · context %1/%2").arg(part).arg(context);
                        tip += tr("<br>Context parallelism: it runs part %1 of %2 of every "
                                  "sequence of its group's samples (a chunk from each end), and "
                                  "exchanges keys and values with the group's other replicas")
                                   .arg(part)
                                   .arg(context);
                    }
                    auto* chip = add_chip(text, stage_color(st).lighter(115),
                                          stage_color(st).darker(140), Qt::DashLine);
                    chip->setToolTip(tip);
                }
            }
            // A tensor-parallel group's other device: its slice of what the
            // group's first device runs.
            if (const auto member = group_members_.find(path); member != group_members_.end()) {
                const GroupMember& m = member->second;
                int replica = 0;
                std::vector<int> stages;
                for (const PipelineRank& r : pipeline_ranks_) {
                    if (r.device == m.leader) {
                        stages = r.stages;
                    }
                }
                if (const auto leads = replicas_.find(m.leader);
                    stages.empty() && leads != replicas_.end() &&
                    static_cast<std::size_t>(leads->second.rank) < pipeline_ranks_.size()) {
                    replica = leads->second.replica;
                    stages = pipeline_ranks_[static_cast<std::size_t>(leads->second.rank)].stages;
                }
                const int size = project_.tensor_parallel.size;
                for (const int st : stages) {
                    const QString text =
                        replica > 0
                            ? tr("replica %1 · stage %2 · %3/%4")
                                  .arg(replica)
                                  .arg(st)
                                  .arg(m.slice + 1)
                                  .arg(size)
                            : tr("stage %1 · slice %2/%3").arg(st).arg(m.slice + 1).arg(size);
                    auto* chip = add_chip(text, stage_color(st).lighter(125),
                                          stage_color(st).darker(140), Qt::DotLine);
                    chip->setToolTip(
                        tr("Tensor parallelism: slice %1 of %2 of stage %3 runs here, in the "
                           "group that %4 leads; each of the stage's matrices is split over "
                           "the group's %2 devices, which all-reduce their partial results")
                            .arg(m.slice + 1)
                            .arg(size)
                            .arg(st)
                            .arg(QString::fromStdString(m.leader)));
                }
            }
            const double dheight = std::max(70.0, cy_chip + kChipHeight + kPad);
            dbox->setRect(0, 0, kDeviceWidth, dheight);
            dbox->setPos(dx, dy);
            QColor fill = style.dark ? QColor(0x2B, 0x30, 0x36) : QColor(0xFF, 0xFF, 0xFF);
            if (over) {
                fill = style.dark ? QColor(0x5A, 0x1E, 0x1E) : QColor(0xFB, 0xE3, 0xE3);
            }
            dbox->setBrush(fill);
            QPen pen(over ? warning_color() : style.mid, over ? 2.5 : 1.2);
            if (problems_.contains(qpath)) {
                pen = QPen(warning_color(), 2, Qt::DashLine);
            }
            dbox->setPen(pen);
            dbox->setToolTip(over ? tr("%1 is over its memory capacity").arg(qpath)
                                  : tr("%1 · drop layers here · right-click for more").arg(qpath));
            dx += kDeviceWidth + kPad;
            cwidth = std::max(cwidth, dx);
            row_height = std::max(row_height, dheight);
            ++in_row;
        }
        const double cheight = dy + std::max(row_height, 40.0) + kPad;
        cbox->setRect(0, 0, cwidth, cheight);
        cbox->setPos(kPad, cy);
        cbox->setBrush(style.dark ? QColor(0x24, 0x28, 0x2D) : QColor(0xEE, 0xF1, 0xF5));
        cbox->setPen(QPen(style.mid, 1, Qt::DashLine));
        cy += cheight + kPad;
        node_width = std::max(node_width, cwidth + 2 * kPad);
    }
    node_box->setRect(0, 0, node_width, std::max(cy, 2 * kHeader));
    node_box->setBrush(style.dark ? QColor(0x1D, 0x20, 0x24) : QColor(0xE2, 0xE7, 0xEE));
    node_box->setPen(QPen(style.dark_line, 1.5));
    return node_box;
}

}  // namespace pipewright::gui
