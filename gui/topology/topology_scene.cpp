#include "topology/topology_scene.h"

#include <QApplication>
#include <QFontMetrics>
#include <QGraphicsRectItem>
#include <QGraphicsSimpleTextItem>
#include <QPalette>
#include <QPen>

#include "studio_core/format.h"
#include "studio_core/project_edit.h"
#include "style/colors.h"

namespace pipewright::gui {

namespace {

constexpr double kPad = 8;
constexpr double kHeader = 20;
constexpr double kDeviceWidth = 230;
constexpr double kChipHeight = 18;
constexpr double kChipGap = 3;

QGraphicsSimpleTextItem* label(QGraphicsItem* parent, const QString& text, const QFont& font,
                               const QColor& color, QPointF at) {
    auto* item = new QGraphicsSimpleTextItem(text, parent);
    item->setFont(font);
    item->setBrush(color);
    item->setPos(at);
    return item;
}

void tag(QGraphicsItem* item, TopologyItemKind kind, const QVariant& ref) {
    item->setData(kKindKey, static_cast<int>(kind));
    item->setData(kRefKey, ref);
}

}  // namespace

TopologyScene::TopologyScene(QObject* parent) : QGraphicsScene(parent) {}

void TopologyScene::rebuild(const Project& project, const std::vector<DeviceMetrics>& metrics,
                            const QSet<QString>& problems) {
    clear();
    devices_.clear();
    chips_.clear();
    drop_target_ = nullptr;

    const QPalette pal = QApplication::palette();
    const QColor text = pal.color(QPalette::Text);
    const bool dark = pal.color(QPalette::Base).lightness() < 128;
    QFont font = QApplication::font();
    QFont bold = font;
    bold.setBold(true);
    QFont small = font;
    small.setPointSizeF(std::max(6.0, font.pointSizeF() * 0.85));
    const QFontMetrics small_metrics(small);

    const auto devices_of_layer = layer_devices(project);
    const auto stage_of_layer = layer_stages(project);
    std::map<std::string, const DeviceMetrics*> metric_of;
    for (const auto& m : metrics) {
        metric_of[m.name] = &m;
    }

    double y = 0;
    for (std::size_t n = 0; n < project.topology.nodes.size(); ++n) {
        const Node& node = project.topology.nodes[n];
        auto* node_box = new QGraphicsRectItem;
        addItem(node_box);
        tag(node_box, TopologyItemKind::node, QString::fromStdString(node.name));
        node_box->setToolTip(
            tr("Node %1 · right-click to add a container").arg(QString::fromStdString(node.name)));
        label(node_box, tr("▣ %1").arg(QString::fromStdString(node.name)), bold, text, {kPad, 2});
        double cy = kHeader + kPad;
        double node_width = 160;
        for (std::size_t c = 0; c < node.containers.size(); ++c) {
            const Container& container = node.containers[c];
            auto* cbox = new QGraphicsRectItem(node_box);
            const QString cpath = QString::fromStdString(node.name + "/" + container.name);
            tag(cbox, TopologyItemKind::container, cpath);
            cbox->setToolTip(tr("Container %1 · right-click to add a device").arg(cpath));
            label(cbox, QString::fromStdString(container.name), bold, text, {kPad, 2});
            double dx = kPad;
            double row_height = 0;
            for (const Device& device : container.devices) {
                const std::string path = node.name + "/" + container.name + "/" + device.name;
                const QString qpath = QString::fromStdString(path);
                auto* dbox = new QGraphicsRectItem(cbox);
                tag(dbox, TopologyItemKind::device, qpath);
                devices_[qpath] = dbox;

                const DeviceMetrics* m = metric_of.count(path) ? metric_of[path] : nullptr;
                const bool over = m != nullptr && !m->fits;
                // Before the first simulation nothing is known yet; after
                // it, a device the simulation did not list holds no layer.
                QString memory = metric_of.empty() ? QString() : tr("not used");
                if (m != nullptr) {
                    memory = tr("%1 / %2").arg(
                        format_bytes(static_cast<double>(m->peak_memory_bytes)),
                        format_bytes(static_cast<double>(m->memory_capacity_bytes)));
                }
                label(dbox, QString::fromStdString(device.name), bold,
                      over ? warning_color() : text, {kPad, 2});
                label(dbox,
                      QString::fromStdString(device.spec) +
                          (memory.isEmpty() ? QString() : QStringLiteral(" · ") + memory),
                      small, over ? warning_color() : text, {kPad, 2 + kHeader - 2});

                // Chips flow left to right in model order.
                double x = kPad;
                double cy_chip = 2 * kHeader + 2;
                for (std::size_t l = 0; l < devices_of_layer.size(); ++l) {
                    if (devices_of_layer[l] != path) {
                        continue;
                    }
                    const QString name = QString::fromStdString(project.model.layers[l].name);
                    const double w =
                        std::min(kDeviceWidth - 2 * kPad,
                                 static_cast<double>(small_metrics.horizontalAdvance(name)) + 10);
                    if (x + w > kDeviceWidth - kPad) {
                        x = kPad;
                        cy_chip += kChipHeight + kChipGap;
                    }
                    auto* chip = new QGraphicsRectItem(0, 0, w, kChipHeight, dbox);
                    chip->setPos(x, cy_chip);
                    chip->setBrush(stage_color(stage_of_layer[l]));
                    chip->setPen(QPen(stage_color(stage_of_layer[l]).darker(140), 1));
                    chip->setToolTip(
                        tr("%1 (%2) · stage %3 · drag to another device")
                            .arg(name, QString::fromStdString(project.model.layers[l].type))
                            .arg(stage_of_layer[l]));
                    tag(chip, TopologyItemKind::chip, static_cast<int>(l));
                    auto* t = label(
                        chip,
                        small_metrics.elidedText(name, Qt::ElideRight, static_cast<int>(w) - 6),
                        small, Qt::black, {3, 1});
                    t->setAcceptedMouseButtons(Qt::NoButton);
                    chips_[static_cast<int>(l)] = chip;
                    x += w + kChipGap;
                }
                const double dheight = std::max(70.0, cy_chip + kChipHeight + kPad);
                dbox->setRect(0, 0, kDeviceWidth, dheight);
                dbox->setPos(dx, kHeader + 4);
                QColor fill = dark ? QColor(0x2B, 0x30, 0x36) : QColor(0xFF, 0xFF, 0xFF);
                if (over) {
                    fill = dark ? QColor(0x5A, 0x1E, 0x1E) : QColor(0xFB, 0xE3, 0xE3);
                }
                dbox->setBrush(fill);
                QPen pen(over ? warning_color() : pal.color(QPalette::Mid), over ? 2.5 : 1.2);
                if (problems.contains(qpath)) {
                    pen = QPen(warning_color(), 2, Qt::DashLine);
                }
                dbox->setPen(pen);
                dbox->setToolTip(
                    over ? tr("%1 is over its memory capacity").arg(qpath)
                         : tr("%1 · drop layers here · right-click for more").arg(qpath));
                dx += kDeviceWidth + kPad;
                row_height = std::max(row_height, dheight);
            }
            const double cwidth = std::max(140.0, dx);
            const double cheight = kHeader + 4 + std::max(row_height, 40.0) + kPad;
            cbox->setRect(0, 0, cwidth, cheight);
            cbox->setPos(kPad, cy);
            cbox->setBrush(dark ? QColor(0x24, 0x28, 0x2D) : QColor(0xEE, 0xF1, 0xF5));
            cbox->setPen(QPen(pal.color(QPalette::Mid), 1, Qt::DashLine));
            cy += cheight + kPad;
            node_width = std::max(node_width, cwidth + 2 * kPad);
        }
        node_box->setRect(0, 0, node_width, std::max(cy, 2 * kHeader));
        node_box->setPos(0, y);
        node_box->setBrush(dark ? QColor(0x1D, 0x20, 0x24) : QColor(0xE2, 0xE7, 0xEE));
        node_box->setPen(QPen(pal.color(QPalette::Dark), 1.5));
        y += node_box->rect().height() + 2 * kPad;
    }
    setSceneRect(itemsBoundingRect().adjusted(-kPad, -kPad, kPad, kPad));
}

QGraphicsRectItem* TopologyScene::deviceAt(const QPointF& pos) const {
    for (QGraphicsItem* item : items(pos)) {
        for (QGraphicsItem* p = item; p != nullptr; p = p->parentItem()) {
            if (p->data(kKindKey).toInt() == static_cast<int>(TopologyItemKind::device)) {
                return static_cast<QGraphicsRectItem*>(p);
            }
        }
    }
    return nullptr;
}

QGraphicsRectItem* TopologyScene::deviceItem(const QString& path) const {
    auto it = devices_.find(path);
    return it == devices_.end() ? nullptr : it->second;
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
    const QColor highlight = QApplication::palette().color(QPalette::Highlight);
    for (auto& [index, chip] : chips_) {
        const bool selected = index >= first && index <= last;
        if (selected) {
            chip->setPen(QPen(highlight, 2.5));
        } else {
            chip->setPen(QPen(chip->brush().color().darker(140), 1));
        }
    }
}

}  // namespace pipewright::gui
