// Edit: undo and redo, and the model table's layers: removed, moved,
// inserted from the palette, placed on a device, and selected.
#include <QAction>
#include <QItemSelectionModel>
#include <QKeySequence>
#include <QMenuBar>
#include <QStatusBar>
#include <QTableView>
#include <QUndoStack>
#include <algorithm>

#include "document/project_document.h"
#include "document/undo_keys.h"
#include "editor/model_table_model.h"
#include "studio_core/project/layer_blocks.h"
#include "studio_core/project/project_edit.h"
#include "window/main_window.h"
#include "window/message_bar.h"

namespace pipewright::gui {

void MainWindow::buildEditMenu() {
    QMenu* edit = menuBar()->addMenu(tr("&Edit"));
    QAction* undo = document_->undoStack()->createUndoAction(this, tr("&Undo"));
    undo->setShortcut(QKeySequence::Undo);
    QAction* redo = document_->undoStack()->createRedoAction(this, tr("&Redo"));
    redo->setShortcuts(redo_keys());
    edit->addAction(undo);
    edit->addAction(redo);
    edit->addSeparator();
    auto selected_range = [this](int* first, int* last) {
        const QModelIndexList rows = table_->selectionModel()->selectedRows();
        if (rows.isEmpty()) {
            return false;
        }
        *first = rows.front().row();
        *last = *first;
        for (const QModelIndex& i : rows) {
            *first = std::min(*first, i.row());
            *last = std::max(*last, i.row());
        }
        return true;
    };
    QAction* remove = edit->addAction(tr("Remove Layers"), this, [this, selected_range] {
        int first = 0;
        int last = 0;
        if (selected_range(&first, &last)) {
            document_->edit(tr("Remove layers"), remove_layers(document_->project(), first, last));
        }
    });
    remove->setShortcut(QKeySequence::Delete);
    remove->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    table_->addAction(remove);
    QAction* up = edit->addAction(tr("Move Layer Up"), this, [this, selected_range] {
        int first = 0;
        int last = 0;
        if (selected_range(&first, &last) && first > 0) {
            document_->edit(tr("Move layer"), move_layer(document_->project(), first - 1, last));
            selectLayers(first - 1, last - 1);
        }
    });
    up->setShortcut(QKeySequence(Qt::ALT | Qt::Key_Up));
    QAction* down = edit->addAction(tr("Move Layer Down"), this, [this, selected_range] {
        int first = 0;
        int last = 0;
        if (selected_range(&first, &last) && last + 1 < model_->rowCount()) {
            document_->edit(tr("Move layer"), move_layer(document_->project(), last + 1, first));
            selectLayers(first + 1, last + 1);
        }
    });
    down->setShortcut(QKeySequence(Qt::ALT | Qt::Key_Down));
}

void MainWindow::selectLayers(int first, int last) {
    if (first < 0 || first >= model_->rowCount()) {
        return;
    }
    last = std::min(last, model_->rowCount() - 1);
    table_->selectionModel()->select(
        QItemSelection(model_->index(first, 0),
                       model_->index(last, ModelTableModel::ColumnCount - 1)),
        QItemSelectionModel::ClearAndSelect);
    table_->scrollTo(model_->index(first, 0));
    inspector_->setSelection({Selection::Kind::layer, first, {}});
}

bool MainWindow::placeLayers(int first, int last, const QString& device) {
    const EditResult result = place_layers(document_->project(), first, last, device.toStdString());
    if (!result.project) {
        refuse(QString::fromStdString(result.refusal));
        return false;
    }
    const QString what =
        first == last
            ? tr("Place %1 on %2")
                  .arg(QString::fromStdString(
                           document_->project().model.layers[static_cast<std::size_t>(first)].name),
                       device)
            : tr("Place %n layer(s) on %1", nullptr, last - first + 1).arg(device);
    document_->edit(what, *result.project);
    statusBar()->showMessage(what, 4000);
    if (!result.note.empty()) {
        message_bar_->showMessage(what + QStringLiteral(": ") + QString::fromStdString(result.note),
                                  MessageBar::Kind::note);
    }
    return true;
}

bool MainWindow::insertPaletteEntry(const QString& entry, int row, const QString& device) {
    Project p = document_->project();
    const auto devices = layer_devices(p);
    int at = row < 0 ? static_cast<int>(p.model.layers.size()) : row;
    if (!device.isEmpty()) {
        // On a device: after its last layer, so its stage stays contiguous.
        for (std::size_t i = 0; i < devices.size(); ++i) {
            if (devices[i] == device.toStdString()) {
                at = static_cast<int>(i) + 1;
            }
        }
    }
    const auto figures = analyze_model_layers(p);
    Shape input = p.model.input.shape;
    if (at > 0 && at - 1 < static_cast<int>(figures.size()) &&
        figures[static_cast<std::size_t>(at - 1)].analysis) {
        input = figures[static_cast<std::size_t>(at - 1)].analysis->output_shape;
    }
    const auto layers = make_palette_entry(entry.toStdString(), input);
    if (layers.empty()) {
        return false;
    }
    for (std::size_t i = 0; i < layers.size(); ++i) {
        p = insert_layer(p, at + static_cast<int>(i), layers[i]);
    }
    if (!device.isEmpty()) {
        EditResult placed =
            place_layers(p, at, at + static_cast<int>(layers.size()) - 1, device.toStdString());
        if (!placed.project) {
            refuse(QString::fromStdString(placed.refusal));
            return false;
        }
        p = *placed.project;
    }
    document_->edit(tr("Add %1").arg(entry.section(QLatin1Char(':'), 1)), p);
    selectLayers(at, at + static_cast<int>(layers.size()) - 1);
    return true;
}

}  // namespace pipewright::gui
