#include "window/adaptive_layout.h"

#include <QDockWidget>
#include <QEvent>
#include <QMainWindow>
#include <QTimer>
#include <QToolBar>

namespace pipewright::gui {

AdaptiveLayout::AdaptiveLayout(QMainWindow* window, QToolBar* second)
    : QObject(window), window_(window), second_(second) {
    window_->installEventFilter(this);
    // The second bar grows and shrinks as a project shows or hides its
    // settings (Experts, Context, the attention kernel): fit the rows then
    // too, or what it gained goes behind its overflow button.
    second_->installEventFilter(this);
}

void AdaptiveLayout::keepWidths(const QList<QDockWidget*>& docks, const QList<int>& widths) {
    for (int i = 0; i < docks.size() && i < widths.size(); ++i) {
        preferred_[docks[i]] = widths[i];
    }
    window_->resizeDocks(docks, widths, Qt::Horizontal);
}

int AdaptiveLayout::preferredWidth(QDockWidget* dock) const {
    return preferred_.value(dock, 0);
}

QList<QDockWidget*> AdaptiveLayout::sideDocks() const {
    QList<QDockWidget*> docks;
    for (QDockWidget* dock : window_->findChildren<QDockWidget*>()) {
        const Qt::DockWidgetArea area = window_->dockWidgetArea(dock);
        if (!dock->isFloating() && dock->isVisible() &&
            (area == Qt::LeftDockWidgetArea || area == Qt::RightDockWidgetArea)) {
            docks << dock;
        }
    }
    return docks;
}

void AdaptiveLayout::rememberDocks() {
    for (QDockWidget* dock : sideDocks()) {
        preferred_[dock] = dock->width();
    }
}

bool AdaptiveLayout::eventFilter(QObject* watched, QEvent* event) {
    if (watched == second_ && event->type() == QEvent::LayoutRequest && !fit_queued_) {
        fit_queued_ = true;
        QTimer::singleShot(0, this, [this] {
            fit_queued_ = false;
            fitToolBars();
        });
    }
    if (watched == window_) {
        switch (event->type()) {
            case QEvent::Resize:
                fitToolBars();
                // After QMainWindow has laid the docks out for the new size.
                if (!restore_queued_) {
                    restore_queued_ = true;
                    QTimer::singleShot(0, this, &AdaptiveLayout::restoreDocks);
                }
                break;
            case QEvent::MouseButtonRelease:
                // The window itself receives the mouse only on its separators:
                // this ends a drag of a dock's edge, the user's new width.
                rememberDocks();
                break;
            default:
                break;
        }
    }
    return QObject::eventFilter(watched, event);
}

void AdaptiveLayout::fitToolBars() {
    // The toolbars before `second` on its row, and what they need beside it.
    int row = second_->sizeHint().width();
    for (QToolBar* bar : window_->findChildren<QToolBar*>()) {
        // isHidden, not isVisible: before the window is first shown too.
        if (bar != second_ && !bar->isHidden() &&
            window_->toolBarArea(bar) == window_->toolBarArea(second_)) {
            row += bar->sizeHint().width();
        }
    }
    const bool wraps = window_->toolBarBreak(second_);
    // A few pixels of slack so that the row does not flip back and forth at
    // the boundary (the handles and margins of the toolbar area).
    constexpr int kSlack = 24;
    if (!wraps && row + kSlack > window_->width()) {
        window_->insertToolBarBreak(second_);
    } else if (wraps && row + kSlack <= window_->width()) {
        window_->removeToolBarBreak(second_);
    }
}

void AdaptiveLayout::restoreDocks() {
    restore_queued_ = false;
    QList<QDockWidget*> docks;
    QList<int> widths;
    bool squeezed = false;
    for (QDockWidget* dock : sideDocks()) {
        const int want = preferred_.value(dock, 0);
        if (want <= 0) {
            continue;
        }
        docks << dock;
        widths << want;
        squeezed = squeezed || dock->width() < want - 1;
    }
    // QMainWindow takes the width back from the central widget, as far as
    // its minimum allows; a window still too narrow stays squeezed.
    if (squeezed) {
        window_->resizeDocks(docks, widths, Qt::Horizontal);
    }
}

}  // namespace pipewright::gui
