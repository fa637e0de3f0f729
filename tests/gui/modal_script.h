#pragma once

#include <QApplication>
#include <QFileDialog>
#include <QLineEdit>
#include <QMessageBox>
#include <QTimer>
#include <functional>
#include <vector>

namespace pipewright::gui {

// Answers the modal dialogs a test's action opens, one step per dialog, in
// order: a step sees the dialog on top and returns true once it has dealt
// with it. Offscreen, QFileDialog and QMessageBox are Qt's own widgets, so a
// step can fill them in and accept them.
class ModalScript {
  public:
    using Step = std::function<bool(QWidget*)>;

    explicit ModalScript(std::vector<Step> steps) : steps_(std::move(steps)) {
        QObject::connect(&timer_, &QTimer::timeout, [this] {
            QWidget* modal = QApplication::activeModalWidget();
            if (modal != nullptr && next_ < steps_.size() && steps_[next_](modal)) {
                ++next_;
            }
        });
        timer_.start(20);
    }
    [[nodiscard]] std::size_t done() const { return next_; }

    // Types `name` into a save dialog (none: keeps what it offers) and accepts
    // it; `*suggested` gets the name the dialog offered.
    static Step save_as(const QString& name, QString* suggested = nullptr) {
        return [name, suggested](QWidget* modal) {
            auto* dialog = qobject_cast<QFileDialog*>(modal);
            if (dialog == nullptr) {
                return false;
            }
            if (suggested != nullptr) {
                *suggested = dialog->selectedFiles().value(0);
            }
            // Typed, as a user would: selectFile leaves the line edit alone
            // while it has the focus.
            auto* edit = dialog->findChild<QLineEdit*>(QStringLiteral("fileNameEdit"));
            if (!name.isEmpty() && edit != nullptr) {
                edit->setText(name);
            }
            static_cast<QDialog*>(dialog)->accept();  // QFileDialog::accept is protected
            return true;
        };
    }
    // Notes a message box's text and presses its default (or first) button.
    static Step message(QString* text) {
        return [text](QWidget* modal) {
            auto* box = qobject_cast<QMessageBox*>(modal);
            if (box == nullptr) {
                return false;
            }
            *text = box->text();
            box->accept();
            return true;
        };
    }

  private:
    std::vector<Step> steps_;
    std::size_t next_ = 0;
    QTimer timer_;
};

}  // namespace pipewright::gui
