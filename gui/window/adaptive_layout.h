#pragma once

#include <QHash>
#include <QObject>

class QDockWidget;
class QMainWindow;
class QToolBar;

namespace pipewright::gui {

// Keeps the main window readable at any width, and lets it recover:
//  - the toolbar `second` moves to a row of its own when the window is too
//    narrow for it beside the toolbars before it, and back when it is wide
//    again, so that no toolbar hides its controls behind an overflow button;
//  - the side docks keep the widths they were given or the user dragged them
//    to: a narrow window squeezes them, and widening it gives them their
//    width back (QMainWindow alone gives every new pixel to the central
//    widget, leaving the palette squeezed and the inspector clipped).
class AdaptiveLayout : public QObject {
    Q_OBJECT

  public:
    AdaptiveLayout(QMainWindow* window, QToolBar* second);

    // Lays `docks` out at `widths` (pixels) and keeps these widths until the
    // user drags a dock's edge.
    void keepWidths(const QList<QDockWidget*>& docks, const QList<int>& widths);
    // The width `dock` gets back when there is room (pixels).
    [[nodiscard]] int preferredWidth(QDockWidget* dock) const;

  protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

  private:
    void fitToolBars();
    void restoreDocks();
    void rememberDocks();
    [[nodiscard]] QList<QDockWidget*> sideDocks() const;

    QMainWindow* window_;
    QToolBar* second_;
    QHash<QDockWidget*, int> preferred_;
    bool restore_queued_ = false;
    bool fit_queued_ = false;
};

}  // namespace pipewright::gui
