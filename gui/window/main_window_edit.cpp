// Edit: undo and redo, and removing and moving the model table's layers.
#include <QAction>
#include <QItemSelectionModel>
#include <QKeySequence>
#include <QMenuBar>
#include <QTableView>
#include <QUndoStack>
#include <algorithm>

#include "document/project_document.h"
#include "document/undo_keys.h"
#include "editor/model_table_model.h"
#include "studio_core/project_edit.h"
#include "window/main_window.h"

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

}  // namespace pipewright::gui
