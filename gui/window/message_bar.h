#pragma once

#include <QFrame>
#include <QTimer>

class QLabel;
class QToolButton;

namespace pipewright::gui {

// A strip above the views for what the user must read whole: why an edit
// was refused, why a file did not open, what a drop did that they may not
// expect. The status bar clips long text and shares its line with the
// summary; this wraps, stays until it is read (longer for longer text, never
// while the pointer rests on it) and closes with its button or Escape.
class MessageBar : public QFrame {
    Q_OBJECT

  public:
    // A result stays until the user closes it (Esc or ×): the outcome of
    // an action they asked for, such as Auto-plan's, must not vanish when
    // the re-simulation it starts finishes.
    enum class Kind { problem, note, result };

    explicit MessageBar(QWidget* parent = nullptr);

    void showMessage(const QString& text, Kind kind);
    [[nodiscard]] QString text() const;
    [[nodiscard]] Kind kind() const { return kind_; }
    // How long a message of `text` stays: reading time, at least 8 s.
    [[nodiscard]] static int visibleMsFor(const QString& text);

  protected:
    void keyPressEvent(QKeyEvent* event) override;
    void enterEvent(QEnterEvent* event) override;
    void leaveEvent(QEvent* event) override;
    void changeEvent(QEvent* event) override;

  private:
    void applyColors();

    QLabel* label_;
    QToolButton* close_;
    QTimer hide_timer_;
    Kind kind_ = Kind::note;
    bool applying_colors_ = false;
};

}  // namespace pipewright::gui
