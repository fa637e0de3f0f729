#include "window/message_bar.h"

#include <QEnterEvent>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QStyle>
#include <QToolButton>
#include <algorithm>

#include "style/colors.h"

namespace pipewright::gui {

MessageBar::MessageBar(QWidget* parent) : QFrame(parent) {
    setObjectName(QStringLiteral("messageBar"));
    setFrameShape(QFrame::StyledPanel);
    setAutoFillBackground(true);
    label_ = new QLabel(this);
    label_->setObjectName(QStringLiteral("messageText"));
    label_->setWordWrap(true);
    label_->setTextFormat(Qt::PlainText);
    label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    close_ = new QToolButton(this);
    close_->setAutoRaise(true);
    close_->setIcon(style()->standardIcon(QStyle::SP_TitleBarCloseButton));
    close_->setToolTip(tr("Close (Esc)"));
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(8, 4, 4, 4);
    layout->addWidget(label_, 1);
    layout->addWidget(close_, 0, Qt::AlignTop);
    connect(close_, &QToolButton::clicked, this, &QWidget::hide);
    hide_timer_.setSingleShot(true);
    connect(&hide_timer_, &QTimer::timeout, this, &QWidget::hide);
    hide();
}

int MessageBar::visibleMsFor(const QString& text) {
    // About 15 characters a second, as people read an unexpected message.
    return std::clamp(static_cast<int>(text.size()) * 1000 / 15, 8000, 60000);
}

void MessageBar::showMessage(const QString& text, Kind kind) {
    kind_ = kind;
    label_->setText(text);
    applyColors();
    show();
    if (kind == Kind::result) {
        hide_timer_.stop();
    } else {
        hide_timer_.start(visibleMsFor(text));
    }
}

QString MessageBar::text() const {
    return label_->text();
}

void MessageBar::keyPressEvent(QKeyEvent* event) {
    // Also when the text has the focus (selected to copy): the key comes here.
    if (event->key() == Qt::Key_Escape) {
        hide();
        event->accept();
        return;
    }
    QFrame::keyPressEvent(event);
}

void MessageBar::enterEvent(QEnterEvent* event) {
    hide_timer_.stop();
    QFrame::enterEvent(event);
}

void MessageBar::leaveEvent(QEvent* event) {
    if (isVisible() && kind_ != Kind::result) {
        hide_timer_.start(4000);
    }
    QFrame::leaveEvent(event);
}

void MessageBar::changeEvent(QEvent* event) {
    // setPalette in applyColors sends one too: only follow the application's.
    if (event->type() == QEvent::PaletteChange && !applying_colors_) {
        applyColors();
    }
    QFrame::changeEvent(event);
}

void MessageBar::applyColors() {
    QPalette pal = palette();
    const QColor base = pal.color(QPalette::Base);
    const QColor tint = kind_ == Kind::problem ? warning_color() : pal.color(QPalette::Highlight);
    // A wash of the tint over the base colour, readable in light and dark themes.
    const auto mix = [&](int a, int b) { return (a * 82 + b * 18) / 100; };
    pal.setColor(QPalette::Window,
                 QColor(mix(base.red(), tint.red()), mix(base.green(), tint.green()),
                        mix(base.blue(), tint.blue())));
    pal.setColor(QPalette::WindowText, pal.color(QPalette::Text));
    applying_colors_ = true;
    setPalette(pal);
    applying_colors_ = false;
}

}  // namespace pipewright::gui
