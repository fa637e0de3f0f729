#pragma once

#include <QStringList>
#include <QWidget>

class QAction;
class QGridLayout;
class QLabel;
class QLineEdit;
class QToolBar;

namespace pipewright::gui {

class TopologyScene;
class TopologyView;

// The cluster canvas as the window shows it: a toolbar (zoom, fit, collapse
// and expand every node, find a device) over the TopologyView.
//
// The toolbar's actions carry the canvas's shortcuts (Ctrl++, Ctrl+-,
// Ctrl+0, Ctrl+F), active while the canvas has the focus; the main window
// also lists them under View ▸ Cluster Canvas, where Help ▸ Keyboard and
// Mouse finds them.
class TopologyCanvas : public QWidget {
    Q_OBJECT

  public:
    explicit TopologyCanvas(TopologyScene* scene, QWidget* parent = nullptr);

    [[nodiscard]] TopologyView* view() const { return view_; }
    [[nodiscard]] QLineEdit* findField() const { return find_; }
    // In the order the View menu lists them.
    [[nodiscard]] QList<QAction*> menuActions() const;

    // Looks `text` up (a device name or path, part of one, or a rank: see
    // device_search.h) and shows the first match; the line under the
    // toolbar says how many there are. Returns how many.
    int find(const QString& text);
    // The next or previous match, wrapping around; nothing when none.
    void findNext();
    void findPrevious();
    [[nodiscard]] const QStringList& matches() const { return matches_; }
    [[nodiscard]] int currentMatch() const { return current_; }
    // What the line under the toolbar says ("2 of 8: node1/c0/gpu3", "No
    // device matches …"); empty when it is hidden.
    [[nodiscard]] QString findStatus() const;

  signals:
    // A match was brought into view (the window selects it).
    void deviceFound(const QString& path);

  protected:
    // The tool groups flow onto more rows when they do not fit on one, so
    // that no tool hides behind a toolbar's overflow button.
    void resizeEvent(QResizeEvent* event) override;

  private:
    void placeToolbars();
    void showMatch(int index);
    void updateMatches(const QString& text);
    void clearFind();
    void showZoom(double zoom);
    void setStatus(const QString& text, bool problem);

    TopologyScene* scene_;
    TopologyView* view_;
    QToolBar* bar_;        // zoom
    QToolBar* nodes_bar_;  // collapse and expand
    QToolBar* find_bar_;
    QGridLayout* bars_;
    QLineEdit* find_;
    QLabel* zoom_label_;
    QLabel* status_;
    QAction* zoom_in_;
    QAction* zoom_out_;
    QAction* fit_;
    QAction* collapse_all_;
    QAction* expand_all_;
    QAction* find_action_;
    QAction* next_;
    QAction* previous_;
    QStringList matches_;
    QString searched_;  // the text matches_ came from
    int current_ = -1;
};

}  // namespace pipewright::gui
