#include "topology/topology_canvas.h"

#include <QAction>
#include <QGridLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QToolBar>
#include <QVBoxLayout>
#include <algorithm>
#include <array>
#include <functional>

#include "studio_core/canvas/device_search.h"
#include "style/colors.h"
#include "topology/topology_scene.h"
#include "topology/topology_view.h"

namespace pipewright::gui {

namespace {

// Enter in the find field goes to the next match, Shift+Enter to the
// previous one, Escape ends the search.
class FindKeys : public QObject {
  public:
    FindKeys(QObject* parent, std::function<void(bool)> step, std::function<void()> escape)
        : QObject(parent), step_(std::move(step)), escape_(std::move(escape)) {}

  protected:
    bool eventFilter(QObject* watched, QEvent* event) override {
        if (event->type() == QEvent::KeyPress) {
            const auto* key = static_cast<QKeyEvent*>(event);
            if (key->key() == Qt::Key_Return || key->key() == Qt::Key_Enter) {
                step_(!(key->modifiers() & Qt::ShiftModifier));
                return true;
            }
            if (key->key() == Qt::Key_Escape) {
                escape_();
                return true;
            }
        }
        return QObject::eventFilter(watched, event);
    }

  private:
    std::function<void(bool)> step_;
    std::function<void()> escape_;
};

}  // namespace

void TopologyCanvas::placeToolbars() {
    const std::array<QToolBar*, 3> bars = {bar_, nodes_bar_, find_bar_};
    for (QToolBar* bar : bars) {
        bars_->removeWidget(bar);
    }
    // Rows of groups, a new row where the next group would not fit.
    std::array<int, 3> rows{};
    std::array<int, 3> columns{};
    int row = 0;
    int column = 0;
    int used = 0;
    for (std::size_t i = 0; i < bars.size(); ++i) {
        const int wanted = bars[i]->sizeHint().width();
        if (column > 0 && width() > 0 && used + wanted > width()) {
            ++row;
            column = 0;
            used = 0;
        }
        rows[i] = row;
        columns[i] = column++;
        used += wanted;
    }
    // The last group of each row spans the rest of it: a grid column is as
    // wide as its widest group in any row, and the find box wrapped below
    // the zoom tools widened them until Expand went behind a » at 1280 px.
    for (std::size_t i = 0; i < bars.size(); ++i) {
        const bool last = i + 1 == bars.size() || rows[i + 1] != rows[i];
        bars_->addWidget(bars[i], rows[i], columns[i], 1,
                         last ? static_cast<int>(bars.size()) - columns[i] : 1);
    }
    for (int c = 0; c < static_cast<int>(bars.size()); ++c) {
        bars_->setColumnStretch(c, 0);
    }
    // The last group of the first row takes the rest of its width.
    bars_->setColumnStretch(static_cast<int>(bars.size()) - 1, 1);
}

void TopologyCanvas::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    placeToolbars();
}

TopologyCanvas::TopologyCanvas(TopologyScene* scene, QWidget* parent)
    : QWidget(parent), scene_(scene) {
    setObjectName(QStringLiteral("topologyCanvas"));
    view_ = new TopologyView(scene, this);
    bar_ = new QToolBar(tr("Cluster canvas"), this);
    nodes_bar_ = new QToolBar(tr("Nodes"), this);
    find_bar_ = new QToolBar(tr("Find a device"), this);
    bar_->setObjectName(QStringLiteral("canvasTools"));
    nodes_bar_->setObjectName(QStringLiteral("canvasNodeTools"));
    find_bar_->setObjectName(QStringLiteral("canvasFindTools"));
    for (QToolBar* bar : {bar_, nodes_bar_, find_bar_}) {
        bar->setToolButtonStyle(Qt::ToolButtonTextOnly);
        bar->setIconSize(QSize(12, 12));
    }

    // `icon` is what the toolbar shows, `text` what the View menu shows.
    const auto make = [this](const QString& text, const QString& icon, const QString& tip,
                             const QList<QKeySequence>& keys) {
        auto* action = new QAction(text, this);
        action->setIconText(icon);
        action->setShortcuts(keys);
        // Only while the canvas has the focus: Ctrl+F and the zoom keys
        // may mean something else elsewhere in the window.
        action->setShortcutContext(Qt::WidgetWithChildrenShortcut);
        action->setToolTip(keys.isEmpty()
                               ? tip
                               : QStringLiteral("%1 (%2)").arg(
                                     tip, keys.front().toString(QKeySequence::NativeText)));
        addAction(action);
        return action;
    };
    zoom_out_ = make(tr("Zoom &Out"), QStringLiteral("−"), tr("Zoom out"), {QKeySequence::ZoomOut});
    zoom_in_ = make(tr("Zoom &In"), QStringLiteral("+"), tr("Zoom in (or Ctrl+wheel)"),
                    {QKeySequence::ZoomIn, QKeySequence(Qt::CTRL | Qt::Key_Equal)});
    fit_ = make(tr("&Fit Cluster to View"), tr("Fit"), tr("Show the whole cluster"),
                {QKeySequence(Qt::CTRL | Qt::Key_0)});
    collapse_all_ = make(tr("&Collapse All Nodes"), tr("Collapse"),
                         tr("Draw every node as one box with its devices' load and memory"), {});
    expand_all_ =
        make(tr("&Expand All Nodes"), tr("Expand"), tr("Draw every device with its layers"), {});
    find_action_ = make(tr("Fin&d Device…"), tr("Find"), tr("Find a device by name, path or rank"),
                        {QKeySequence::Find});
    // The window has no other Find: Ctrl+F reaches the canvas's box from the
    // model table or the timeline too (it did nothing there).
    find_action_->setShortcutContext(Qt::WindowShortcut);
    previous_ = make(tr("Find &Previous Device"), QStringLiteral("‹"), tr("Previous match"),
                     {QKeySequence::FindPrevious});
    next_ = make(tr("Find &Next Device"), QStringLiteral("›"), tr("Next match"),
                 {QKeySequence::FindNext});

    connect(zoom_in_, &QAction::triggered, view_, &TopologyView::zoomIn);
    connect(zoom_out_, &QAction::triggered, view_, &TopologyView::zoomOut);
    connect(fit_, &QAction::triggered, view_, &TopologyView::fitToView);
    connect(collapse_all_, &QAction::triggered, this,
            [this] { scene_->setAllNodesCollapsed(true); });
    connect(expand_all_, &QAction::triggered, this,
            [this] { scene_->setAllNodesCollapsed(false); });
    connect(find_action_, &QAction::triggered, this, [this] {
        find_->setFocus(Qt::ShortcutFocusReason);
        find_->selectAll();
    });
    connect(next_, &QAction::triggered, this, &TopologyCanvas::findNext);
    connect(previous_, &QAction::triggered, this, &TopologyCanvas::findPrevious);
    connect(view_, &TopologyView::findRequested, find_action_, &QAction::trigger);

    zoom_label_ = new QLabel(this);
    zoom_label_->setObjectName(QStringLiteral("canvasZoom"));
    zoom_label_->setToolTip(
        tr("Zoom. Below the size where names can be read, devices show a load bar (blue) over "
           "a memory bar (green, red when over)"));
    find_ = new QLineEdit(this);
    find_->setObjectName(QStringLiteral("canvasFind"));
    find_->setPlaceholderText(tr("Find device…"));
    find_->setToolTip(
        tr("A device name, part of its path (node3/, gpu5) or its pipeline rank (12); Enter "
           "shows the next match, Shift+Enter the previous"));
    find_->setClearButtonEnabled(true);
    find_->setMinimumWidth(90);
    find_->installEventFilter(new FindKeys(
        this,
        [this](bool forward) {
            if (find_->text() != searched_ || matches_.isEmpty()) {
                find(find_->text());
            } else if (forward) {
                findNext();
            } else {
                findPrevious();
            }
        },
        [this] {
            find_->clear();
            clearFind();
            view_->setFocus();
        }));
    connect(find_, &QLineEdit::textChanged, this, &TopologyCanvas::updateMatches);

    bar_->addAction(zoom_out_);
    bar_->addAction(zoom_in_);
    bar_->addWidget(zoom_label_);
    bar_->addAction(fit_);
    nodes_bar_->addAction(collapse_all_);
    nodes_bar_->addAction(expand_all_);
    find_bar_->addWidget(find_);
    find_bar_->addAction(previous_);
    find_bar_->addAction(next_);

    status_ = new QLabel(this);
    status_->setObjectName(QStringLiteral("canvasFindStatus"));
    status_->setContentsMargins(6, 0, 6, 2);
    status_->setWordWrap(true);
    status_->hide();

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    bars_ = new QGridLayout;
    bars_->setContentsMargins(0, 0, 0, 0);
    bars_->setSpacing(0);
    layout->addLayout(bars_);
    placeToolbars();
    // Narrower than its widest tool group, a canvas shows nothing useful.
    setMinimumWidth(std::max(
        {bar_->sizeHint().width(), nodes_bar_->sizeHint().width(), find_bar_->sizeHint().width()}));
    layout->addWidget(status_);
    layout->addWidget(view_, 1);

    connect(view_, &TopologyView::zoomChanged, this, &TopologyCanvas::showZoom);
    connect(scene_, &TopologyScene::rebuilt, this, [this] {
        collapse_all_->setEnabled(scene_->collapsedCount() < scene_->nodeCount());
        expand_all_->setEnabled(scene_->collapsedCount() > 0);
        // An edit may have renamed or removed what was found.
        if (!searched_.isEmpty()) {
            const QString current = current_ >= 0 ? matches_.value(current_) : QString();
            const auto found = find_devices(scene_->project(), searched_.toStdString());
            QStringList now;
            for (const std::string& path : found.paths) {
                now << QString::fromStdString(path);
            }
            if (now != matches_) {
                matches_ = now;
                current_ = static_cast<int>(matches_.indexOf(current));
                if (current_ < 0) {
                    scene_->setHighlightedDevice({});
                }
            }
        }
    });
    showZoom(view_->zoom());
}

QList<QAction*> TopologyCanvas::menuActions() const {
    return {zoom_in_, zoom_out_, fit_, collapse_all_, expand_all_, find_action_, next_, previous_};
}

void TopologyCanvas::updateMatches(const QString& text) {
    if (text.trimmed().isEmpty()) {
        clearFind();
        return;
    }
    const auto found = find_devices(scene_->project(), text.toStdString());
    searched_ = text;
    current_ = -1;
    matches_.clear();
    for (const std::string& path : found.paths) {
        matches_ << QString::fromStdString(path);
    }
    if (!found.error.empty()) {
        setStatus(QString::fromStdString(found.error), true);
    } else if (matches_.isEmpty()) {
        setStatus(tr("No device matches “%1”").arg(text.trimmed()), true);
    } else {
        setStatus(matches_.size() == 1
                      ? tr("1 device matches · Enter shows it")
                      : tr("%1 devices match · Enter shows the first").arg(matches_.size()),
                  false);
    }
}

int TopologyCanvas::find(const QString& text) {
    if (find_->text() != text) {
        find_->setText(text);  // updateMatches through textChanged
    } else {
        updateMatches(text);
    }
    if (!matches_.isEmpty()) {
        showMatch(0);
    }
    return static_cast<int>(matches_.size());
}

void TopologyCanvas::findNext() {
    if (!matches_.isEmpty()) {
        showMatch((current_ + 1) % static_cast<int>(matches_.size()));
    }
}

void TopologyCanvas::findPrevious() {
    if (!matches_.isEmpty()) {
        const int n = static_cast<int>(matches_.size());
        showMatch(current_ <= 0 ? n - 1 : current_ - 1);
    }
}

void TopologyCanvas::showMatch(int index) {
    current_ = index;
    const QString path = matches_.value(index);
    if (!view_->revealDevice(path)) {
        setStatus(tr("%1 is no longer in the cluster").arg(path), true);
        return;
    }
    setStatus(tr("%1 of %2: %3").arg(index + 1).arg(matches_.size()).arg(path), false);
    emit deviceFound(path);
}

void TopologyCanvas::clearFind() {
    matches_.clear();
    searched_.clear();
    current_ = -1;
    scene_->setHighlightedDevice({});
    setStatus({}, false);
}

QString TopologyCanvas::findStatus() const {
    return status_->isHidden() ? QString() : status_->text();
}

void TopologyCanvas::setStatus(const QString& text, bool problem) {
    status_->setText(text);
    status_->setStyleSheet(problem ? QStringLiteral("color: %1").arg(warning_color().name())
                                   : QString());
    status_->setVisible(!text.isEmpty());
}

void TopologyCanvas::showZoom(double zoom) {
    zoom_label_->setText(QStringLiteral(" %1 % ").arg(qRound(zoom * 100)));
}

}  // namespace pipewright::gui
