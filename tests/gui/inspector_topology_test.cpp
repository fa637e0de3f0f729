// The inspector's node and container pages: what they hold, renames and link
// figures edited in place and undone.
#include <gtest/gtest.h>
#include <QDoubleSpinBox>
#include <QGraphicsRectItem>
#include <QLabel>
#include <QLineEdit>
#include <QSignalSpy>
#include <QTest>

#include "document/project_document.h"
#include "studio_core/project/project_edit.h"
#include "studio_core/project/topology_summary.h"
#include "topology/topology_scene.h"
#include "topology/topology_view.h"
#include "window/main_window.h"

namespace pipewright::gui {
namespace {

class InspectorTopologyTest : public ::testing::Test {
  protected:
    void SetUp() override {
        window.resize(1280, 800);
        ASSERT_TRUE(window.openFile(
            QStringLiteral(PIPEWRIGHT_ASSETS_DIR "/examples/resnet50-2gpu-pipelined.json")));
        window.show();
        QCoreApplication::processEvents();
        before = window.document()->project();
    }

    template <typename T>
    T* find(const QString& name) {
        T* widget = window.inspector()->findChild<T*>(name);
        EXPECT_NE(widget, nullptr) << name.toStdString();
        return widget;
    }

    // The spin box showing `suffix` on the inspector row labelled `label`.
    QDoubleSpinBox* link_spin(const QString& label, const QString& suffix) {
        for (QLabel* l : window.inspector()->findChildren<QLabel*>()) {
            if (l->text() != label || l->buddy() == nullptr) {
                continue;
            }
            for (auto* spin : l->buddy()->findChildren<QDoubleSpinBox*>()) {
                if (spin->suffix() == suffix) {
                    return spin;
                }
            }
        }
        ADD_FAILURE() << "no " << suffix.toStdString() << " box on " << label.toStdString();
        return nullptr;
    }

    QString page_text() {
        QStringList texts;
        for (QLabel* l : window.inspector()->findChildren<QLabel*>()) {
            texts << l->text();
        }
        return texts.join(QLatin1Char('\n'));
    }

    MainWindow window;
    Project before;
};

TEST(TopologySummary, CountsDevicesSpecsMemoryAndPlacedLayers) {
    Project p;
    p.topology.nodes = {{"n0",
                         {{"c0", {{"g0", "A100-80GB", {}}, {"g1", "A100-80GB", {}}}},
                          {"c1", {{"g2", "A100-40GB", {}}, {"g3", "no-such-card", {}}}}}},
                        {"n1", {{"c0", {{"g0", "A100-80GB", {std::nullopt, 10.0}}}}}}};
    for (const char* name : {"a", "b", "c"}) {
        LayerSpec layer;
        layer.name = name;
        layer.type = "relu";
        p.model.layers.push_back(layer);
    }
    p.placement = {{"n0/c0/g1", {"a", "b"}}, {"n1/c0/g0", {"c"}}};

    const TopologySummary node0 = summarize_topology(p, 0);
    EXPECT_EQ(node0.containers, 2);
    EXPECT_EQ(node0.devices, 4);
    EXPECT_EQ(node0.specs.at("A100-80GB"), 2);
    EXPECT_EQ(node0.specs.at("A100-40GB"), 1);
    EXPECT_EQ(node0.unknown_specs, 1);
    EXPECT_EQ(node0.layers, 2);
    const std::int64_t gib = 1024LL * 1024 * 1024;
    EXPECT_GT(node0.memory_bytes, 150 * gib);

    const TopologySummary c1 = summarize_topology(p, 0, 1);
    EXPECT_EQ(c1.containers, 1);
    EXPECT_EQ(c1.devices, 2);
    EXPECT_EQ(c1.layers, 0);
    // An override counts as what it says (a 10 GiB slice).
    const TopologySummary node1 = summarize_topology(p, 1);
    EXPECT_EQ(node1.memory_bytes, 10 * gib);
    EXPECT_EQ(node1.layers, 1);
    EXPECT_EQ(summarize_topology(p, 7).devices, 0);
}

TEST_F(InspectorTopologyTest, AContainerPageRenamesAndEditsTheLinkBetweenItsDevices) {
    window.inspector()->setSelection({Selection::Kind::container, -1, QStringLiteral("node0/c0")});
    const QString text = page_text();
    EXPECT_TRUE(text.contains(QStringLiteral("2 × A100-40GB"))) << text.toStdString();
    EXPECT_TRUE(text.contains(QStringLiteral("78.0 GiB"))) << text.toStdString();

    QDoubleSpinBox* bandwidth =
        link_spin(QStringLiteral("Between its devices"), QStringLiteral(" GB/s"));
    ASSERT_NE(bandwidth, nullptr);
    EXPECT_DOUBLE_EQ(bandwidth->value(), before.topology.links.intra_container.bandwidth_GBps);
    bandwidth->setValue(12.5);
    EXPECT_DOUBLE_EQ(window.document()->project().topology.links.intra_container.bandwidth_GBps,
                     12.5);
    link_spin(QStringLiteral("Between its devices"), QStringLiteral(" µs"))->setValue(42);
    EXPECT_DOUBLE_EQ(window.document()->project().topology.links.intra_container.latency_us, 42);
    // Figures read as the file holds them, not rounded to one decimal.
    bandwidth = link_spin(QStringLiteral("Between its devices"), QStringLiteral(" GB/s"));
    bandwidth->setValue(1.25);
    EXPECT_DOUBLE_EQ(window.document()->project().topology.links.intra_container.bandwidth_GBps,
                     1.25);
    bandwidth = link_spin(QStringLiteral("Between its devices"), QStringLiteral(" GB/s"));
    EXPECT_EQ(bandwidth->text(), QStringLiteral("1.25 GB/s"));
    QDoubleSpinBox* latency =
        link_spin(QStringLiteral("Between its devices"), QStringLiteral(" µs"));
    latency->setValue(1.75);
    latency = link_spin(QStringLiteral("Between its devices"), QStringLiteral(" µs"));
    EXPECT_EQ(latency->text(), QStringLiteral("1.75 µs"));
    latency->setValue(42);
    latency = link_spin(QStringLiteral("Between its devices"), QStringLiteral(" µs"));
    EXPECT_EQ(latency->text(), QStringLiteral("42 µs"));

    auto* name = find<QLineEdit>(QStringLiteral("containerName"));
    name->setText(QStringLiteral("box"));
    emit name->editingFinished();
    EXPECT_EQ(window.document()->project().placement[0].device, "node0/box/gpu0");
    EXPECT_EQ(window.inspector()->selection().path, QStringLiteral("node0/box"));
    // The page follows the rename: its heading names the new path.
    EXPECT_TRUE(page_text().contains(QStringLiteral("node0/box")));

    QUndoStack* stack = window.document()->undoStack();
    while (stack->canUndo()) {
        stack->undo();
    }
    EXPECT_EQ(window.document()->project(), before);
}

TEST_F(InspectorTopologyTest, ANodePageRefusesADuplicateNameAndEditsItsLinks) {
    window.document()->edit(QStringLiteral("add node"), add_node(window.document()->project()));
    const std::string other = window.document()->project().topology.nodes[1].name;
    window.inspector()->setSelection({Selection::Kind::node, -1, QStringLiteral("node0")});
    EXPECT_TRUE(page_text().contains(QStringLiteral("Node node0")));

    QSignalSpy refused(window.inspector(), &Inspector::refused);
    auto* name = find<QLineEdit>(QStringLiteral("nodeName"));
    name->setText(QString::fromStdString(other));
    emit name->editingFinished();
    EXPECT_EQ(refused.count(), 1);
    EXPECT_EQ(window.document()->project().topology.nodes[0].name, "node0");
    EXPECT_EQ(name->text(), QStringLiteral("node0"));

    QDoubleSpinBox* between_nodes =
        link_spin(QStringLiteral("To other nodes"), QStringLiteral(" GB/s"));
    ASSERT_NE(between_nodes, nullptr);
    between_nodes->setValue(3);
    EXPECT_DOUBLE_EQ(window.document()->project().topology.links.inter_node.bandwidth_GBps, 3);
    link_spin(QStringLiteral("Between its containers"), QStringLiteral(" GB/s"))->setValue(7);
    EXPECT_DOUBLE_EQ(window.document()->project().topology.links.intra_node.bandwidth_GBps, 7);

    name = find<QLineEdit>(QStringLiteral("nodeName"));
    name->setText(QStringLiteral("rack1"));
    emit name->editingFinished();
    EXPECT_EQ(window.document()->project().placement[1].device, "rack1/c0/gpu1");
    EXPECT_EQ(window.inspector()->selection(),
              (Selection{Selection::Kind::node, -1, QStringLiteral("rack1")}));
}

TEST_F(InspectorTopologyTest, ClickingANodesFrameOnTheCanvasSelectsTheNode) {
    QGraphicsItem* node = nullptr;
    for (QGraphicsItem* item : window.topologyScene()->items()) {
        if (item->data(kKindKey).toInt() == static_cast<int>(TopologyItemKind::node)) {
            node = item;
        }
    }
    ASSERT_NE(node, nullptr);
    TopologyView* view = window.topologyView();
    const QRectF frame = node->sceneBoundingRect();
    // Inside the node's frame, right of its title and above its containers.
    const QPoint at = view->mapFromScene(frame.topRight() + QPointF(-4, 4));
    QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, at);
    EXPECT_EQ(window.inspector()->selection(),
              (Selection{Selection::Kind::node, -1, QStringLiteral("node0")}));

    // Clicking off every box clears the selection again.
    const QPoint off = view->mapFromScene(frame.bottomRight()) + QPoint(6, 6);
    if (view->viewport()->rect().contains(off) && view->itemAt(off) == nullptr) {
        QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, off);
        EXPECT_EQ(window.inspector()->selection().kind, Selection::Kind::none);
    }
}

}  // namespace
}  // namespace pipewright::gui
