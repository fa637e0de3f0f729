// The cluster edits the topology canvas asks for: add, rename and remove
// nodes, containers and devices. Each is one undoable edit. Also the
// canvas's place in the window: its View menu entries, what a newly opened
// project starts with, and what finding a device selects.
#include <QGraphicsItem>
#include <QInputDialog>
#include <QMenuBar>
#include <QMouseEvent>
#include <QStatusBar>

#include "document/project_document.h"
#include "studio_core/project/topology_edit.h"
#include "topology/topology_canvas.h"
#include "topology/topology_scene.h"
#include "topology/topology_view.h"
#include "window/main_window.h"

namespace pipewright::gui {

void MainWindow::connectTopology() {
    view_->viewport()->installEventFilter(this);
    connect(view_, &TopologyView::removeDeviceRequested, this, &MainWindow::removeTopologyItem);
    connect(view_, &TopologyView::removeContainerRequested, this, &MainWindow::removeTopologyItem);
    connect(view_, &TopologyView::removeNodeRequested, this, &MainWindow::removeTopologyItem);
    connect(view_, &TopologyView::renameRequested, this, [this](const QString& path) {
        bool ok = false;
        const QString name =
            QInputDialog::getText(this, tr("Rename"), tr("New name for %1:").arg(path),
                                  QLineEdit::Normal, path.section(QLatin1Char('/'), -1), &ok);
        if (ok) {
            renameTopologyItem(path, name.trimmed());
        }
    });
    connect(view_, &TopologyView::addDeviceRequested, this,
            [this](const QString& container, const QString& spec) {
                const Project& p = document_->project();
                const auto [n, c] = find_container(p, container.toStdString());
                if (n >= 0) {
                    document_->edit(tr("Add device"), add_device(p, n, c, spec.toStdString()));
                }
            });
    connect(view_, &TopologyView::addContainerRequested, this, [this](const QString& node) {
        const Project& p = document_->project();
        const int n = find_node(p, node.toStdString());
        if (n >= 0) {
            document_->edit(tr("Add container"), add_container(p, n));
        }
    });
    connect(view_, &TopologyView::addNodeRequested, this,
            [this] { document_->edit(tr("Add node"), add_node(document_->project())); });

    // A project opened in place of the last starts fitted to the canvas,
    // with its nodes collapsed when it is too large to read expanded; the
    // rebuild that follows (projectChanged) lays it out.
    connect(document_, &ProjectDocument::projectReplaced, this, [this] {
        scene_->startProject(document_->project());
        view_->fitToView();
    });
    connect(canvas_, &TopologyCanvas::deviceFound, this, [this](const QString& path) {
        inspector_->setSelection({Selection::Kind::device, -1, path});
    });

    // View ▸ Cluster Canvas, after the view's own entries (before the docks).
    for (QAction* top : menuBar()->actions()) {
        if (top->menu() == nullptr || top->text() != tr("&View")) {
            continue;
        }
        QMenu* view_menu = top->menu();
        QMenu* canvas = new QMenu(tr("Cluster &Canvas"), view_menu);
        canvas->addActions(canvas_->menuActions());
        QAction* before = nullptr;
        for (QAction* a : view_menu->actions()) {
            if (a->isSeparator()) {
                before = a;
                break;
            }
        }
        view_menu->insertMenu(before, canvas);
    }
}

bool MainWindow::eventFilter(QObject* watched, QEvent* event) {
    if (watched == view_->viewport() && event->type() == QEvent::MouseButtonPress) {
        canvas_press_ = static_cast<QMouseEvent*>(event)->pos();
    }
    return QMainWindow::eventFilter(watched, event);
}

void MainWindow::selectCanvasBackground() {
    // The canvas reports presses on devices and containers itself; a press
    // on a node's own box (its frame or title) arrives as background.
    for (QGraphicsItem* item = view_->itemAt(canvas_press_); item != nullptr;
         item = item->parentItem()) {
        if (item->data(kKindKey).toInt() == static_cast<int>(TopologyItemKind::node)) {
            inspector_->setSelection({Selection::Kind::node, -1, item->data(kRefKey).toString()});
            return;
        }
    }
    inspector_->setSelection({});
}

bool MainWindow::renameTopologyItem(const QString& path, const QString& name) {
    const Project& p = document_->project();
    const std::string where = path.toStdString();
    const std::string to = name.toStdString();
    EditResult result;
    QString what;
    QString new_path = path.section(QLatin1Char('/'), 0, -2);
    new_path += (new_path.isEmpty() ? QString() : QStringLiteral("/")) + name;
    switch (path.count(QLatin1Char('/'))) {
        case 0:
            result = rename_node(p, find_node(p, where), to);
            what = tr("Rename node");
            break;
        case 1: {
            const auto [n, c] = find_container(p, where);
            result = rename_container(p, n, c, to);
            what = tr("Rename container");
            break;
        }
        default:
            result = rename_device(p, where, to);
            what = tr("Rename device");
            break;
    }
    if (!result.project) {
        refuse(QString::fromStdString(result.refusal));
        return false;
    }
    document_->edit(what, *result.project);
    if (inspector_->selection().path == path) {
        Selection moved = inspector_->selection();
        moved.path = new_path;
        inspector_->setSelection(moved);
    }
    statusBar()->showMessage(tr("%1 %2 → %3").arg(what, path, new_path), 4000);
    return true;
}

void MainWindow::removeTopologyItem(const QString& path) {
    const Project& p = document_->project();
    const std::string where = path.toStdString();
    switch (path.count(QLatin1Char('/'))) {
        case 0:
            document_->edit(tr("Remove node %1").arg(path), remove_node(p, find_node(p, where)));
            break;
        case 1: {
            const auto [n, c] = find_container(p, where);
            document_->edit(tr("Remove container %1").arg(path), remove_container(p, n, c));
            break;
        }
        default:
            document_->edit(tr("Remove device %1").arg(path), remove_device(p, where));
            break;
    }
    if (inspector_->selection().path.startsWith(path)) {
        inspector_->setSelection({});
    }
}

}  // namespace pipewright::gui
